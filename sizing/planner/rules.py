"""The planner's rules, each defined once: scope, limits, billing and commitment terms, ranking.

Host rules and warnings follow the practice the seed guides teach (see docs/sizing.md): RAM at
least 2x GPU memory for training, about 4 vCPUs per GPU, NVMe for data, RDMA of at least
100 Gbit/s between nodes, no GeForce in datacenters, no shared GPUs for training, checkpoints
on spot.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from catalog.pricing import PricingModel

from ..inputs import HEADROOM
from ..inputs import OBJECTIVES as OBJECTIVES  # re-exported
from ..inputs import PRICING_MODELS as PRICING_MODELS  # re-exported
from ..messages import RejectionCode as R

if TYPE_CHECKING:
    from ..estimator import Estimate
    from .offers import Constraints, Offer

# The headroom setting (sizing/inputs.py HEADROOM): a plan must leave FIT_HEADROOM of GPU memory
# free to count as fitting; under HEADROOM_WARN_PCT free it fits with a warning.
HEADROOM_WARN_PCT = round(HEADROOM.warn * 100, 9)
FIT_HEADROOM = HEADROOM.fit
# Multi-node over an instance whose network speed is not recorded, and that has no RDMA fabric:
# assume ordinary cloud networking.
PLAIN_NETWORK_GBPS = 10.0
# Multi-node training needs RDMA of at least 100 Gbit/s between nodes (seed guides: "RDMA
# (RoCEv2 or InfiniBand), >= 100 Gbps, ideally 200 Gbps+").
MIN_INTER_NODE_RDMA_GBPS = 100.0
# Host sizing for training (seed guides): RAM >= 2x total GPU memory; CPU:GPU at least 2:1
# physical cores, i.e. about 4 vCPUs per GPU with SMT.
MIN_RAM_TO_GPU_MEMORY = 2.0
MIN_VCPUS_PER_GPU = 4.0
# Hours in one commitment term; a term is only offered when the run uses at least half of it.
TERM_HOURS: dict[str, float] = {
    PricingModel.MONTHLY: 730.0,
    PricingModel.YEARLY: 8760.0,
    PricingModel.RESERVED_1Y: 8760.0,
    PricingModel.RESERVED_3Y: 26280.0,
    # AWS books Capacity Blocks in whole days (CapacityDurationHours in multiples of 24).
    PricingModel.CAPACITY_BLOCK: 24.0,
}
MIN_TERM_USE = 0.5
NODE_COUNTS = (1, 2, 4, 8, 16, 32, 64, 128)
# Without max_gpus, plans stop at 16 nodes of 8: larger on-demand clusters are rarely rentable
# without a reservation, and "fastest" would otherwise always answer "the most GPUs allowed".
DEFAULT_MAX_GPUS = 128
# Spot capacity is reclaimed without notice beyond a short warning (AWS: 2 minutes); a job that
# saves every 30 minutes loses at most half an hour of work per interruption.
SPOT_CHECKPOINT_MINUTES = 30


# --- Billing --------------------------------------------------------------------------------
def _terms_billed(pricing_model: str, hours: float) -> int | None:
    """How many whole commitment terms a run of ``hours`` bills; None for hourly pricing."""
    term = TERM_HOURS.get(pricing_model)
    if term is None:
        return None
    return max(1, math.ceil(hours / term - 1e-9))


def _billed_amount(hourly: float, pricing_model: str, hours: float | None) -> float | None:
    """Total USD for the run at ``hourly`` for all nodes; commitment terms bill whole terms."""
    if hours is None:
        return None
    terms = _terms_billed(pricing_model, hours)
    if terms is None:
        return hourly * hours
    return hourly * TERM_HOURS[pricing_model] * terms


# --- Scope: offers ruled out before any estimate ---------------------------------------------
def _constraint_rejection(offer: Offer, c: Constraints) -> str | None:
    """Reasons an offer in scope is out before any estimate."""
    if c.leaves_out(offer):
        return R.STALE_PRICE
    return _gpu_rejection(offer, c)


def _gpu_rejection(offer: Offer, c: Constraints) -> str | None:
    """Reasons every offer of this GPU is out (the same for a whole offer group)."""
    if c.datacenter_only and not offer.gpu_datacenter_use_allowed:
        return R.CONSUMER_GPU_EXCLUDED
    if c.min_gpu_memory_gb is not None and offer.gpu.memory_gib < c.min_gpu_memory_gb:
        return R.BELOW_MIN_GPU_MEMORY
    return None


# --- Limits ------------------------------------------------------------------------------------
# The reasons the limit checks give, read once: they run for thousands of node counts a
# planning run, and on Python 3.11 each read of an enum member goes through EnumType's
# __getattr__ hook (~70 ns, a dozen plain look-ups).
_OVER_MAX_HOURS = R.OVER_MAX_HOURS
_TERM_NEEDS_RUN_LENGTH = R.TERM_NEEDS_RUN_LENGTH
_RUN_TOO_SHORT_FOR_TERM = R.RUN_TOO_SHORT_FOR_TERM
_OVER_MAX_USD_PER_HOUR = R.OVER_MAX_USD_PER_HOUR
_OVER_MAX_TOTAL_USD = R.OVER_MAX_TOTAL_USD


def _hours_failure(c: Constraints, hours: float | None) -> str | None:
    """The max_hours limit."""
    if c.max_hours is not None and hours is not None and hours > c.max_hours:
        return _OVER_MAX_HOURS
    return None


def _term_failure(c: Constraints, pricing_model: str, hours: float | None) -> str | None:
    """The commitment-term rules: a known run length (unless asked for by name), at least
    MIN_TERM_USE of one term."""
    term = TERM_HOURS.get(pricing_model)
    if term is None:
        return None
    if hours is None and not c.pricing_explicit:
        return _TERM_NEEDS_RUN_LENGTH
    if hours is not None and hours < term * MIN_TERM_USE:
        return _RUN_TOO_SHORT_FOR_TERM
    return None


def _fixed_failure(c: Constraints, pricing_model: str, hours: float | None) -> str | None:
    """The limits the price leaves alone: max_hours and the commitment-term rules."""
    return _hours_failure(c, hours) or _term_failure(c, pricing_model, hours)


def _limit_failure(
    c: Constraints,
    pricing_model: str,
    hours: float | None,
    *,
    hourly: float | None,
    total: float | None,
) -> str | None:
    """Why a plan breaks a limit; ``hourly``/``total`` None when no limit on them is set.
    The order (hourly cap, hours, total, terms) decides which reason a rejection names."""
    if c.max_usd_per_hour is not None and hourly is not None and hourly > c.max_usd_per_hour:
        return _OVER_MAX_USD_PER_HOUR
    if failure := _hours_failure(c, hours):
        return failure
    if c.max_total_usd is not None and total is not None and total > c.max_total_usd:
        return _OVER_MAX_TOTAL_USD
    return _term_failure(c, pricing_model, hours)


# --- Ranking -----------------------------------------------------------------------------------
def _rank_key(
    hourly: float,
    total: float | None,
    hours: float | None,
    est: Estimate,
    gpu_count: float,
    objective: str,
) -> tuple[float, ...]:
    """The figures a plan ranks by, in the same order as Plan.sort_key. Ties go to the plan
    that is better on the figures that matter next: at an equal total cost (cheapest) the
    faster one, then the lower hourly price; at an equal hourly price (cheapest_hourly) the
    lower total, then the faster; at equal hours (fastest) the higher throughput, then the
    lower total and hourly price."""
    total_key = total if total is not None else math.inf
    hours_key = hours if hours is not None else math.inf
    if objective == "fastest":
        return (hours_key, -(est.tokens_per_second or 0.0) * gpu_count, total_key, hourly)
    if objective == "cheapest_hourly":
        return (hourly, total_key, hours_key)
    return (total_key, hours_key, hourly)
