"""Catalog audit: what is wrong or suspicious in the stored catalog, rule by rule (read-only).

Each rule reads the database once and returns findings; `catalog_audit` runs them all. Errors are
facts that make an answer wrong (placeholder host specs, a spot price left over from an older
snapshot); warnings are for a curator's eye (a list price past its shelf life, a GPU nobody sells).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta

from django.db.models import Exists, OuterRef
from django.utils import timezone

from . import choices, querysets
from .models import GPU, InstanceType, Price

ERROR = "error"
WARNING = "warning"

# A spot or marketplace price this much older than the snapshot it sits in (its on-demand price, or its
# provider's median date) is left over from an older reading, and ranking on it misleads (issue 17).
SNAPSHOT_SPREAD_DAYS = 30
MIN_HOST_VCPUS = 2  # a whole dedicated GPU behind one vCPU is a placeholder, not a product
SAME_MEMORY_TOLERANCE_GIB = 0.5
RESERVED_MODELS = {choices.PricingModel.RESERVED_1Y, choices.PricingModel.RESERVED_3Y}


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


RULES: tuple[Callable[[datetime], list[Finding]], ...] = (
    rule_placeholder_host_specs,
    rule_host_ram_equals_gpu_memory,
    rule_shared_family_spec,
    rule_stale_prices,
    rule_leftover_moving_prices,
    rule_reserved_older_than_on_demand,
    rule_instance_types_without_prices,
    rule_gpus_without_offers,
    rule_mixed_currencies,
    rule_foreign_regions,
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
