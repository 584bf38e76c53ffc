"""/api/recommend lists one size of an offer per total by default (a 1x, 2x and 4x instance of
the same GPU at the same total fill no slots), and every size with all_sizes=true."""

from __future__ import annotations

from collections import Counter

import pytest

pytestmark = pytest.mark.django_db

QLORA = {"model": "llama-2-7b", "method": "qlora", "tokens": 1e7}


def sizes(plans):
    return Counter(
        (p["provider"], p["gpu"], p["region"], p["pricing_model"], p["est_total_usd"])
        for p in plans
    )


def recommend(api_client, **top):
    body = {"workload": QLORA, "limit": 8} | top
    response = api_client.post("/api/recommend", body, format="json")
    assert response.status_code == 200, response.content
    return response.json()["recommendations"]


def test_by_default_one_size_of_an_offer_per_total_is_listed(api_client):
    every = recommend(api_client, all_sizes=True, limit=80)
    assert max(sizes(every[:8]).values()) > 1  # the catalog has such repeats to collapse
    listed = recommend(api_client)
    assert len(listed) == 8 and max(sizes(listed).values()) == 1
    # The first ranked size of each is the one kept: at an equal total the faster one, here the
    # largest GPU count (the same cost, sooner).
    faster_kept = 0
    for p in listed:
        twins = [
            q for q in every
            if (q["provider"], q["gpu"], q["region"], q["pricing_model"], q["est_total_usd"])
            == (p["provider"], p["gpu"], p["region"], p["pricing_model"], p["est_total_usd"])
        ]  # fmt: skip
        first = min(twins, key=lambda q: q["rank"])
        assert (p["instance_type"], p["gpu_count"]) == (first["instance_type"], first["gpu_count"])
        assert p["est_hours"] == min(q["est_hours"] for q in twins)
        if len(twins) > 1:
            assert p["gpu_count"] == max(q["gpu_count"] for q in twins)
            faster_kept += 1
    assert faster_kept  # a size with twins was listed
    assert [p["rank"] for p in listed] == list(range(1, 9))


def test_get_takes_all_sizes_too(api_client):
    url = "/api/recommend?model=llama-2-7b&method=qlora&tokens=1e7&limit=8"
    collapsed = api_client.get(url).json()["recommendations"]
    every = api_client.get(url + "&all_sizes=true").json()["recommendations"]
    assert max(sizes(collapsed).values()) == 1 and max(sizes(every).values()) > 1
