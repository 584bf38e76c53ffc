"""The planning run: offers grouped by hardware and pricing model, routes and price bisections
shared across a group, lazily merged into the ranked top plans."""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Callable, Sequence
from typing import Any

from catalog.pricing import PricingModel

from ..estimator import GPUSpec, Workload, gpu_hours_floor
from ..frameworks import quantised_gpu_limit
from ..messages import Message, MessageCode
from ..messages import RejectionCode as R
from .explain import (
    Stream,
    _advice,
    _annotate_alternatives,
    _cap_advice,
    _failure_example,
    _make_plan,
    _spot_saving,
    _what_would_fit,
)
from .fastpaths import (
    _best_step,
    _contenders,
    _dominated,
    _nothing_fits,
    _quick_route,
    _Route,
    _route,
    _shape_walk,
)
from .offers import (
    Constraints,
    HardwareKey,
    Offer,
    OfferBook,
    _Group,
    _hardware_key,
    _OffersOf,
)
from .results import Plan, PlanResult, Rejections
from .rules import (
    DEFAULT_MAX_GPUS,
    FIT_HEADROOM,
    TERM_HOURS,
    _billed_amount,
    _constraint_rejection,
    _fixed_failure,
    _gpu_rejection,
    _limit_failure,
)
from .steps import (
    Failure,
    Fits,
    NoFit,
    NoThroughput,
    OverMax,
    Shape,
    _device,
    _EstimateCache,
    _Profile,
)
from .walk import _Candidate, _entry_key, _walk


def plan(
    workload: Workload,
    offers: list[Offer] | OfferBook,
    constraints: Constraints,
    *,
    objective: str = "cheapest",
    limit: int = 10,
    headroom: float = FIT_HEADROOM,
    all_sizes: bool = True,
) -> PlanResult:
    """Rank every eligible (offer, node count) for ``workload``; see the package docstring.

    ``offers`` may hold offers outside the constraints' scope (providers, regions, countries,
    GPUs, pricing models): they are skipped without being counted.

    Work is shared, so a large catalog costs little more than a small one:
    - offers with the same hardware share one profile (estimates per node count);
    - unless a limit depends on the price (max_usd_per_hour, max_total_usd), the surviving node
      counts per profile and pricing model are found once, and a whole group of offers is
      accepted or rejected at once;
    - within a group the ranking key rises with the price, so groups are merged lazily and only
      the offers that can reach the answer are ranked one by one.

    ``all_sizes=False`` lists one size of an offer per total: of the plans of one provider's GPU
    in one region under one pricing model (1x, 2x, 4x, 8x instance types, any node count) whose
    totals are equal to the cent, only the first ranked (``_top``).
    """
    return _Planner(workload, constraints, objective, headroom).run(
        offers if isinstance(offers, OfferBook) else OfferBook(offers), limit, all_sizes
    )


# (pricing model, a factory of fresh ranked streams of one group's offers, a lower bound on the
# keys of that stream or None). A source with a bound is expanded (its route walked, its stream
# made) only when the merge reaches its bound.
Source = tuple[str, Callable[[], Stream], tuple[float, ...] | None]
# Bounds are made this much lower than the floor they come from, against float rounding.
_BOUND_SLACK = 1e-6
# Reasons every rejection is compared with, read once (on Python 3.11 reading an enum member
# costs as much as a dozen plain look-ups, and a run rejects thousands of groups).
_NO_FABRIC = R.NO_INTER_NODE_FABRIC
_DOES_NOT_FIT = R.DOES_NOT_FIT_MEMORY


def _lazy_merge(sources: Sequence[Source]) -> Stream:
    """The items of every source's stream in rising (key, price id) order, as ``heapq.merge`` of them
    all gives them; a source with a bound is not expanded (``make()`` not called) until every
    item below its bound has been given, so a consumer that stops early never pays for it."""
    heap: list[tuple[Any, ...]] = []
    for seq, (_, make, bound) in enumerate(sources):
        if bound is None:
            stream = make()
            item = next(stream, None)
            if item is not None:
                heap.append((item[0], item[1], seq, item, stream))
        else:  # (bound,) sorts before every key it bounds, and -1 before every row
            heap.append((bound, -1, seq, None, make))
    heapq.heapify(heap)
    while heap:
        _, _, seq, item, source = heap[0]
        if item is None:
            source = source()
        else:
            yield item
        item = next(source, None)
        if item is None:
            heapq.heappop(heap)
        else:
            heapq.heapreplace(heap, (item[0], item[1], seq, item, source))


