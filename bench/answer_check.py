"""Checks of recommendations answered while providers were being refreshed (bench/refresh_load.py).

Pure functions, no Django: tests/bench/test_answer_check.py exercises them.

The catalog moves through versions 0, 1, 2, ...: version 0 is the catalog before the first
refresh, version k the catalog right after refresh k (of one provider) committed. Each refresh
stamps the prices it writes with one ``observed_at`` of its own, so a plan's
``price_observed_at`` names the refresh its price came from. An answer is consistent when one
version v explains all of it:
- each plan of a refreshed provider carries that provider's price as of v (its observed_at and
  its USD per node-hour);
- ``catalog_as_of`` is the newest observed_at of the catalog at v;
- v had been committed before the answer came back.
No price may be served past its shelf life: a plan not flagged stale must have been fresh when
the request was sent, and a stale (flagged) plan must be a list price, never a volatile one
(spot, marketplace), which the default ranking leaves out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

# (instance type, region, pricing model) of one provider's price.
PriceKey = tuple[str, str, str]


@dataclass(frozen=True)
class Refresh:
    """One provider's prices as stored right after refresh ``index`` committed (index 0: the
    provider before any refresh)."""

    index: int
    provider: str
    committed_at: datetime
    prices: Mapping[PriceKey, tuple[float, datetime]]  # usd per node-hour, observed_at


@dataclass
class History:
    """Every refresh of the run, in commit order, and the catalog's newest observed_at before
    the first (``as_of_before``)."""

    as_of_before: datetime | None
    refreshes: list[Refresh] = field(default_factory=list)

    def add(self, refresh: Refresh) -> None:
        expected = len([r for r in self.refreshes if r.index > 0]) + 1
        if refresh.index not in (0, expected):
            raise ValueError(f"refresh {refresh.index} out of order (expected {expected})")
        self.refreshes.append(refresh)

    @property
    def last(self) -> int:
        return max((r.index for r in self.refreshes), default=0)

    def as_of(self, version: int) -> datetime | None:
        """The catalog's newest observed_at at ``version`` (every refresh stamps a newer one)."""
        stamps = [self.as_of_before] if self.as_of_before else []
        for refresh in self.refreshes:
            if 0 < refresh.index <= version:
                stamps.extend(observed for _, observed in refresh.prices.values())
        return max(stamps, default=None)

    def committed_at(self, version: int) -> datetime | None:
        for refresh in self.refreshes:
            if refresh.index == version and version > 0:
                return refresh.committed_at
        return None

    def price_versions(
        self, provider: str, key: PriceKey
    ) -> list[tuple[int, int, float, datetime]]:
        """(first version, version after the last, usd, observed_at) of each stored state of a
        price of a refreshed provider; [] for a provider never refreshed."""
        states = sorted(
            (r for r in self.refreshes if r.provider == provider), key=lambda r: r.index
        )
        spans = []
        for n, refresh in enumerate(states):
            end = states[n + 1].index if n + 1 < len(states) else self.last + 1
            if key in refresh.prices:
                usd, observed = refresh.prices[key]
                spans.append((refresh.index, end, usd, observed))
        return spans

    def refreshed(self, provider: str) -> bool:
        return any(r.provider == provider for r in self.refreshes)


@dataclass(frozen=True)
class Checked:
    versions: tuple[int, ...]  # the versions that explain the answer (empty: none does)
    problems: tuple[str, ...]
    matched: int = 0  # plans of refreshed providers, checked against the stored versions


def _parse(value: Any) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def answer_check(
    answer: Mapping[str, Any],
    history: History,
    *,
    sent_at: datetime,
    received_at: datetime,
    shelf_life: Callable[[Mapping[str, Any]], tuple[timedelta, bool]],
    tolerance: float = 1e-4,
) -> Checked:
    """What is wrong with one /api/recommend answer (``problems``; none: consistent) and which
    versions explain it. ``shelf_life(plan)`` gives a plan's price shelf life and whether its
    pricing model is volatile (spot, marketplace)."""
    problems: list[str] = []
    candidates = set(range(history.last + 1))
    plans = answer.get("recommendations", [])
    matched = 0
    for plan in plans:
        label = (
            f"{plan['provider']}/{plan['instance_type']}/{plan['region']}/{plan['pricing_model']}"
        )
        observed = _parse(plan["price_observed_at"])
        life, volatile = shelf_life(plan)
        if plan.get("stale"):
            if volatile:
                problems.append(f"{label}: a stale {plan['pricing_model']} price was ranked")
        elif observed is not None and observed + life <= sent_at:
            problems.append(f"{label}: observed {observed.isoformat()}, past its shelf life")
        if not history.refreshed(plan["provider"]):
            continue
        matched += 1
        key = (plan["instance_type"], plan["region"], plan["pricing_model"])
        usd = plan["usd_per_hour"] / max(plan.get("nodes") or 1, 1)
        fits = set()
        for first, end, stored_usd, stored_observed in history.price_versions(
            plan["provider"], key
        ):
            same_price = abs(stored_usd - usd) <= tolerance * max(abs(stored_usd), 1.0)
            if stored_observed == observed and same_price:
                fits.update(range(first, end))
        if not fits:
            problems.append(f"{label}: price {usd} observed {observed} is in no stored version")
        candidates &= fits
    as_of = _parse(answer.get("catalog_as_of"))
    candidates = {v for v in candidates if history.as_of(v) == as_of}
    candidates = {
        v for v in candidates if v == 0 or (history.committed_at(v) or received_at) <= received_at
    }
    newest = max((_parse(p["price_observed_at"]) for p in plans), default=None)
    if newest is not None and as_of is not None and newest > as_of:
        problems.append(f"a price observed {newest} is newer than catalog_as_of {as_of}")
    if not candidates:
        problems.append("no single catalog version explains this answer (mixed versions)")
    return Checked(tuple(sorted(candidates)), tuple(problems), matched)
