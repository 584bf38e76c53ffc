"""Catalog audit: what is wrong or suspicious in the stored catalog, rule by rule (read-only).

Each rule reads the database once and returns findings; `catalog_audit` runs them all. Errors are
facts that make an answer wrong (placeholder host specs, a spot price left over from an older
snapshot); warnings are for a curator's eye (a list price past its shelf life, a GPU nobody sells).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta

from django.db.models import Exists, OuterRef
from django.utils import timezone

from . import choices, querysets
from .models import GPU, InstanceType, Price, PriceHistory, Region

ERROR = "error"
WARNING = "warning"

# A spot or marketplace price this much older than the snapshot it sits in (its on-demand price, or its
# provider's median date) is left over from an older reading, and ranking on it misleads (issue 17).
SNAPSHOT_SPREAD_DAYS = 30
MIN_HOST_VCPUS = 2  # a whole dedicated GPU behind one vCPU is a placeholder, not a product
SAME_MEMORY_TOLERANCE_GIB = 0.5
RESERVED_MODELS = {choices.PricingModel.RESERVED_1Y, choices.PricingModel.RESERVED_3Y}

# The largest discounts the hyperscalers publish, as the fraction of the on-demand price left: Spot
# "up to 91%" off (Google Compute Engine Spot VMs, "60-91%"), "up to 90%" (AWS EC2 Spot, Azure Spot
# VMs); reservations "up to 72%" (AWS Savings Plans and Reserved Instances, Azure reservations), Google
# committed use up to 70%. In the catalog of 2026-12-01 the 1st percentile of spot / on-demand is 0.15
# (Azure) and 0.25 (GCP), of reserved / on-demand 0.41 (AWS 3y) and 0.34 (GCP 3y, its minimum).
# Below the error floor no published discount reaches the price (a point of margin for rounding): it
# cannot hold every component (GCP sums vCPU, RAM and GPU SKUs) at a real rate. At the warning floor it
# sits at the published maximum, which a provider gives where it has capacity nobody rents (GCP prices
# GPUs at 91% off Spot in regions that have none): a curator checks it before it ranks.
DISCOUNT_FLOORS: dict[
    str, tuple[float, float]
] = {  # pricing model -> (error below, warning at or below)
    choices.PricingModel.SPOT: (0.08, 0.10),
    choices.PricingModel.RESERVED_1Y: (0.25, 0.30),
    choices.PricingModel.RESERVED_3Y: (0.25, 0.30),
}
# A GPU-hour priced under a third of the cheapest price of the same GPU at every other provider (any
# pricing model) is worth a look; under a fifth it is an error when at least two other providers
# sell the GPU. Legitimately low offers stay above a fifth: in the catalog of 2026-12-01 the lowest
# such ratios are 0.25 (CoreWeave B300 Spot), 0.29 (RunPod community V100), 0.33 (a Vast.ai A100);
# GCP's 91%-off L4 Spot in a region without L4s was 0.19.
GPU_HOUR_WARNING_FACTOR = 1 / 3
GPU_HOUR_ERROR_FACTOR = 1 / 5
MIN_OTHER_PROVIDERS_FOR_ERROR = 2


@dataclass(frozen=True)
class Finding:
    """One thing the audit found: which rule, how bad, where, and what."""

    rule: str
    severity: str
    provider: str
    subject: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


def shelf_life_days(pricing_model: str, provider_kind: str) -> int:
    """Days a price of this model (on this kind of provider) stays current: the one rule of
    catalog.querysets (``PRICE_SHELF_LIFE_DAYS``, ``PRICE_STALE_AFTER_DAYS``)."""
    return querysets.shelf_life_days(
        pricing_model, marketplace=provider_kind == choices.ProviderKind.MARKETPLACE
    )


def instance_family(name: str) -> str:
    """The family an instance type name belongs to, across the providers' naming styles.

    p4d.24xlarge -> p4d, ecs.gn7i-c8g1.2xlarge -> gn7i, GN7.2XLARGE40 -> GN7,
    Standard_NC24ads_A100_v4 -> NCads_A100_v4, a2-highgpu-1g -> a2-highgpu,
    n1-standard-8+1xT4 -> n1-standard, gpu_8x_h100_sxm5 -> gpu_h100_sxm5,
    gd-8xh100ib-i128 -> gd-h100ib-i128, "8x H100 SXM (secure)" -> "H100 SXM (secure)".
    """
    base = re.sub(r"^(Standard_|ecs\.)", "", name)
    if "." in base:
        return base.split(".")[0].split("-")[0]
    if re.match(r"^[A-Z]+\d+[a-z]", base):
        return re.sub(r"\d+", "", base, count=1)
    base = re.sub(r"(^|[ _-])\d+x[ _]?", r"\1", base.split("+")[0])
    return re.sub(r"-\d+g?$", "", base)


def _prices() -> list[dict]:
    return list(
        Price.objects.filter(gone_at__isnull=True).values(
            "id",
            "instance_type_id",
            "instance_type__name",
            "instance_type__provider_id",
            "instance_type__provider__slug",
            "instance_type__provider__kind",
            "region_id",
            "region__code",
            "region__provider_id",
            "pricing_model",
            "currency",
            "observed_at",
            "usd_per_hour",
            "usd_per_gpu_hour",
            "instance_type__gpu__slug",
        )
    )


def rule_placeholder_host_specs(now: datetime) -> list[Finding]:
    """Dedicated whole-GPU instances with no real host: under two vCPUs or no RAM."""
    found = []
    rows = InstanceType.objects.filter(is_active=True, gpu_sharing=choices.GpuSharing.DEDICATED)
    for it in rows.select_related("provider"):
        if it.gpu_count >= 1 and (it.vcpus < MIN_HOST_VCPUS or it.ram_gib <= 0):
            found.append(
                Finding(
                    "placeholder_host_specs",
                    ERROR,
                    it.provider.slug,
                    it.name,
                    f"{it.vcpus} vCPU / {it.ram_gib:g} GiB host for {it.gpu_count:g} GPU(s) looks like a placeholder",
                )
            )
    return found


def rule_host_ram_equals_gpu_memory(now: datetime) -> list[Finding]:
    """Host RAM equal to the GPUs' memory: an error when every size of a family shows it (the GPU
    figure copied into the host field), a warning for a lone size where it may be true."""
    groups: dict[tuple, list[tuple[InstanceType, float]]] = defaultdict(list)
    rows = InstanceType.objects.filter(is_active=True, gpu_sharing=choices.GpuSharing.DEDICATED)
    for it in rows.select_related("provider", "gpu"):
        if it.gpu_count >= 1:
            gpu_total = float(it.gpu_count) * it.gpu.memory_gib
            groups[(it.provider.slug, instance_family(it.name), it.gpu_id)].append((it, gpu_total))
    found = []
    for (provider, _family, _gpu), members in sorted(groups.items(), key=lambda kv: kv[0][:2]):
        same = [
            (it, total)
            for it, total in members
            if abs(it.ram_gib - total) <= SAME_MEMORY_TOLERANCE_GIB
        ]
        severity = ERROR if len(same) == len(members) and len(members) > 1 else WARNING
        for it, total in same:
            found.append(
                Finding(
                    "host_ram_equals_gpu_memory",
                    severity,
                    provider,
                    it.name,
                    f"host RAM {it.ram_gib:g} GiB equals the GPU memory ({total:g} GB)",
                )
            )
    return found


def rule_shared_family_spec(now: datetime) -> list[Finding]:
    """Every size of a family with one host spec although their GPU counts differ.

    GPU attachments (GCP n1-standard-8+2xT4) share their host by design and are left out.
    """
    groups: dict[tuple, list[InstanceType]] = defaultdict(list)
    rows = InstanceType.objects.filter(is_active=True).exclude(name__contains="+")
    for it in rows.select_related("provider"):
        groups[(it.provider.slug, instance_family(it.name), it.gpu_id)].append(it)
    found = []
    for (provider, family, _gpu), members in sorted(groups.items(), key=lambda kv: kv[0][:2]):
        counts = {m.gpu_count for m in members}
        specs = {(m.vcpus, m.ram_gib) for m in members}
        if len(counts) > 1 and len(specs) == 1:
            vcpus, ram = specs.pop()
            found.append(
                Finding(
                    "shared_family_spec",
                    ERROR,
                    provider,
                    family,
                    f"{len(members)} sizes with {len(counts)} GPU counts all carry {vcpus} vCPU / {ram:g} GiB",
                )
            )
    return found


def rule_stale_prices(now: datetime) -> list[Finding]:
    """Prices past their pricing model's shelf life (a warning: a snapshot ages by nature)."""
    counts: dict[tuple[str, str], list] = defaultdict(list)
    for row in _prices():
        days = shelf_life_days(row["pricing_model"], row["instance_type__provider__kind"])
        if row["observed_at"] < now - timedelta(days=days):
            counts[(row["instance_type__provider__slug"], row["pricing_model"])].append(row)
    found = []
    for (provider, model), rows in sorted(counts.items()):
        oldest = min(r["observed_at"] for r in rows).date()
        days = shelf_life_days(model, rows[0]["instance_type__provider__kind"])
        found.append(
            Finding(
                "stale_price",
                WARNING,
                provider,
                model,
                f"{len(rows)} {model} price(s) older than their {days}-day shelf life (oldest {oldest})",
            )
        )
    return found


