"""The estimator's ranges: quantiles of its cross-validated errors on bench/calibration.csv.

Run from the repository root after any change to the calibration rows or the model:

    python bench/uncertainty.py            # rewrite sizing/uncertainty.json, print the coverage
    python bench/uncertainty.py --check    # exit 1 when sizing/uncertainty.json is stale

Each calibration row is predicted as bench/sizing_accuracy.py predicts it out of source: with
the estimator's fitted constants fitted again without the row's source (leave_one_source_out).
The row's multiplier is what that estimate would have had to be multiplied by: measured /
estimate. Memory rows give memory multipliers; throughput and decode rows give time multipliers
(estimated / measured tokens/s), GPU-hours rows directly.

The table holds the 5th and 95th percentile of those multipliers per group (framework and
method, method, every row of the kind) with enough rows; sizing/uncertainty.py picks the
narrowest group a workload falls in. The coverage printed is measured leave-one-source-out too:
each source's rows, with their out-of-source estimates, are checked against a table built
without that source's rows (the other rows keep the multipliers computed once, whose constants
were fitted with that source among the others: refitting for every pair of sources would take
minutes for a small difference).
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import hashlib
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.sizing_accuracy import (  # noqa: E402
    CSV_PATH,
    leave_one_source_out,
    load_gpus,
    measured,
    method_of,
)
from sizing.presets import load_presets  # noqa: E402
from sizing.uncertainty import TABLE_PATH, spread_from  # noqa: E402

COMMAND = "python bench/uncertainty.py"
# The range: from the 5th to the 95th percentile of the comparable rows. Checked on sources left
# out, the 10th-90th percentile held only 63% of the memory rows (a few sources, erring in
# different directions); the 5th-95th holds 78% of memory and 86% of time rows: about the four
# in five a reader takes such a range to mean.
QUANTILES = (0.05, 0.95)
# A group gets its own entry only with at least this many rows from at least this many sources;
# a group from one source alone would measure that source's spread, not a new user's.
MIN_ROWS = 6
MIN_SOURCES = 2
# The kind of figure each calibration kind says something about.
FIGURE = {"memory": "memory", "throughput": "time", "decode": "time", "gpu_hours": "time"}


def framework_of(row: dict) -> str:
    return row.get("framework") or "hf"


def multipliers(rows: list[dict], loso: list[float]) -> list[float]:
    """Each row's multiplier of the estimate (memory or time) from its out-of-source error."""
    out = []
    for row, error in zip(rows, loso, strict=True):
        value = 1 / (1 + error)  # measured / estimate, in the row's own measure
        out.append(1 / value if row["kind"] in ("throughput", "decode") else value)
    return out


def _quantiles(values: list[float]) -> tuple[float, float]:
    if len(values) == 1:
        return values[0], values[0]
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return tuple(cuts[round(q * 100) - 1] for q in QUANTILES)  # type: ignore[return-value]


def _entry(members: list[tuple[dict, float]]) -> dict:
    values = [value for _, value in members]
    low, high = _quantiles(values)
    return {
        "low": round(low, 3),
        "high": round(high, 3),
        "median": round(statistics.median(values), 3),
        "rows": len(values),
        "sources": len({row["source_key"] for row, _ in members}),
    }


def build_kinds(rows: list[dict], values: list[float]) -> dict:
    """The table's ``kinds``: per figure, the groups with enough rows and sources."""
    kinds: dict = {}
    for kind in ("memory", "time"):
        members = [
            (row, v) for row, v in zip(rows, values, strict=True) if FIGURE[row["kind"]] == kind
        ]
        if not members:
            continue
        groups: dict = {"all": _entry(members), "method": {}, "framework_method": {}}
        by: dict[tuple[str, str], list] = {}
        for row, v in members:
            by.setdefault(("method", method_of(row)), []).append((row, v))
            key = f"{framework_of(row)}/{method_of(row)}"
            by.setdefault(("framework_method", key), []).append((row, v))
        for (level, key), group in sorted(by.items()):
            sources = {row["source_key"] for row, _ in group}
            if len(group) >= MIN_ROWS and len(sources) >= MIN_SOURCES:
                groups[level][key] = _entry(group)
        kinds[kind] = groups
    return kinds


