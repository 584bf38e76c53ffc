"""What a planning run returns: ranked plans, rejections counted by reason, advice."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..estimator import Estimate
from ..messages import Message
from .offers import Offer
from .rules import _rank_key


@dataclass
class Plan:
    """A ranked answer: where to run and what it costs, with reasons and warnings."""

    offer: Offer
    nodes: int
    gpu_count: float
    sharding: str | None
    estimate: Estimate
    usd_per_hour: float
    usd_per_gpu_hour: float
    est_hours: float | None
    est_total_usd: float | None
    memory_per_gpu_gib: float
    headroom_pct: float
    host_check: dict[str, Any]
    reasons: list[Message] = field(default_factory=list)
    warnings: list[Message] = field(default_factory=list)
    other_regions: list[str] = field(default_factory=list)
    rank: int = 0

    def sort_key(self, objective: str) -> tuple[float, ...]:
        return _rank_key(
            self.usd_per_hour, self.est_total_usd, self.est_hours, self.estimate, self.gpu_count,
            objective,
        )  # fmt: skip


@dataclass
class Rejections:
    """Counts by reason (a RejectionCode), with a few examples each (coded messages)."""

    max_examples: int = 3
    by_reason: dict[str, dict[str, Any]] = field(default_factory=dict)

    def add(self, reason: str, items: Sequence[Offer], example: Callable[[Offer], Message]) -> None:
        """Count ``items`` under ``reason``, writing examples for the first few only."""
        entry = self.by_reason.get(reason)
        if entry is None:
            entry = self.by_reason[reason] = {"count": 0, "examples": []}
        entry["count"] += len(items)
        room = self.max_examples - len(entry["examples"])
        if room > 0:  # most calls: none (a request rejects thousands of groups)
            entry["examples"].extend(example(item) for item in items[:room])

    def room(self, reason: str) -> bool:
        """Whether the next offer rejected for ``reason`` gets an example written."""
        return len(self.by_reason.get(reason, {}).get("examples", ())) < self.max_examples

    def count(self, reason: str) -> int:
        return int(self.by_reason.get(reason, {}).get("count", 0))


@dataclass
class PlanResult:
    plans: list[Plan]
    rejected: Rejections
    advice: list[Message]
    considered: int
