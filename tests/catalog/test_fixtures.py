"""The curated catalog: coverage, sources, datasheet rules, idempotent loading."""

from collections import Counter
from pathlib import Path

import pytest
import yaml
from django.conf import settings
from django.core.management import call_command

from catalog.models import GPU, InstanceType, Interconnect, Price, PriceHistory, Provider, Region
from catalog.selectors import gpu_alias_resolve

from .datasheet_table import DATASHEET

pytestmark = pytest.mark.django_db

SEED_GPUS = [
    "rtx-4090", "rtx-3090", "t4", "v100-sxm2-16gb", "v100-sxm2-32gb", "a10", "a10g", "l4", "l40",
    "l40s", "rtx-a6000", "a100-sxm4-40gb", "a100-sxm4-80gb", "a100-pcie-40gb", "a100-pcie-80gb",
    "a800-sxm4-80gb", "h100-sxm", "h100-pcie", "h100-nvl", "h800-sxm", "h20", "h200-sxm", "b200",
    "ascend-910b", "mi300x",
]  # fmt: skip
SEED_PROVIDERS = [
    "aws", "azure", "gcp", "alibaba", "tencent", "huawei", "lambda", "coreweave", "runpod",
    "vastai", "autodl",
]  # fmt: skip
SEED_INTERCONNECT_KINDS = {"pcie", "nvlink", "nvswitch", "infiniband", "roce_v2", "efa", "ethernet"}


def test_every_gpu_the_seeds_name_is_there_with_a_source():
    assert GPU.objects.count() >= 25
    present = set(GPU.objects.values_list("slug", flat=True))
    assert not set(SEED_GPUS) - present
    assert not GPU.objects.filter(source="").exists()


@pytest.mark.parametrize("slug", sorted(DATASHEET))
def test_gpu_figures_match_the_datasheet_table(slug):
    gpu = GPU.objects.get(slug=slug)
    for field, expected in DATASHEET[slug].items():
        actual = getattr(gpu, field)
        if expected is None:
            assert actual is None, f"{slug}.{field} should be null"
        else:
            assert actual == pytest.approx(expected, rel=0.02), f"{slug}.{field}"


def test_dense_figures_rules():
    t4 = GPU.objects.get(slug="t4")
    assert t4.bf16_tflops is None and t4.fp8_tflops is None
    for gpu in GPU.objects.exclude(fp8_tflops=None).exclude(bf16_tflops=None):
        # FP8 is at most twice BF16 dense; a sparsity figure would be four times.
        assert gpu.fp8_tflops <= 2.05 * gpu.bf16_tflops, gpu.slug
    h100 = GPU.objects.get(slug="h100-sxm")
    assert h100.bf16_tflops < 1000  # 989.4 dense, never the 1,979 sparsity figure


def test_geforce_parts_are_not_allowed_in_datacenters():
    for slug in ("rtx-3090", "rtx-4090"):
        gpu = GPU.objects.get(slug=slug)
        assert gpu.segment == "consumer" and not gpu.datacenter_use_allowed
    assert not GPU.objects.filter(segment="consumer", datacenter_use_allowed=True).exists()


def test_export_variants_are_capped_and_linked():
    for slug, parent in (("a800-sxm4-80gb", "a100-sxm4-80gb"), ("h800-sxm", "h100-sxm")):
        gpu = GPU.objects.get(slug=slug)
        assert gpu.nvlink_bandwidth_gb_s == 400
        assert gpu.export_variant_of.slug == parent


def test_h100_nvl_figures_are_per_gpu():
    nvl = GPU.objects.get(slug="h100-nvl")
    assert nvl.memory_gib == 94
    assert nvl.bf16_tflops < 1000


def test_aliases_resolve_provider_names():
    assert gpu_alias_resolve(name="NVIDIA A100-SXM4-80GB").slug == "a100-sxm4-80gb"
    assert gpu_alias_resolve(name="Tesla T4").slug == "t4"
    assert gpu_alias_resolve(name="NVIDIA GeForce RTX 4090").slug == "rtx-4090"
    assert gpu_alias_resolve(name="h100-sxm").slug == "h100-sxm"


def test_interconnects_cover_the_seeds_with_units():
    kinds = set(Interconnect.objects.values_list("kind", flat=True))
    assert kinds >= SEED_INTERCONNECT_KINDS
    for link in Interconnect.objects.all():
        assert link.bandwidth_unit in ("GB/s", "Gbit/s") and link.bandwidth_gb_s > 0
    assert Interconnect.objects.get(slug="infiniband-ndr").rdma
    assert not Interconnect.objects.get(slug="ethernet-25").rdma


