"""Enumerations of the catalog, as stored in the database and shown in the API."""

from django.db import models

from . import pricing
from .pricing import PRICING_MODEL_LABELS


class Vendor(models.TextChoices):
    NVIDIA = "nvidia", "NVIDIA"
    AMD = "amd", "AMD"
    HUAWEI = "huawei", "Huawei"
    INTEL = "intel", "Intel"


class Segment(models.TextChoices):
    CONSUMER = "consumer", "Consumer (GeForce)"
    WORKSTATION = "workstation", "Workstation"
    DATACENTER = "datacenter", "Datacenter"


class FormFactor(models.TextChoices):
    SXM = "sxm", "SXM"
    PCIE = "pcie", "PCIe"
    OAM = "oam", "OAM"
    NVL = "nvl", "PCIe NVL (bridged pair)"
    MEZZANINE = "mezzanine", "Mezzanine"
    SUPERCHIP = "superchip", "Superchip"


class InterconnectKind(models.TextChoices):
    PCIE = "pcie", "PCIe"
    NVLINK = "nvlink", "NVLink"
    NVSWITCH = "nvswitch", "NVSwitch"
    INFINIBAND = "infiniband", "InfiniBand"
    ROCE_V2 = "roce_v2", "RoCEv2"
    EFA = "efa", "AWS EFA"
    ETHERNET = "ethernet", "Ethernet"
    INFINITY_FABRIC = "infinity_fabric", "AMD Infinity Fabric"
    HCCS = "hccs", "Huawei HCCS"


class BandwidthUnit(models.TextChoices):
    GB_S = "GB/s", "GB/s"
    GBIT_S = "Gbit/s", "Gbit/s"


class Scope(models.TextChoices):
    INTRA_NODE = "intra_node", "Within a node"
    INTER_NODE = "inter_node", "Between nodes"


class ProviderKind(models.TextChoices):
    HYPERSCALER = "hyperscaler", "Hyperscaler"
    REGIONAL_CLOUD = "regional_cloud", "Regional cloud"
    GPU_CLOUD = "gpu_cloud", "GPU cloud"
    MARKETPLACE = "marketplace", "Marketplace"


class BillingGranularity(models.TextChoices):
    SECOND = "second", "Per second"
    MINUTE = "minute", "Per minute"
    HOUR = "hour", "Per hour"
    DAY = "day", "Per day"
    MONTH = "month", "Per month"


class Geography(models.TextChoices):
    NORTH_AMERICA = "north_america", "North America"
    SOUTH_AMERICA = "south_america", "South America"
    EUROPE = "europe", "Europe"
    ASIA_PACIFIC = "asia_pacific", "Asia Pacific"
    MAINLAND_CHINA = "mainland_china", "Mainland China"
    MIDDLE_EAST = "middle_east", "Middle East"
    AFRICA = "africa", "Africa"
    OCEANIA = "oceania", "Oceania"
    GLOBAL = "global", "Global"


class GpuSharing(models.TextChoices):
    DEDICATED = "dedicated", "Dedicated physical GPU"
    VGPU = "vgpu", "Virtual GPU (time-sliced)"
    FRACTIONAL = "fractional", "Fraction of a GPU"


class DiskType(models.TextChoices):
    NVME = "nvme", "NVMe SSD"
    SSD = "ssd", "SSD"
    HDD = "hdd", "HDD"
    NONE = "none", "None"


# The pricing models are listed once, in catalog/pricing.py (pure, for the planner). Django's
# functional API takes (name, (value, label)) pairs; django-stubs do not type that API.
PricingModel = models.TextChoices(  # type: ignore[call-overload]
    "PricingModel",
    [(model.name, (model.value, PRICING_MODEL_LABELS[model])) for model in pricing.PricingModel],
)


class PriceUnit(models.TextChoices):
    HOUR = "hour", "per hour"
    DAY = "day", "per day"
    MONTH = "month", "per month"
    YEAR = "year", "per year"


# Hours in one billing unit. A month is 730 h (8,760 h / 12), the convention AWS, Azure and GCP
# use when they quote monthly figures next to hourly ones.
HOURS_PER_UNIT: dict[str, int] = {
    PriceUnit.HOUR: 1,
    PriceUnit.DAY: 24,
    PriceUnit.MONTH: 730,
    PriceUnit.YEAR: 8760,
}


class PriceSource(models.TextChoices):
    FIXTURE = "fixture", "Curated snapshot (fixtures)"
    CURATOR = "curator", "Curator"
    SCRAPER = "scraper", "Scraper"


class PriceEvent(models.TextChoices):
    APPEARED = "appeared", "Appeared"
    CHANGED = "changed", "Changed"
    DISAPPEARED = "disappeared", "Disappeared"
    REAPPEARED = "reappeared", "Reappeared"


class ScrapeStatus(models.TextChoices):
    RUNNING = "running", "Running"
    SUCCESS = "success", "Success"
    PARTIAL = "partial", "Partial"
    FAILED = "failed", "Failed"
    # A refresh that looked like drift (too few records, a GPU model gone): nothing was written;
    # a curator approves (its records are ingested then) or rejects it.
    HELD = "held", "Held for a curator"
    REJECTED = "rejected", "Rejected by a curator"


# Runs whose records were ingested: the baseline the next refresh is compared with.
GOOD_SCRAPE_STATUSES = (ScrapeStatus.SUCCESS, ScrapeStatus.PARTIAL)


class UnmatchedKind(models.TextChoices):
    """What kind of provider name a refresh could not map."""

    GPU = "gpu", "GPU name"
    SKU = "sku", "SKU"
    INSTANCE = "instance", "Instance type or family"
    REGION = "region", "Region"


class CrossCheckStatus(models.TextChoices):
    """How a cross-check of a provider's prices against a second source ended."""

    RUNNING = "running", "Running"
    SUCCESS = "success", "Success"
    FAILED = "failed", "Failed"


class DisagreementStatus(models.TextChoices):
    """Where a price disagreement stands in the curators' queue."""

    OPEN = "open", "Open"
    ACCEPTED = "accepted", "Accepted (second source applied)"
    DISMISSED = "dismissed", "Dismissed (primary kept)"
    # Closed by a later cross-check: the two sources agree again (or the figures returned to ones
    # a curator already decided).
    RESOLVED = "resolved", "Resolved (sources agree again)"