def rule_leftover_moving_prices(now: datetime) -> list[Finding]:
    """Spot or marketplace prices far older than the snapshot they sit in.

    The snapshot's date for a price is its own on-demand price's date when there is one, else the
    median date of its provider's prices (a median, so one newer curated row does not age the rest).
    """
    rows = _prices()
    dates: dict[str, list[datetime]] = defaultdict(list)
    on_demand: dict[tuple[int, int], datetime] = {}
    for row in rows:
        dates[row["instance_type__provider__slug"]].append(row["observed_at"])
        if row["pricing_model"] == choices.PricingModel.ON_DEMAND:
            on_demand[(row["instance_type_id"], row["region_id"])] = row["observed_at"]
    median = {slug: sorted(found)[len(found) // 2] for slug, found in dates.items()}
    found = []
    for row in rows:
        slug = row["instance_type__provider__slug"]
        moving = querysets.price_is_volatile(
            row["pricing_model"],
            marketplace=row["instance_type__provider__kind"] == choices.ProviderKind.MARKETPLACE,
        )
        if not moving:
            continue
        pair = on_demand.get((row["instance_type_id"], row["region_id"]))
        reference = max(pair, median[slug]) if pair else median[slug]
        if row["observed_at"] < reference - timedelta(days=SNAPSHOT_SPREAD_DAYS):
            found.append(
                Finding(
                    "leftover_moving_price",
                    ERROR,
                    slug,
                    f"{row['instance_type__name']} @ {row['region__code']}",
                    f"{row['pricing_model']} price of {row['observed_at'].date()} is over "
                    f"{SNAPSHOT_SPREAD_DAYS} days older than the snapshot it sits in "
                    f"({reference.date()})",
                )
            )
    return found


def rule_reserved_older_than_on_demand(now: datetime) -> list[Finding]:
    """Reserved prices read before the on-demand price they discount; an error past a year."""
    on_demand: dict[tuple[int, int], datetime] = {}
    reserved = []
    for row in _prices():
        key = (row["instance_type_id"], row["region_id"])
        if row["pricing_model"] == choices.PricingModel.ON_DEMAND:
            on_demand[key] = row["observed_at"]
        elif row["pricing_model"] in RESERVED_MODELS:
            reserved.append(row)
    found = []
    for row in reserved:
        base = on_demand.get((row["instance_type_id"], row["region_id"]))
        if base is None or row["observed_at"] >= base:
            continue
        lag = base - row["observed_at"]
        limit = shelf_life_days(row["pricing_model"], row["instance_type__provider__kind"])
        found.append(
            Finding(
                "reserved_older_than_on_demand",
                ERROR if lag > timedelta(days=limit) else WARNING,
                row["instance_type__provider__slug"],
                f"{row['instance_type__name']} @ {row['region__code']}",
                f"{row['pricing_model']} of {row['observed_at'].date()} discounts an on-demand price "
                f"of {base.date()} ({lag.days} days newer)",
            )
        )
    return found


def rule_discount_beyond_published(now: datetime) -> list[Finding]:
    """Spot and reserved prices that are a smaller fraction of the same type's on-demand price in the
    same region than any published discount allows (an error), or sit at that maximum (a warning)."""
    rows = _prices()
    on_demand = {
        (row["instance_type_id"], row["region_id"]): row["usd_per_hour"]
        for row in rows
        if row["pricing_model"] == choices.PricingModel.ON_DEMAND
    }
    found = []
    for row in rows:
        floors = DISCOUNT_FLOORS.get(row["pricing_model"])
        base = on_demand.get((row["instance_type_id"], row["region_id"]))
        if floors is None or not base:
            continue
        fraction = round(float(row["usd_per_hour"]) / float(base), 4)
        error_below, warning_at = floors
        if fraction > warning_at:
            continue
        beyond = fraction < error_below
        found.append(
            Finding(
                "discount_beyond_published",
                ERROR if beyond else WARNING,
                row["instance_type__provider__slug"],
                f"{row['instance_type__name']} @ {row['region__code']}",
                f"{row['pricing_model']} ${float(row['usd_per_hour']):g}/h is {fraction:g} of on-demand "
                f"${float(base):g}/h ({1 - fraction:.0%} off): "
                + (
                    f"beyond any published discount (floor {error_below:g})"
                    if beyond
                    else f"at the largest published discount (at or under {warning_at:g})"
                ),
            )
        )
    return found


def rule_gpu_hour_far_below_other_providers(now: datetime) -> list[Finding]:
    """Prices per GPU-hour far below the cheapest price of the same GPU at every other provider."""
    rows = _prices()
    cheapest: dict[str, dict[str, dict]] = defaultdict(dict)  # GPU -> provider -> cheapest row
    for row in rows:
        mine = cheapest[row["instance_type__gpu__slug"]]
        slug = row["instance_type__provider__slug"]
        if slug not in mine or row["usd_per_gpu_hour"] < mine[slug]["usd_per_gpu_hour"]:
            mine[slug] = row
    found = []
    for row in rows:
        gpu, slug = row["instance_type__gpu__slug"], row["instance_type__provider__slug"]
        others = [r for other, r in cheapest[gpu].items() if other != slug]
        if not others:
            continue
        elsewhere = min(others, key=lambda r: r["usd_per_gpu_hour"])
        if not elsewhere["usd_per_gpu_hour"]:
            continue
        ratio = float(row["usd_per_gpu_hour"]) / float(elsewhere["usd_per_gpu_hour"])
        if ratio >= GPU_HOUR_WARNING_FACTOR:
            continue
        sure = ratio < GPU_HOUR_ERROR_FACTOR and len(others) >= MIN_OTHER_PROVIDERS_FOR_ERROR
        found.append(
            Finding(
                "gpu_hour_far_below_other_providers",
                ERROR if sure else WARNING,
                slug,
                f"{row['instance_type__name']} @ {row['region__code']} {row['pricing_model']}",
                f"${float(row['usd_per_gpu_hour']):g}/GPU-h is {ratio:.2f} of the cheapest {gpu} at "
                f"{len(others)} other provider(s) (${float(elsewhere['usd_per_gpu_hour']):g}, "
                f"{elsewhere['instance_type__provider__slug']} {elsewhere['pricing_model']})",
            )
        )
    return found


def rule_instance_types_without_prices(now: datetime) -> list[Finding]:
    """Active instance types with no current price: they can never be offered."""
    current = Price.objects.filter(instance_type=OuterRef("pk"), gone_at__isnull=True)
    rows = InstanceType.objects.filter(is_active=True).exclude(Exists(current))
    return [
        Finding(
            "instance_type_without_prices",
            ERROR,
            it.provider.slug,
            it.name,
            "no current price",
        )
        for it in rows.select_related("provider").order_by("provider__slug", "name")
    ]


def rule_gpus_without_offers(now: datetime) -> list[Finding]:
    """GPUs no active instance type carries (kept for reference, or a gap in coverage)."""
    rows = GPU.objects.exclude(instance_types__is_active=True).order_by("slug")
    return [
        Finding("gpu_without_offers", WARNING, "", gpu.slug, "no provider offers it")
        for gpu in rows
    ]


def rule_mixed_currencies(now: datetime) -> list[Finding]:
    """One family priced in several currencies (the same thing read from two price pages)."""
    currencies: dict[tuple[str, str], set[str]] = defaultdict(set)
    for row in _prices():
        family = instance_family(row["instance_type__name"])
        currencies[(row["instance_type__provider__slug"], family)].add(row["currency"])
    return [
        Finding(
            "mixed_currencies",
            ERROR,
            provider,
            family,
            f"priced in {', '.join(sorted(found))}",
        )
        for (provider, family), found in sorted(currencies.items())
        if len(found) > 1
    ]


def rule_foreign_regions(now: datetime) -> list[Finding]:
    """Prices in a region that is not on their provider's region list."""
    return [
        Finding(
            "region_not_on_provider_list",
            ERROR,
            row["instance_type__provider__slug"],
            f"{row['instance_type__name']} @ {row['region__code']}",
            "the region belongs to another provider",
        )
        for row in _prices()
        if row["region__provider_id"] != row["instance_type__provider_id"]
    ]


def rule_rows_naming_missing_rows(now: datetime) -> list[Finding]:
    """Prices or history rows whose instance type or region does not exist. PostgreSQL refuses
    them (migration 0011's triggers); elsewhere the keys are Django's alone (on_delete), which a
    raw SQL delete or a write racing a delete gets past."""
    findings = []
    for model in (Price, PriceHistory):
        for key, target in (("instance_type_id", InstanceType), ("region_id", Region)):
            missing = ~Exists(target.objects.filter(pk=OuterRef(key)))
            rows = model.objects.filter(missing).order_by(key).values_list(key, flat=True)
            for value, count in Counter(rows).items():
                findings.append(
                    Finding(
                        "row_names_missing_row",
                        ERROR,
                        "",
                        f"{model._meta.db_table}.{key}={value}",
                        f"{count} row(s) name {target.__name__} {value}, which does not exist",
                    )
                )
    return findings


RULES: tuple[Callable[[datetime], list[Finding]], ...] = (
    rule_placeholder_host_specs,
    rule_host_ram_equals_gpu_memory,
    rule_shared_family_spec,
    rule_stale_prices,
    rule_leftover_moving_prices,
    rule_reserved_older_than_on_demand,
    rule_discount_beyond_published,
    rule_gpu_hour_far_below_other_providers,
    rule_instance_types_without_prices,
    rule_gpus_without_offers,
    rule_mixed_currencies,
    rule_foreign_regions,
    rule_rows_naming_missing_rows,
)


def catalog_audit(*, now: datetime | None = None) -> list[Finding]:
    """Run every rule; errors first, then by rule, provider and subject."""
    now = now or timezone.now()
    findings: list[Finding] = []
    for rule in RULES:
        findings.extend(rule(now))
    return sorted(findings, key=lambda f: (f.severity != ERROR, f.rule, f.provider, f.subject))


def audit_counts(findings: Iterable[Finding]) -> dict[str, int]:
    """How many errors and warnings."""
    findings = list(findings)
    return {
        "errors": sum(1 for f in findings if f.severity == ERROR),
        "warnings": sum(1 for f in findings if f.severity == WARNING),
    }
