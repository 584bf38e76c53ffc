"""Numbers as a reader writes them, for the estimator's notes, coded messages and the pages."""

from __future__ import annotations

SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def large(number: float) -> str:
    """A count of any size in three significant figures without e-notation: 4.29 x 10^21 from a
    million up (multiplication sign and superscript exponent), grouped below it (12,300)."""
    if abs(number) < 1e6:
        return f"{number:,.3g}" if abs(number) < 1e3 else f"{round(number):,}"
    mantissa, exponent = f"{number:.3g}".split("e")
    return f"{mantissa} \u00d7 10{str(int(exponent)).translate(SUPERSCRIPT)}"
