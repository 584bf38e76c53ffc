"""What the plan page keeps of the planner's candidates (web.plans, pure Python)."""

from __future__ import annotations

from web.plans import MAX_HOURS, plausible


def _plan(rank, hours, total, *, nodes=1, instance="p5", per_hour=None, gpu="h100-sxm"):
    return {
        "rank": rank,
        "provider": "aws",
        "instance_type": instance,
        "gpu": gpu,
        "region": "us-east-1",
        "pricing_model": "on_demand",
        "nodes": nodes,
        "est_hours": hours,
        "est_total_usd": total,
        "usd_per_hour": per_hour if per_hour is not None else (total / hours if hours else 1.0),
    }


def test_plans_far_slower_than_the_fastest_and_dearer_than_a_faster_one_are_left_out():
    shown = plausible(
        [
            _plan(1, 10, 100),
            _plan(2, 99, 50, instance="a", gpu="a100"),
            _plan(3, 101, 60, instance="b", gpu="l4"),  # slower and dearer than #2
        ]
    )
    assert [p["rank"] for p in shown.plans] == [1, 2]
    assert shown.too_slow == 1 and shown.time_limit_hours == 100


def test_the_cheapest_plan_is_shown_however_slow():
    # The review's case: 8x B200 takes 0.34 h, the cheapest total (H800, $7.55) 6.2 h: ranked by
    # total cost, the first plan must be on the page, and so must the second cheapest.
    plans = [
        _plan(1, 6.2, 7.55, instance="h800", gpu="h800"),
        _plan(2, 5.0, 10.95, instance="a6000", gpu="rtx-a6000"),
        _plan(3, 0.9, 13.96, instance="8x 6000 Ada", gpu="rtx-6000-ada"),
        _plan(4, 0.34, 40.0, instance="8x B200", gpu="b200"),
        _plan(5, 30.0, 12.0, instance="l4", gpu="l4"),  # slower and dearer than #2: left out
    ]
    shown = plausible(plans, objective="cheapest")
    assert [p["rank"] for p in shown.plans] == [1, 2, 3, 4]
    assert shown.too_slow == 1


def test_the_first_plan_is_kept_even_when_dominated():
    # Ranked by price per hour, the first plan may be slower and dearer in total than another.
    plans = [
        _plan(1, 100, 100, per_hour=1.0, instance="a", gpu="l4"),
        _plan(2, 1, 50, per_hour=50.0, instance="b", gpu="b200"),
    ]
    assert [p["rank"] for p in plausible(plans, objective="cheapest_hourly").plans] == [1, 2]
    plans = [_plan(1, 100, 100, per_hour=1.0), _plan(2, 1, 50, per_hour=50.0, nodes=2)]
    assert plausible(plans).plans[0]["rank"] == 1


def test_nothing_over_a_year_unless_it_is_cheaper():
    slow = _plan(2, MAX_HOURS + 1, 150, instance="a", gpu="l4")
    assert [p["rank"] for p in plausible([_plan(1, 2000, 100), slow]).plans] == [1]
    cheap = _plan(2, MAX_HOURS + 1, 50, instance="a", gpu="l4")
    assert [p["rank"] for p in plausible([_plan(1, 2000, 100), cheap]).plans] == [1, 2]


def test_node_counts_of_one_offer_that_add_nothing_are_left_out():
    # One offer at 1, 2, 4 and 8 nodes for the same total: only the fastest adds anything, but
    # the first ranked (the cheapest per hour of equal totals) stays, as the page's top plan.
    plans = [_plan(i + 1, 80 / 2**i, 1000, nodes=2**i) for i in range(4)]
    shown = plausible(plans)
    assert [p["nodes"] for p in shown.plans] == [1, 8]
    assert shown.repeats == 2
    plans = [_plan(i + 1, 80 / 2**i, 1000, nodes=2**i) for i in range(4)][::-1]
    shown = plausible([{**p, "rank": i + 1} for i, p in enumerate(plans)])
    assert [p["nodes"] for p in shown.plans] == [8]
    assert shown.repeats == 3


def test_a_faster_but_dearer_count_is_kept():
    shown = plausible([_plan(1, 80, 1000), _plan(2, 40, 1400, nodes=2)])
    assert [p["nodes"] for p in shown.plans] == [1, 2]


def test_without_run_length_the_cheapest_count_per_hour_is_kept():
    plans = [_plan(1, None, None, per_hour=4.0), _plan(2, None, None, nodes=2, per_hour=8.0)]
    shown = plausible(plans)
    assert [p["nodes"] for p in shown.plans] == [1]


def test_sizes_of_one_offer_in_different_instance_types_that_add_nothing_are_left_out():
    # RunPod-style "1x B200", "2x B200", "4x B200", "8x B200": one GPU in one region at one
    # pricing model, four instance types, the same total: only the fastest adds anything (beside
    # the first ranked, kept as the top plan).
    plans = [
        _plan(i + 1, 1000 / 2**i, 6923.51, instance=f"{2**i}x B200", gpu="b200") for i in range(4)
    ]
    shown = plausible(plans)
    assert [p["instance_type"] for p in shown.plans] == ["1x B200", "8x B200"]
    assert shown.repeats == 2
    # Another GPU of the same provider and region is another offer.
    shown = plausible([*plans, _plan(5, 200, 6923.51, instance="1x H100", gpu="h100-sxm")])
    assert [p["instance_type"] for p in shown.plans] == ["1x B200", "8x B200", "1x H100"]


def test_ranked_by_price_per_hour_the_smaller_size_is_kept():
    plans = [
        _plan(i + 1, 1000 / 2**i, 6923.51, instance=f"{2**i}x B200", gpu="b200") for i in range(2)
    ]
    shown = plausible(plans, objective="cheapest_hourly")
    assert [p["instance_type"] for p in shown.plans] == ["1x B200", "2x B200"]
