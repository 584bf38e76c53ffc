"""The recommendation planner: workload + live offers -> ranked, explained plans. Pure: no Django.

For every eligible (instance type, region, pricing model, node count) it runs the estimator on the
topology that offer gives, rejects what does not fit or breaks a constraint (saying why), and
ranks the rest by the objective.

Rooms: ``rules`` (limits, billing, terms, scope, ranking: each defined once), ``offers`` (Offer,
Constraints, OfferBook), ``steps`` (hardware profiles and one type per kind of step), ``walk``
(the reference walk: one offer at its price), ``fastpaths`` (shortcuts that must agree with it),
``search`` (the planning run, ``plan``), ``explain`` (reasons, warnings, rejection examples,
advice), ``results`` (Plan, Rejections, PlanResult).
"""

from ..inputs import OBJECTIVES, PRICING_MODELS
from .explain import SPOT_ADVICE_SCAN
from .offers import Constraints, Offer, OfferBook, _hardware_key
from .results import Plan, PlanResult, Rejections
from .rules import (
    DEFAULT_MAX_GPUS,
    FIT_HEADROOM,
    HEADROOM_WARN_PCT,
    MIN_INTER_NODE_RDMA_GBPS,
    MIN_RAM_TO_GPU_MEMORY,
    MIN_TERM_USE,
    MIN_VCPUS_PER_GPU,
    NODE_COUNTS,
    PLAIN_NETWORK_GBPS,
    SPOT_CHECKPOINT_MINUTES,
    TERM_HOURS,
    _constraint_rejection,
)
from .search import _Planner, plan
from .walk import _walk

__all__ = [
    "DEFAULT_MAX_GPUS",
    "FIT_HEADROOM",
    "HEADROOM_WARN_PCT",
    "MIN_INTER_NODE_RDMA_GBPS",
    "MIN_RAM_TO_GPU_MEMORY",
    "MIN_TERM_USE",
    "MIN_VCPUS_PER_GPU",
    "NODE_COUNTS",
    "OBJECTIVES",
    "PLAIN_NETWORK_GBPS",
    "PRICING_MODELS",
    "SPOT_ADVICE_SCAN",
    "SPOT_CHECKPOINT_MINUTES",
    "TERM_HOURS",
    "Constraints",
    "Offer",
    "OfferBook",
    "Plan",
    "PlanResult",
    "Rejections",
    "_Planner",
    "_constraint_rejection",
    "_hardware_key",
    "_walk",
    "plan",
]
