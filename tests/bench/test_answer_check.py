"""bench/answer_check.py: an answer given during refreshes must come from one catalog version
and serve no price past its shelf life."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bench.answer_check import History, Refresh, answer_check

T0 = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
OLD = T0 - timedelta(days=3)
KEY_A = ("a-8x", "r1", "on_demand")
KEY_B = ("b-1x", "r2", "spot")


def _history() -> History:
    """Provider a refreshed at versions 1 and 3, provider b at version 2."""
    history = History(as_of_before=T0 - timedelta(hours=1))
    history.add(Refresh(0, "a", T0, {KEY_A: (10.0, OLD)}))
    history.add(Refresh(0, "b", T0, {KEY_B: (2.0, T0 - timedelta(hours=1))}))
    history.add(
        Refresh(1, "a", T0 + timedelta(seconds=5), {KEY_A: (9.0, T0 + timedelta(seconds=4))})
    )
    history.add(
        Refresh(2, "b", T0 + timedelta(seconds=10), {KEY_B: (2.2, T0 + timedelta(seconds=9))})
    )
    history.add(
        Refresh(3, "a", T0 + timedelta(seconds=15), {KEY_A: (10.0, T0 + timedelta(seconds=14))})
    )
    return history


def _plan(provider, key, usd, observed, *, nodes=1, stale=False):
    instance_type, region, pricing_model = key
    return {
        "provider": provider,
        "instance_type": instance_type,
        "region": region,
        "pricing_model": pricing_model,
        "usd_per_hour": usd * nodes,
        "nodes": nodes,
        "price_observed_at": observed.isoformat(),
        "stale": stale,
    }


def _life(plan):
    volatile = plan["pricing_model"] == "spot"
    return (timedelta(days=1) if volatile else timedelta(days=30)), volatile


def _check(plans, as_of, *, at=T0 + timedelta(seconds=20)):
    answer = {"recommendations": plans, "catalog_as_of": as_of.isoformat()}
    return answer_check(answer, _history(), sent_at=at, received_at=at, shelf_life=_life)


def test_an_answer_from_one_version_passes_and_names_it():
    plans = [
        _plan("a", KEY_A, 9.0, T0 + timedelta(seconds=4), nodes=2),
        _plan("b", KEY_B, 2.2, T0 + timedelta(seconds=9)),
    ]
    checked = _check(plans, T0 + timedelta(seconds=9))
    assert checked.problems == ()
    assert checked.versions == (2,)
    assert checked.matched == 2


def test_prices_of_two_versions_in_one_answer_are_reported():
    # a's price after refresh 3 next to b's price before refresh 2: no version held both.
    plans = [
        _plan("a", KEY_A, 10.0, T0 + timedelta(seconds=14)),
        _plan("b", KEY_B, 2.0, T0 - timedelta(hours=1)),
    ]
    checked = _check(plans, T0 + timedelta(seconds=14))
    assert checked.versions == ()
    assert any("mixed versions" in p for p in checked.problems)


def test_a_catalog_as_of_from_a_newer_version_than_the_plans_is_reported():
    plans = [_plan("a", KEY_A, 9.0, T0 + timedelta(seconds=4))]  # versions 1-2
    assert _check(plans, T0 + timedelta(seconds=9)).problems == ()  # version 2
    checked = _check(plans, T0 + timedelta(seconds=14))  # version 3's as-of
    assert checked.versions == ()
    assert any("mixed versions" in p for p in checked.problems)


def test_a_price_with_the_right_stamp_and_the_wrong_amount_is_reported():
    checked = _check([_plan("a", KEY_A, 9.5, T0 + timedelta(seconds=4))], T0 + timedelta(seconds=4))
    assert any("in no stored version" in p for p in checked.problems)


def test_a_version_committed_after_the_answer_came_back_cannot_explain_it():
    plans = [_plan("a", KEY_A, 10.0, T0 + timedelta(seconds=14))]
    checked = _check(plans, T0 + timedelta(seconds=14), at=T0 + timedelta(seconds=12))
    assert checked.versions == ()


@pytest.mark.parametrize(
    ("plan", "message"),
    [
        # a spot price observed two days before the request, not flagged stale
        (_plan("c", KEY_B, 1.0, T0 - timedelta(days=2)), "past its shelf life"),
        # flagged stale, but spot prices past their shelf life are never ranked by default
        (_plan("c", KEY_B, 1.0, T0 - timedelta(days=2), stale=True), "stale spot price was ranked"),
    ],
)
def test_prices_past_their_shelf_life_are_reported(plan, message):
    checked = _check([plan], T0 + timedelta(seconds=14))
    assert any(message in p for p in checked.problems)


def test_a_flagged_stale_list_price_is_allowed():
    plan = _plan("c", KEY_A, 5.0, T0 - timedelta(days=60), stale=True)
    assert _check([plan], T0 + timedelta(seconds=14)).problems == ()


def test_refreshes_must_come_in_commit_order():
    history = _history()
    with pytest.raises(ValueError, match="out of order"):
        history.add(Refresh(5, "a", T0, {}))
