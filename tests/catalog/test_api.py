"""Read-only catalog API: keys, filters, ordering, pagination, errors and permissions."""

import pytest

from catalog.models import GPU, InstanceType, Price

pytestmark = pytest.mark.django_db

GPU_KEYS = {
    "slug", "name", "vendor", "architecture", "memory_gib", "memory_bandwidth_gb_s", "fp32_tflops",
    "tf32_tflops", "bf16_tflops", "fp16_tflops", "fp8_tflops", "int8_tops", "tdp_w", "form_factor",
    "nvlink_bandwidth_gb_s", "segment", "datacenter_use_allowed", "export_variant_of", "aliases",
}  # fmt: skip
PRICE_KEYS = {
    "instance_type", "provider", "region", "pricing_model", "amount", "currency", "unit",
    "usd_per_hour", "usd_per_gpu_hour", "observed_at", "source", "stale",
}  # fmt: skip


def results(response):
    assert response.status_code == 200, response.content
    return response.json()["results"]


def test_gpu_list_has_the_contract_keys(api_client):
    body = api_client.get("/api/gpus/?page_size=1000").json()
    assert body["count"] >= 25
    assert set(body["results"][0]) >= GPU_KEYS
    h800 = next(g for g in body["results"] if g["slug"] == "h800-sxm")
    assert h800["export_variant_of"] == "h100-sxm" and h800["nvlink_bandwidth_gb_s"] == 400


def test_gpu_detail_by_slug(api_client):
    body = api_client.get("/api/gpus/t4/").json()
    assert body["bf16_tflops"] is None and "T4" in body["aliases"]


@pytest.mark.parametrize(
    ("query", "check"),
    [
        ("min_memory_gib=80", lambda g: g["memory_gib"] >= 80),
        ("vendor=amd,huawei", lambda g: g["vendor"] in ("amd", "huawei")),
        ("segment=consumer", lambda g: not g["datacenter_use_allowed"]),
        ("datacenter_use_allowed=false", lambda g: g["segment"] == "consumer"),
        ("has_fp8=true", lambda g: g["fp8_tflops"] is not None),
        ("form_factor=sxm", lambda g: g["form_factor"] == "sxm"),
    ],
)
def test_gpu_filters(api_client, query, check):
    rows = results(api_client.get(f"/api/gpus/?{query}&page_size=1000"))
    assert rows and all(check(g) for g in rows)


def test_gpu_ordering(api_client):
    rows = results(api_client.get("/api/gpus/?ordering=-memory_gib&page_size=5"))
    sizes = [g["memory_gib"] for g in rows]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] >= 180


def test_price_list_keys_and_filters(api_client):
    rows = results(
        api_client.get(
            "/api/prices/?provider=aws&pricing_model=on_demand&gpu=a100-sxm4-40gb,a100-sxm4-80gb"
        )
    )
    assert rows and set(rows[0]) >= PRICE_KEYS
    assert {r["provider"] for r in rows} == {"aws"}
    assert {r["pricing_model"] for r in rows} == {"on_demand"}


@pytest.mark.parametrize(
    ("query", "check"),
    [
        ("max_usd_per_hour=2", lambda p: p["usd_per_hour"] <= 2),
        ("min_usd_per_gpu_hour=3", lambda p: p["usd_per_gpu_hour"] >= 3),
        ("min_gpu_memory_gib=80", lambda p: p["gpu"] not in ("t4", "a10g", "l4", "rtx-4090")),
        (
            "mainland_china=true",
            lambda p: p["provider"] in ("alibaba", "tencent", "huawei", "autodl"),
        ),
        ("currency=CNY", lambda p: p["currency"] == "CNY"),
        ("pricing_model=spot", lambda p: p["pricing_model"] == "spot"),
        ("stale=true", lambda p: p["stale"]),
    ],
)
def test_price_filters(api_client, query, check):
    rows = results(api_client.get(f"/api/prices/?{query}&page_size=1000"))
    assert rows and all(check(p) for p in rows)


def test_price_max_age_filter(api_client):
    total = api_client.get("/api/prices/").json()["count"]
    old = Price.objects.order_by("observed_at").first()
    newest = api_client.get("/api/prices/?max_age_days=0.0001").json()["count"]
    assert newest < total and old is not None


def test_price_ordering_by_usd_per_gpu_hour(api_client):
    rows = results(api_client.get("/api/prices/?ordering=-usd_per_gpu_hour&page_size=50"))
    values = [r["usd_per_gpu_hour"] for r in rows]
    assert values == sorted(values, reverse=True)


def test_page_size_up_to_1000(api_client):
    body = api_client.get("/api/prices/?page_size=1000").json()
    assert len(body["results"]) == min(1000, body["count"])


