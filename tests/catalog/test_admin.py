"""The curators' admin: every table opens, sheets import, locks and the unmatched queue work."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from catalog.models import GPU, GPUAlias, Price, Provider, UnmatchedGPUName
from catalog.services import unmatched_gpu_name_record

pytestmark = pytest.mark.django_db

MODELS = [
    "gpu", "gpualias", "interconnect", "provider", "region", "instancetype", "price",
    "pricehistory", "scraperun", "currencyrate", "unmatchedgpuname",
]  # fmt: skip


@pytest.fixture
def curator(client, django_user_model):
    user = django_user_model.objects.create_superuser("admin", "admin@example.org", "a-long-pw-123")
    client.force_login(user)
    return client


@pytest.mark.parametrize("model", MODELS)
def test_every_changelist_opens_with_search(curator, model):
    response = curator.get(reverse(f"admin:catalog_{model}_changelist") + "?q=a")
    assert response.status_code == 200


def test_admin_needs_staff(client):
    response = client.get(reverse("admin:catalog_price_changelist"))
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_price_change_form_and_lock_action(curator):
    price = Price.objects.first()
    assert curator.get(reverse("admin:catalog_price_change", args=[price.pk])).status_code == 200
    curator.post(
        reverse("admin:catalog_price_changelist"),
        {"action": "lock_prices", "_selected_action": [price.pk]},
    )
    price.refresh_from_db()
    assert price.locked


def test_import_sheet_view_reports_line_numbers(curator):
    price = Price.objects.select_related("instance_type__provider", "region").first()
    row = f"{price.instance_type.provider.slug},{price.instance_type.name},{price.region.code},on_demand,-1,USD,hour,,,\n"
    sheet = (
        "provider,instance_type,region,pricing_model,amount,currency,unit,observed_at,source_url,locked\n"
        + row
    )
    response = curator.post(
        reverse("admin:catalog_price_import_sheet"),
        {"sheet": SimpleUploadedFile("prices.csv", sheet.encode())},
    )
    assert response.status_code == 200
    assert b"line 2" in response.content and b"amount" in response.content


def test_mapping_an_unmatched_name_creates_the_alias(curator):
    provider = Provider.objects.get(slug="vastai")
    item = unmatched_gpu_name_record(provider=provider, name="RTX PRO 9999 Blackwell")
    gpu = GPU.objects.get(slug="rtx-4090")
    response = curator.post(
        reverse("admin:catalog_unmatchedgpuname_change", args=[item.pk]), {"mapped_to": gpu.pk}
    )
    assert response.status_code == 302
    assert GPUAlias.objects.get(normalised=item.normalised).gpu == gpu
    assert UnmatchedGPUName.objects.get(pk=item.pk).mapped_to == gpu


def test_price_changelist_filters_on_capacity_blocks(curator):
    url = reverse("admin:catalog_price_changelist")
    assert "Capacity block (days, booked ahead)" in curator.get(url).content.decode()
    response = curator.get(url + "?pricing_model__exact=capacity_block")
    assert response.status_code == 200
    shown = response.context["cl"].result_count
    assert shown == Price.objects.filter(pricing_model="capacity_block").count() > 0
