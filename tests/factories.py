"""factory_boy factories for catalog rows the tests build themselves."""

from datetime import UTC, datetime
from decimal import Decimal

import factory

from catalog import choices
from catalog.models import GPU, InstanceType, Price, Provider, Region


class GPUFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = GPU
        django_get_or_create = ("slug",)

    slug = factory.Sequence(lambda n: f"test-gpu-{n}")
    vendor = choices.Vendor.NVIDIA
    name = factory.LazyAttribute(lambda o: o.slug.upper())
    architecture = "Testwell"
    memory_gib = 80
    memory_bandwidth_gb_s = 2000
    bf16_tflops = 300
    fp16_tflops = 300
    form_factor = choices.FormFactor.SXM
    segment = choices.Segment.DATACENTER
    datacenter_use_allowed = True
    source = "test factory"


class ProviderFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Provider
        django_get_or_create = ("slug",)

    slug = factory.Sequence(lambda n: f"test-provider-{n}")
    name = factory.LazyAttribute(lambda o: o.slug.title())
    kind = choices.ProviderKind.GPU_CLOUD
    home_currency = "USD"
    billing_granularity = choices.BillingGranularity.SECOND


class RegionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Region

    provider = factory.SubFactory(ProviderFactory)
    code = factory.Sequence(lambda n: f"test-region-{n}")
    name = "Test region"
    country = "US"
    geography = choices.Geography.NORTH_AMERICA


class InstanceTypeFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = InstanceType

    provider = factory.SubFactory(ProviderFactory)
    name = factory.Sequence(lambda n: f"test-instance-{n}")
    gpu = factory.SubFactory(GPUFactory)
    gpu_count = Decimal("8")
    vcpus = 96
    ram_gib = 1024


class PriceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Price

    instance_type = factory.SubFactory(InstanceTypeFactory)
    region = factory.SubFactory(
        RegionFactory, provider=factory.SelfAttribute("..instance_type.provider")
    )
    pricing_model = choices.PricingModel.ON_DEMAND
    amount = Decimal("16")
    currency = "USD"
    unit = choices.PriceUnit.HOUR
    usd_per_hour = Decimal("16")
    usd_per_gpu_hour = Decimal("2")
    observed_at = factory.LazyFunction(lambda: datetime.now(UTC))
    source = choices.PriceSource.SCRAPER