def test_all_eleven_providers_with_regions_and_instances():
    assert set(SEED_PROVIDERS) <= set(Provider.objects.values_list("slug", flat=True))
    for provider in Provider.objects.filter(slug__in=SEED_PROVIDERS):
        assert provider.regions.exists(), provider.slug
        assert provider.instance_types.exists(), provider.slug
    chinese = Provider.objects.filter(slug__in=["alibaba", "tencent", "huawei", "autodl"])
    assert all(p.mainland_china and p.compliance_notes for p in chinese)
    assert Region.objects.filter(provider__slug="alibaba", mainland_china=True).exists()


def test_catalog_size_and_every_instance_priced():
    assert InstanceType.objects.count() >= 150
    assert Price.objects.count() >= 500
    unpriced = InstanceType.objects.filter(prices__isnull=True).values_list(
        "provider__slug", "name"
    )
    assert not list(unpriced)
    assert not Price.objects.filter(source_url="", source_note="").exists()
    models = Counter(Price.objects.values_list("pricing_model", flat=True))
    assert models["on_demand"] and models["spot"] and (models["monthly"] or models["reserved_1y"])


def test_aws_capacity_blocks_load_and_bring_p5e():
    blocks = Price.objects.filter(
        instance_type__provider__slug="aws", pricing_model="capacity_block"
    ).select_related("instance_type", "region")
    assert blocks.count() >= 50
    assert all("ec2-capacity-blocks-for-ml-pricing-json" in p.source_url for p in blocks)
    p5e = {
        p.region.code: float(p.usd_per_hour)
        for p in blocks
        if p.instance_type.name == "p5e.48xlarge"
    }
    assert p5e["us-east-2"] == pytest.approx(47.76)
    assert (
        InstanceType.objects.get(provider__slug="aws", name="p5e.48xlarge").gpu.slug == "h200-sxm"
    )


def test_price_normalisation_is_consistent():
    for price in Price.objects.select_related("instance_type")[:2000]:
        per_gpu = float(price.usd_per_hour) / float(price.instance_type.gpu_count)
        assert float(price.usd_per_gpu_hour) == pytest.approx(per_gpu, rel=1e-3, abs=1e-5)
        assert 0 < float(price.usd_per_gpu_hour) < 200, price


def test_loading_twice_changes_nothing():
    before = (Price.objects.count(), PriceHistory.objects.count(), InstanceType.objects.count())
    call_command("load_catalog", verbosity=0)
    assert (
        Price.objects.count(),
        PriceHistory.objects.count(),
        InstanceType.objects.count(),
    ) == before


def test_loading_again_keeps_the_catalog_fingerprint():
    """A restart (make run, the web container) reloads the fixtures; rows that did not change are
    not rewritten, so cached recommendations and workers' offer books stay valid."""
    from sizing.selectors import catalog_version

    before = catalog_version()
    call_command("load_catalog", verbosity=0)
    assert catalog_version() == before


def test_fixture_files_cite_sources():
    root = Path(settings.CATALOG_FIXTURES_DIR)
    for path in sorted((root / "providers").glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for item in data["instance_types"] + data["prices"]:
            assert item.get("source") or item.get("source_url"), f"{path.name}: {item}"


def test_fixture_urls_are_uris():
    """The API types every source URL as ``format: uri`` (RFC 3986, ASCII): a documentation path in
    Chinese is stored percent-encoded (schemathesis failed on the raw Alibaba doc paths)."""
    root = Path(settings.CATALOG_FIXTURES_DIR)
    for path in sorted(root.rglob("*.yaml")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            key, _, value = line.strip().lstrip("- ").partition(": ")
            if key.endswith("source_url") or key in ("website", "price_source_url"):
                assert value.isascii() and " " not in value, f"{path.name}:{number}: {value}"


def test_readme_coverage_table_is_current():
    """fixtures/README.md's coverage table is what fixtures/tools/coverage.py computes today."""
    import importlib.util
    import sys

    tools = Path(settings.CATALOG_FIXTURES_DIR) / "tools"
    sys.path.insert(0, str(tools))
    try:
        spec = importlib.util.spec_from_file_location("fixture_coverage", tools / "coverage.py")
        coverage = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(coverage)
    finally:
        sys.path.remove(str(tools))
    text = coverage.README.read_text(encoding="utf-8")
    assert coverage.readme_with_table(text, coverage.coverage_table()) == text, (
        "run: python fixtures/tools/coverage.py"
    )
    # The stand-alone script keeps its own copy of the pricing models (one column each).
    from catalog.pricing import PricingModel

    assert tuple(PricingModel) == coverage.MODELS, (
        "coverage.py's MODELS drifted from catalog/pricing.py"
    )