def _size_key(candidate: _Candidate, region: str) -> tuple[object, ...] | None:
    """What sizes of one offer share when their totals are equal: provider, GPU, region, pricing
    model and the total to the cent; None without a total (no run length)."""
    total = candidate.est_total_usd
    if total is None:
        return None
    offer = candidate.offer
    return (offer.provider, offer.gpu.slug, region, offer.pricing_model, round(total, 2))


def _instance_names(offers: Sequence[Offer]) -> list[str]:
    """The instance types (provider/name) among ``offers``, once each; read from the book's
    instance-type table for a group's rows (no Offer built: a group may hold thousands)."""
    if isinstance(offers, _OffersOf):
        columns = offers.book.columns
        kinds = dict.fromkeys(columns.kind[row] for row in offers.rows)
        return [f"{columns.kinds[k][0][0]}/{columns.kinds[k][1][0]}" for k in kinds]
    return list(dict.fromkeys(f"{o.provider}/{o.instance_type}" for o in offers))


class _Planner:
    """One planning run: the constraints, the shared estimates and profiles, the tallies."""

    # Walk a route only when the ranking needs it (``passes``), and estimate a node count a
    # rejection names only when it must (``walk``); off: every route walked, every step
    # estimated, as before (tests/sizing/test_planner_pruned.py compares the two).
    defer = True

    def __init__(self, workload: Workload, c: Constraints, objective: str, headroom: float) -> None:
        self.workload = workload
        self.c = c
        self.objective = objective
        self.cache = _EstimateCache(workload, headroom, c.fit_on)
        self.max_gpus = c.max_gpus or DEFAULT_MAX_GPUS
        # A framework that trains a quantised base on few GPUs only (litgpt: one).
        self.framework_cap = quantised_gpu_limit(workload.framework, workload.method, workload.task)
        self.max_gpus = min(self.max_gpus, self.framework_cap or self.max_gpus)
        self.price_limits = c.max_usd_per_hour is not None or c.max_total_usd is not None
        self.first_only = objective != "fastest" and workload.task == "inference"
        self.profiles: dict[HardwareKey, _Profile] = {}
        self.rejected = Rejections()
        self.considered = 0
        self.cards: dict[int, GPUSpec] = {}  # a 24 GB and an 80 GB GPU among the offers asked about
        self.floors: dict[tuple[int, int], float | None] = {}  # (device id, nodes) -> floor
        self.leads: dict[int, float | None] = {}  # id(profile) -> what passes() found
        self.book = OfferBook([])  # the book being planned over (run)
        # Instances rejected for having no inter-node fabric -> the fewest nodes they need.
        self.no_fabric: dict[str, int] = {}
        # Whether passes() can vouch for a group billed by the hour (the rest of its test).
        self.bounded = (
            self.defer
            and objective in ("cheapest", "cheapest_hourly")
            and workload.is_training
            and bool(workload.tokens)
            and c.max_hours is None
            and not self.first_only
        )
        # Whether stale prices are left out (Constraints.leaves_out): every one, or the
        # volatile ones only.
        self.leaves_stale = c.include_stale is not True
        self.leaves_every_stale = c.include_stale is False
        # Whether a constraint narrows the offers of a group (providers, regions, countries).
        self.narrowed = bool(
            c.providers or c.regions or c.countries or c.mainland_china is not None
        )

    def profile(self, hardware: HardwareKey, offer: Offer) -> _Profile:
        profile = self.profiles.get(hardware)
        if profile is None:
            profile = self.profiles[hardware] = _Profile(
                offer, self.workload, self.c, self.cache, self.max_gpus
            )
        return profile

    def route(self, profile: _Profile, offer: Offer, prune: bool = True) -> _Route:
        # Hourly pricing models (on demand, spot) bill alike, so they share one route; each
        # commitment term has its own.
        billing = offer.pricing_model if offer.pricing_model in TERM_HOURS else "hourly"
        routes = profile.routes if prune else profile.unpruned
        route = routes.get(billing)
        if route is None:
            # Decided on memory and hours alone where they suffice (_quick_route).
            if self.defer:
                route = _quick_route(profile, billing, self.c)
            if route is None:
                route = _route(profile, offer, self.c, self.objective, self.first_only, prune)
            routes[billing] = route
        return route

    def passes(self, profile: _Profile, offer: Offer, prune: bool) -> float | None:
        """When the route of ``offer``'s group (no price limit) is sure to pass a step without
        running the time model: a lower bound on the leading figure of its keys at 1 USD/h;
        else None (the route is walked now).

        Sure to pass: a training run of known length, billed by the hour, no max_hours, on a GPU
        with a throughput figure for the precision (``gpu_hours_floor`` is not None: the same
        figures the time model needs), at the first node count that fits memory (that step
        fits, has hours, and no limit the price leaves alone applies). Its keys' lead is at
        least the GPU-hours floor there per GPU of a node (cheapest: nodes x hours at 1 USD/h,
        and the floor rises with the node count) or that node count (cheapest_hourly).
        """
        if not self.bounded or not prune or offer.pricing_model in TERM_HOURS:
            return None
        key = id(profile)
        if key in self.leads:
            return self.leads[key]
        shape = profile.first_fit()
        lead: float | None = None
        # Nothing fits, or no throughput figure: the route fails, and says why.
        if shape is not None:
            floor = self.floor(profile, shape.nodes)
            if floor is not None and self.objective == "cheapest_hourly":
                lead = float(shape.nodes)
            elif floor is not None:
                lead = floor / profile.gpus_per_node
        self.leads[key] = lead
        return lead

    def floor(self, profile: _Profile, nodes: int) -> float | None:
        """``gpu_hours_floor`` of the profile's device at ``nodes``, once per run."""
        key = (id(profile.device), nodes)
        if key not in self.floors:
            self.floors[key] = gpu_hours_floor(self.workload, profile.device, nodes)
        return self.floors[key]

    def deferred(
        self, profile: _Profile, offer: Offer, entries: Sequence[int], prune: bool
    ) -> Callable[[], Stream]:
        """A factory of the group's streams that walks its route on first use."""
        counted = False

        def make() -> Stream:
            nonlocal counted
            route = self.route(profile, offer, prune=prune)
            if not counted:
                self.considered += route.considered * len(entries)
                counted = True
            assert route.passing, "passes() said this route passes"
            return self.stream(entries, route)

        return make

    def reject(self, reason: str, offers: Sequence[Offer], failure: Failure | None = None) -> None:
        """Count ``offers`` under ``reason``; ``failure`` (reason, step) writes the examples."""

        def example(offer: Offer) -> Message:
            if failure is None:
                return Message(MessageCode.EXAMPLE_OFFER, offer.label_params)
            profile = self.profiles[_hardware_key(offer)]
            named = failure
            if isinstance(failure.step, Shape):  # a node count left unestimated (_quick_route)
                named = Failure(failure.reason, profile.estimated(failure.step))
            return _failure_example(offer, named, profile, self.workload, self.max_gpus)

        self.rejected.add(reason, offers, example)
        if reason == _NO_FABRIC and failure is not None and failure.step is not None:
            for name in _instance_names(offers):
                self.no_fabric.setdefault(name, failure.step.nodes)

    def reject_failure(self, failure: Failure | None, offers: Sequence[Offer]) -> None:
        if failure is None:
            if self.c.allow_multi_node:
                return
            failure = Failure(R.NEEDS_MULTI_NODE, None)
        name = failure.reason
        if name == _DOES_NOT_FIT and not self.c.allow_multi_node:
            name = R.NEEDS_MULTI_NODE
        self.reject(name, offers, failure)

    def eligible(self, group: _Group) -> Sequence[int]:
        """The rows of the group's offers in scope and not ruled out by a constraint (those are
        counted), in the group's order."""
        c, book = self.c, self.book
        first = group.first
        if first.pricing_model not in c.pricing or (c.gpus and first.gpu.slug not in c.gpus):
            return []
        entries = group.entries
        narrowed = self.narrowed
        if narrowed:
            entries = book.in_scope(entries, c)
        # for _what_would_fit: the first card of each size the constraints allow, priced or not
        # (once both sizes have one, no later group changes them)
        if len(self.cards) < 2 and entries:
            size = round(first.gpu.memory_gib)
            if (
                size in (24, 80)
                and first.gpu_count >= 1
                and not (c.datacenter_only and not first.gpu_datacenter_use_allowed)
                and (c.min_gpu_memory_gb is None or first.gpu.memory_gib >= c.min_gpu_memory_gb)
            ):
                self.cards.setdefault(size, first.gpu)
        if self.leaves_stale and narrowed:
            stale = [row for row in entries if book.leaves_out(row, c)]
            if stale:
                self.reject(R.STALE_PRICE, _OffersOf(book, stale))
                entries = [row for row in entries if not book.leaves_out(row, c)]
        elif self.leaves_stale:
            # The whole group is in scope: what leaves_out drops was split off with the book.
            if self.leaves_every_stale:
                left_out, entries = group.stale, group.without_stale
            else:
                left_out, entries = group.stale_volatile, group.without_stale_volatile
            if left_out:
                self.reject(R.STALE_PRICE, _OffersOf(book, left_out))
        if entries:
            reason = _gpu_rejection(first, c)
            if reason:
                self.reject(reason, _OffersOf(book, entries))
                return []
            if self.framework_cap is not None and first.gpu_count > self.framework_cap:
                self.profile(group.hardware, first)  # the example names its GPU count
                failure = Failure(R.FRAMEWORK_GPU_LIMIT, None)
                self.reject(R.FRAMEWORK_GPU_LIMIT, _OffersOf(book, entries), failure)
                return []
        return entries

    def stream(self, entries: Sequence[int], route: _Route) -> Stream:
        """(key, price id, offer, step) for each offer of a group, in rising (key, price id)
        order (equal keys in price-id order, however the book's rows lie); each offer is built
        as the stream reaches it."""
        book = self.book
        usd, price_id = book.columns.usd, book.columns.price_id
        for row in entries:
            offer = book.offer(row)
            key, step = _best_step(usd[row], offer, route, self.objective)
            yield key, price_id[row], offer, step

    def capped(
        self, group: _Group, entries: Sequence[int]
    ) -> tuple[Callable[[], Stream], int, tuple[float, ...]] | None:
        """``walk`` for a group under an hourly cap alone (no max_total_usd) that ``passes``
        vouches for, decided on node counts and prices only: returns its deferred stream
        factory, how many offers pass, and the lower bound of its keys; None when that does not
        apply (``walk`` decides).

        Every fitting node count passes the limits the price leaves alone, so an offer passes
        iff its price x the first fitting node count is within the cap (larger counts cost more
        per hour): the offers past that cut are rejected as over the hourly cap when the walk's
        last node count fits (its estimate only for an example), else for why that count does
        not fit, as ``walk`` rejects them. The node counts themselves are estimated only if the
        ranking reaches the group."""
        c = self.c
        cap = c.max_usd_per_hour
        if cap is None or c.max_total_usd is not None:
            return None
        usd = self.book.columns.usd
        first = group.first
        profile = self.profile(group.hardware, first)
        lead = self.passes(profile, first, prune=usd[entries[0]] > 0)
        if lead is None:
            return None
        # The node counts as memory tells them, gone through once per profile: the first that
        # fits decides the cut, the last (the walk's end) names the rejections.
        walked = _shape_walk(profile)
        assert walked.fitting, "passes() found a fitting node count"
        weighed = walked.fitting[0] + 1
        n = len(entries)
        nodes = profile.shapes[walked.fitting[0]].nodes

        def over(i: int) -> bool:
            return usd[entries[i]] * nodes > cap

        passed = bisect.bisect_left(range(n), True, key=over)
        self.considered += weighed * n  # the node counts that decided it
        if passed < n:
            offers = _OffersOf(self.book, entries[passed:])
            if walked.end is not None:  # the last node count does not fit: why
                self.reject_failure(walked.end, offers)
            else:
                reason = R.OVER_MAX_USD_PER_HOUR  # its price x more nodes is over the cap too
                at = walked.considered - 1
                step = profile.step(at) if self.rejected.room(reason) else None
                self.reject_failure(Failure(reason, step), offers)
        bound = (lead * usd[entries[0]] * (1 - _BOUND_SLACK),)

        def make() -> Stream:
            stream, _, _ = self.walk(group, entries, count=False)
            return stream()

        return make, passed, bound

    def walk(
        self, group: _Group, entries: Sequence[int], *, count: bool = True
    ) -> tuple[Callable[[], Stream], int, int]:
        """A group under price limits (max_usd_per_hour, max_total_usd): which node counts pass
        depends on each offer's price. Rejects the offers nothing passes for, and returns a
        factory of streams of the others (in key order), how many passed and how many node
        counts were weighed.

        Every limit is monotone in the price and the group is in price order, so each step
        passes for a prefix of the offers: a bisection per step finds where, the offers fall
        into segments that share their passing steps, and each offer is ranked only against
        its segment's contenders. Same answers as walking every offer at its price (``_walk``).
        """
        c, objective = self.c, self.objective
        profile = self.profile(group.hardware, group.first)
        pricing_model = group.pricing_model
        n = len(entries)
        usd = self.book.columns.usd
        # The walk with the price left aside: steps that fit, with the node counts weighed up
        # to each, and what a walk that passes nothing ends on.
        ok: list[tuple[Fits, int]] = []
        # The last step of the whole walk: ("ok", step), (reason, step) for one that does not
        # fit, or ("pending", index) for a fitting one left unestimated (see below).
        last: tuple[str, Any] | None = None
        terminal: Failure | None = None
        weighed_all = index = 0
        # Once a step passes every limit the price leaves alone and no larger node count can be
        # cheaper at any price (_dominated), larger counts can never be an offer's best plan:
        # wherever one passes the price limits, that step passes them too and ranks first. The
        # walk goes on through shapes only, to end where a full walk would (rejections report
        # its last step). Not for a free offer: at 0 USD/h every total ties.
        prune = objective in ("cheapest", "cheapest_hourly") and usd[entries[0]] > 0
        best_total: float | None = None  # lowest total at 1 USD/h among such steps
        dominated = False
        while (step := profile.shape(index) if dominated else profile.step(index)) is not None:
            index += 1
            if isinstance(step, OverMax):
                if last is None:
                    terminal = Failure(R.OVER_MAX_GPUS, step)
                break
            if isinstance(step, NoFit):
                weighed_all += 1
                last = (step.reason, step)
                continue
            if dominated:
                last = ("pending", index - 1)
                continue
            weighed_all += 1
            if isinstance(step, NoThroughput):
                terminal = Failure(R.NO_THROUGHPUT_FIGURE, step)
                break
            assert isinstance(step, Fits)
            ok.append((step, weighed_all))
            last = ("ok", step)
            if prune and _fixed_failure(c, pricing_model, step.estimate.est_hours) is None:
                total = _billed_amount(float(step.nodes), pricing_model, step.estimate.est_hours)
                if total is not None:
                    best_total = total if best_total is None else min(best_total, total)
                dominated = _dominated(profile, step, best_total, objective, c)

        def failure_at(step: Fits | NoThroughput, usd: float) -> str | None:
            hourly = usd * step.nodes
            total = _billed_amount(hourly, pricing_model, step.estimate.est_hours)
            return _limit_failure(
                c, pricing_model, step.estimate.est_hours, hourly=hourly, total=total
            )

        # Step i passes for offers [0, cuts[i]).
        def fails_from(step: Fits) -> int:
            """The first offer (in price order) for which ``step`` breaks a limit."""

            def fails(i: int) -> bool:
                return failure_at(step, usd[entries[i]]) is not None

            return bisect.bisect_left(range(n), True, key=fails)

        cuts = [fails_from(step) for step, _ in ok]
        passed = max(cuts, default=0)
        weighed = weighed_all * (n - passed)
        segments: list[tuple[int, int, _Route]] = []
        start = 0
        for end in sorted(set(cuts)):
            if end <= start or start >= passed:
                continue
            steps = [(step, upto) for (step, upto), cut in zip(ok, cuts, strict=True) if cut >= end]
            if self.first_only:  # the walk stops at the first step that passes
                steps = steps[:1]
                weighed += steps[0][1] * (end - start)
            else:
                weighed += weighed_all * (end - start)
            passing = [step for step, _ in steps]
            leads = [_entry_key(1.0, group.first, step, objective)[0] for step in passing]
            segments.append((start, end, _Route(0, passing, _contenders(passing, leads), None)))
            start = end
        if passed < n and count:
            offers = _OffersOf(self.book, entries[passed:])
            if terminal is not None or last is None or last[0] not in ("ok", "pending"):
                self.reject_failure(terminal or (Failure(*last) if last else None), offers)
            else:
                # The last step failed on a limit. Which limit is monotone in the price (the
                # hourly cap last), so the offers fall into at most three runs. A step left
                # unestimated is estimated now: rejections name the same reason as a full walk.
                failed = last[1] if last[0] == "ok" else profile.step(last[1])
                assert isinstance(failed, Fits | NoThroughput)
                begin = passed
                while begin < n:
                    reason = failure_at(failed, usd[entries[begin]])
                    assert reason is not None  # offers past ``passed`` fail every step

                    def other_reason(i: int, reason: str = reason) -> bool:
                        return failure_at(failed, usd[entries[i]]) != reason

                    end = bisect.bisect_left(range(begin, n), True, key=other_reason) + begin
                    self.reject_failure(
                        Failure(reason, failed), offers[begin - passed : end - passed]
                    )
                    begin = end

        def stream() -> Stream:
            for seg_start, seg_end, route in segments:
                yield from self.stream(entries[seg_start:seg_end], route)

        return stream, passed, weighed

    def candidate(self, offer: Offer) -> _Candidate | None:
        """The best plan of one offer, or None when it is out of scope or nothing passes."""
        if not self.c.covers(offer) or _constraint_rejection(offer, self.c):
            return None
        profile = self.profile(_hardware_key(offer), offer)
        if self.price_limits:
            return _walk(profile, offer, self.c, self.objective, self.first_only)[1]
        route = self.route(profile, offer, prune=offer.usd_per_hour > 0)
        if not route.passing:
            return None
        _, step = _best_step(offer.usd_per_hour, offer, route, self.objective)
        return _Candidate(offer, step, self.objective)

    def run(self, book: OfferBook, limit: int, all_sizes: bool = True) -> PlanResult:
        self.book = book
        usd = book.columns.usd
        sources: list[Source] = []
        priced = 0  # offers with at least one passing plan
        term_priced = False
        for group in book.groups:
            entries = self.eligible(group)
            if not entries:
                continue
            first = group.first
            make: Callable[[], Stream]
            bound: tuple[float, ...] | None = None
            if self.price_limits:
                capped = self.capped(group, entries)
                if capped is not None:
                    make, passed, bound = capped
                else:
                    make, passed, counted = self.walk(group, entries)
                    self.considered += counted
            else:
                profile = self.profile(group.hardware, first)
                unfit = _nothing_fits(profile) if self.defer else None
                if unfit is not None:  # every pricing model's route (``route``), straight away
                    self.considered += unfit.considered * len(entries)
                    self.reject_failure(unfit.failure, _OffersOf(book, entries))
                    continue
                # A free offer ties every total, so it needs every node count weighed.
                prune = usd[entries[0]] > 0
                lead = self.passes(profile, first, prune)
                if lead is not None:
                    # It passes, and its keys are at least its cheapest price x the lead: its
                    # route is walked only if the ranking reaches that far.
                    make = self.deferred(profile, first, entries, prune)
                    bound = (lead * usd[entries[0]] * (1 - _BOUND_SLACK),)
                    passed = len(entries)
                else:
                    route = self.route(profile, first, prune=prune)
                    self.considered += route.considered * len(entries)
                    if not route.passing:
                        self.reject_failure(route.failure, _OffersOf(book, entries))
                        continue
                    passed = len(entries)

                    def make(entries: Sequence[int] = entries, route: _Route = route) -> Stream:
                        return self.stream(entries, route)

            if passed:
                sources.append((group.pricing_model, make, bound))
                priced += passed
                term_priced = term_priced or group.pricing_model in TERM_HOURS
        ranked = self._top(sources, limit, all_sizes)
        plans = [self._plan_from(candidate) for candidate in ranked]
        for rank, item in enumerate(plans, start=1):
            item.rank = rank

        def twin(offer: Offer) -> _Candidate | None:
            return self._twin(offer, book)

        _annotate_alternatives(plans, twin)
        spot_sources = [source for source in sources if source[0] == PricingModel.SPOT]
        spot = _spot_saving([_lazy_merge(spot_sources)], twin, self.objective)
        advice = _advice(
            self.workload, self.c, self.rejected, priced, term_priced, spot, self.no_fabric
        )
        advice.extend(
            _what_would_fit(self.workload, self.cards, plans, self.c.fit_on, self.rejected)
        )
        advice.extend(_cap_advice(self.c, self.rejected, plans))
        return PlanResult(
            plans=plans, rejected=self.rejected, advice=advice, considered=self.considered
        )

    def _top(self, sources: list[Source], limit: int, all_sizes: bool = True) -> list[_Candidate]:
        """The best ``limit`` plans, one per machine and price: the same offer at the same price
        in several regions is listed once, with the other regions named. Without ``all_sizes``,
        one size per total too: a plan of the same provider's GPU in a region under a pricing
        model where a plan ranked before it has the same total (to the cent) is left out. Under
        cheapest and fastest that keeps the largest GPU count (at an equal total the faster plan
        ranks first: the same cost, sooner), under cheapest_hourly the smallest (the lower price
        per hour)."""
        kept: dict[tuple[object, ...], _Candidate] = {}
        sized: set[tuple[object, ...]] = set()  # (provider, GPU, region, pricing, total)
        ranked: list[_Candidate] = []
        if limit <= 0:
            return ranked
        for key, _index, offer, step in _lazy_merge(sources):
            if len(ranked) >= limit and key > ranked[-1].key:
                break  # every later offer ranks lower, and none can be a listed plan's twin
            same = (
                offer.provider, offer.instance_type, offer.pricing_model, step.nodes,
                round(offer.usd_per_hour * step.nodes, 6),
            )  # fmt: skip
            first = kept.get(same)
            if first is not None:
                first.other_regions.append(offer.region)
                twin = None if all_sizes else _size_key(first, offer.region)
                if twin is not None:
                    sized.add(twin)
                continue
            if len(ranked) >= limit:
                continue
            candidate = _Candidate(offer, step, self.objective)
            if not all_sizes:
                size = _size_key(candidate, offer.region)
                if size is not None:
                    if size in sized:
                        continue
                    sized.add(size)
            kept[same] = candidate
            ranked.append(candidate)
        return ranked

    def _plan_from(self, candidate: _Candidate) -> Plan:
        step = candidate.step
        device = _device(candidate.offer)
        est = self.cache.explained(device, step.total, step.topology)
        result = _make_plan(
            candidate.offer, self.workload, step.nodes, step.total, step.sharding, est,
            device.memory_gib,
        )  # fmt: skip
        result.other_regions = candidate.other_regions
        return result

    def _twin(self, offer: Offer, book: OfferBook) -> _Candidate | None:
        """The best plan of the same machine in the same region on demand, if it has one."""
        twin = book.find(
            offer.provider, offer.instance_type, offer.region, PricingModel.ON_DEMAND.value
        )
        return None if twin is None else self.candidate(twin)