def inside(row: dict, value: float, kinds: dict) -> bool:
    """Whether a row's multiplier (its measured figure over its out-of-source estimate) lies in
    the range a table gives its group."""
    s = spread_from(kinds, FIGURE[row["kind"]], framework_of(row), method_of(row))
    return s.low - 1e-9 <= value <= s.high + 1e-9


def coverage(rows: list[dict], values: list[float]) -> dict:
    """Share of rows inside their range when the table is built without the row's source, each
    row judged on its out-of-source estimate (the shipped constants saw its source)."""
    hits: dict[str, list[bool]] = {}
    for source in sorted({row["source_key"] for row in rows}):
        keep = [i for i, row in enumerate(rows) if row["source_key"] != source]
        kinds = build_kinds([rows[i] for i in keep], [values[i] for i in keep])
        for i, row in enumerate(rows):
            if row["source_key"] == source:
                hit = inside(row, values[i], kinds)
                hits.setdefault(FIGURE[row["kind"]], []).append(hit)
                hits.setdefault(f"{FIGURE[row['kind']]}/{method_of(row)}", []).append(hit)
    return {key: round(sum(v) / len(v), 3) for key, v in sorted(hits.items())}


def load(csv_path: Path = CSV_PATH) -> tuple[list[dict], list[float], str]:
    """The calibration rows, their out-of-source errors and the file's sha256."""
    raw = Path(csv_path).read_bytes()
    with open(csv_path, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    meas = [measured(row) for row in rows]
    loso, _ = leave_one_source_out(rows, load_presets(), load_gpus(), meas)
    return rows, loso, hashlib.sha256(raw).hexdigest()


def build(csv_path: Path = CSV_PATH, today: dt.date | None = None) -> dict:
    """The whole table, as sizing/uncertainty.json holds it."""
    rows, loso, digest = load(csv_path)
    values = multipliers(rows, loso)
    return {
        "generated": (today or dt.date.today()).isoformat(),
        "command": COMMAND,
        "calibration_csv_sha256": digest,
        "calibration_rows": len(rows),
        "sources": len({row["source_key"] for row in rows}),
        "quantiles": list(QUANTILES),
        "min_rows": MIN_ROWS,
        "min_sources": MIN_SOURCES,
        "kinds": build_kinds(rows, values),
        "coverage_leave_one_source_out": coverage(rows, values),
    }


def same(a: dict, b: dict) -> bool:
    """Tables equal but for the date they were made."""
    return {**a, "generated": None} == {**b, "generated": None}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the committed table is stale")
    args = ap.parse_args(argv)
    fresh = build()
    if args.check:
        committed = json.loads(TABLE_PATH.read_text(encoding="utf-8"))
        if not same(committed, fresh):
            print(f"{TABLE_PATH.relative_to(ROOT)} is stale: run {COMMAND}")
            return 1
        print(f"{TABLE_PATH.relative_to(ROOT)} is current")
        return 0
    TABLE_PATH.write_text(json.dumps(fresh, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {TABLE_PATH.relative_to(ROOT)}")
    for kind, groups in fresh["kinds"].items():
        print(f"\n{kind:28} {'rows':>4} {'src':>3} {'low':>6} {'median':>6} {'high':>6}")
        listed = [("all", groups["all"])]
        for level in ("method", "framework_method"):
            listed += [(f"{level}:{k}", e) for k, e in groups[level].items()]
        for name, e in listed:
            print(
                f"{name:28} {e['rows']:4d} {e['sources']:3d} {e['low']:6.3f} "
                f"{e['median']:6.3f} {e['high']:6.3f}"
            )
    print(f"\nCoverage, leave-one-source-out (nominal {QUANTILES[1] - QUANTILES[0]:.0%}):")
    for key, share in fresh["coverage_leave_one_source_out"].items():
        print(f"  {key:24} {share:6.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