@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("/api/prices/?page=abc", "page"),
        ("/api/prices/?page=0", "page"),
        ("/api/prices/?page=99999", "page"),
        ("/api/prices/?page_size=1001", "page_size"),
        ("/api/prices/?page_size=-1", "page_size"),
        ("/api/prices/?max_usd_per_hour=cheap", "max_usd_per_hour"),
        ("/api/prices/?pricing_model=hourly", "pricing_model"),
        ("/api/prices/?max_age_days=-1", "max_age_days"),
        ("/api/prices/?ordering=password", "ordering"),
        ("/api/prices/?max_price=3", "max_price"),
        ("/api/gpus/?min_memory_gib=lots", "min_memory_gib"),
        ("/api/prices/history/?since=yesterday", "since"),
        ("/api/instance-types/?min_vcpus=x", "min_vcpus"),
        ("/api/gpus/?page=%C2%B2", "page"),
        ("/api/gpus/?page_size=%C2%B2", "page_size"),
        ("/api/prices/?max_age_days=100000000", "max_age_days"),
        ("/api/prices/?provider_id=99999999999999999999999", "provider_id"),
        ("/api/instance-types/?gpu_id=1e30", "gpu_id"),
        ("/api/regions/?provider_id=-3", "provider_id"),
    ],
)
def test_bad_parameters_are_a_400_naming_the_parameter(api_client, url, field):
    response = api_client.get(url)
    assert response.status_code == 400, response.content
    assert field in response.json()["errors"]


@pytest.mark.parametrize(
    "url", ["/api/gpus/%00/", "/api/providers/a%00b/", "/api/interconnects/%00/"]
)
def test_odd_slugs_are_404_not_500(api_client, url):
    assert api_client.get(url).status_code == 404


def test_empty_ordering_falls_back_to_the_default(api_client):
    rows = results(api_client.get("/api/prices/?ordering=,,&page_size=20"))
    values = [r["usd_per_gpu_hour"] for r in rows]
    assert values == sorted(values)


def test_anonymous_writes_are_refused(api_client):
    for url in ("/api/gpus/", "/api/prices/", "/api/providers/"):
        assert api_client.post(url, {"slug": "x"}).status_code in (401, 403)
    assert api_client.delete("/api/gpus/t4/").status_code in (401, 403)
    assert GPU.objects.filter(slug="t4").exists()


def test_read_only_even_for_staff(staff_client):
    assert staff_client.post("/api/gpus/", {"slug": "x"}).status_code == 405


def test_reads_can_require_a_token(api_client, staff_client, settings):
    settings.API_REQUIRE_TOKEN_FOR_READS = True
    assert api_client.get("/api/gpus/").status_code == 401
    assert staff_client.get("/api/gpus/").status_code == 200


def test_providers_report_counts(api_client):
    rows = results(api_client.get("/api/providers/?page_size=100"))
    aws = next(p for p in rows if p["slug"] == "aws")
    assert aws["price_count"] > 0 and aws["stale_price_count"] <= aws["price_count"]


def test_regions_instance_types_interconnects_history(api_client):
    regions = results(api_client.get("/api/regions/?provider=alibaba&mainland_china=true"))
    assert regions and all(r["mainland_china"] for r in regions)
    instances = results(api_client.get("/api/instance-types/?gpu=h100-sxm&min_gpu_count=8"))
    assert instances and all(i["gpu_count"] >= 8 for i in instances)
    links = results(api_client.get("/api/interconnects/?scope=inter_node&rdma=true"))
    assert {"infiniband", "roce_v2", "efa"} <= {link["kind"] for link in links}
    history = results(api_client.get("/api/prices/history/?event=appeared&page_size=5"))
    assert history and history[0]["event"] == "appeared"
    assert api_client.get("/api/scrape-runs/").status_code == 200


def test_source_urls_are_answered_as_uris(api_client):
    """A curator may paste an IRI (a documentation path in Chinese); the API answers the URI the
    schema promises (``format: uri``), percent-encoded, and the stored text is left as it was."""
    instance = InstanceType.objects.order_by("id").first()
    instance.source_url = "https://github.com/AlibabaCloudDocs/ecs/blob/abc/cn.zh-CN/实例/概述.md"
    instance.save(update_fields=["source_url"])
    body = api_client.get(f"/api/instance-types/{instance.id}/").json()
    assert body["source_url"] == (
        "https://github.com/AlibabaCloudDocs/ecs/blob/abc/cn.zh-CN/"
        "%E5%AE%9E%E4%BE%8B/%E6%A6%82%E8%BF%B0.md"
    )
    instance.refresh_from_db()
    assert "实例" in instance.source_url


def test_openapi_schema_and_docs(api_client):
    schema = api_client.get("/api/schema/?format=json")
    assert schema.status_code == 200
    paths = schema.json()["paths"]
    for path in ("/api/gpus/", "/api/prices/", "/api/prices/history/", "/api/instance-types/"):
        assert path in paths
    assert api_client.get("/api/docs/").status_code == 200


@pytest.mark.parametrize(
    ("url", "field", "hint"),
    [
        ("/api/prices/?gpu=h100x", "gpu", "h100"),
        ("/api/prices/?provider=amazon", "provider", ""),
        ("/api/instance-types/?gpu=a100-80gb", "gpu", "a100"),
        ("/api/regions/?provider=gcp,aws2", "provider", "aws"),
        ("/api/prices/?region=us-east-9", "region", "us-east-"),
    ],
)
def test_unknown_names_in_filters_are_400_with_suggestions(api_client, url, field, hint):
    response = api_client.get(url)
    assert response.status_code == 400, response.content
    assert hint in " ".join(response.json()["errors"][field])
