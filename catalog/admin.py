"""The curators' workplace: every catalog table, price locks, unmatched names, CSV price sheets."""

from __future__ import annotations

from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse

from . import services
from .audit import audit_counts, catalog_audit
from .forms import PriceSheetForm
from .gpu_names import normalise_gpu_name
from .models import (
    GPU,
    CurrencyRate,
    GPUAlias,
    InstanceType,
    Interconnect,
    Price,
    PriceHistory,
    Provider,
    Region,
)


class GPUAliasInline(admin.TabularInline):
    model = GPUAlias
    extra = 1
    fields = ["name", "normalised"]
    readonly_fields = ["normalised"]


@admin.register(GPU)
class GPUAdmin(admin.ModelAdmin):
    list_display = [
        "name", "slug", "vendor", "memory_gib", "memory_bandwidth_gb_s", "bf16_tflops",
        "fp8_tflops", "form_factor", "nvlink_bandwidth_gb_s", "segment", "datacenter_use_allowed",
    ]  # fmt: skip
    list_filter = ["vendor", "segment", "form_factor", "architecture", "datacenter_use_allowed"]
    search_fields = ["name", "slug", "aliases__name"]
    autocomplete_fields = ["export_variant_of"]
    inlines = [GPUAliasInline]

    def save_formset(self, request, form, formset, change):
        # Aliases typed by a curator get their lookup key the same way the loader makes it.
        for alias in formset.save(commit=False):
            alias.normalised = normalise_gpu_name(alias.name)
            alias.save()
        for obj in formset.deleted_objects:
            obj.delete()


@admin.register(GPUAlias)
class GPUAliasAdmin(admin.ModelAdmin):
    list_display = ["name", "normalised", "gpu"]
    search_fields = ["name", "normalised", "gpu__name"]
    list_select_related = ["gpu"]
    autocomplete_fields = ["gpu"]
    readonly_fields = ["normalised"]

    def save_model(self, request, obj, form, change):
        obj.normalised = normalise_gpu_name(obj.name)
        super().save_model(request, obj, form, change)


@admin.register(Interconnect)
class InterconnectAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "kind", "bandwidth_value", "bandwidth_unit", "scope", "rdma"]
    list_filter = ["kind", "scope", "rdma"]
    search_fields = ["name", "slug"]
    readonly_fields = ["bandwidth_gb_s"]


class RegionInline(admin.TabularInline):
    model = Region
    extra = 0
    fields = ["code", "name", "country", "geography", "mainland_china"]


@admin.register(Provider)
class ProviderAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "slug",
        "kind",
        "home_currency",
        "mainland_china",
        "billing_granularity",
        "scraper_key",
    ]
    list_filter = ["kind", "mainland_china", "home_currency"]
    search_fields = ["name", "slug"]
    inlines = [RegionInline]
    actions = ["refresh_now"]

    @admin.action(description="Refresh prices now")
    def refresh_now(self, request, queryset):
        from scrapers.tasks import (
            refresh_provider,
        )  # scrapers build on the catalog, not the reverse

        slugs = [p.slug for p in queryset.with_scraper()]
        for slug in slugs:
            refresh_provider.delay(slug, "admin")
        self.message_user(
            request, f"Refresh queued for {', '.join(slugs) or 'no provider with a scraper'}."
        )


@admin.register(Region)
class RegionAdmin(admin.ModelAdmin):
    list_display = ["code", "name", "provider", "country", "geography", "mainland_china"]
    list_filter = ["provider", "geography", "mainland_china", "country"]
    search_fields = ["code", "name", "provider__name"]
    list_select_related = ["provider"]
    autocomplete_fields = ["provider"]


@admin.register(InstanceType)
class InstanceTypeAdmin(admin.ModelAdmin):
    list_display = [
        "name", "provider", "gpu", "gpu_count", "gpu_sharing", "vcpus", "ram_gib",
        "local_disk_gb", "interconnect_intra", "interconnect_inter", "network_gbps", "is_active",
    ]  # fmt: skip
    list_filter = ["provider", "gpu", "gpu_sharing", "local_disk_type", "is_active"]
    search_fields = ["name", "provider__name", "gpu__name"]
    list_select_related = ["provider", "gpu", "interconnect_intra", "interconnect_inter"]
    autocomplete_fields = ["provider", "gpu", "interconnect_intra", "interconnect_inter"]


@admin.register(Price)
class PriceAdmin(admin.ModelAdmin):
    """Prices scrapers own are read-only here except the lock; curators change prices by sheet."""

    change_list_template = "admin/catalog/price/change_list.html"
    list_display = [
        "instance_type", "region", "pricing_model", "amount", "currency", "unit",
        "usd_per_gpu_hour", "observed_at", "source", "locked", "gone_at",
    ]  # fmt: skip
    list_filter = [
        "pricing_model",
        "source",
        "locked",
        "currency",
        "instance_type__provider",
        "instance_type__gpu",
    ]
    search_fields = ["instance_type__name", "region__code", "instance_type__gpu__name"]
    list_select_related = ["instance_type__provider", "instance_type__gpu", "region__provider"]
    autocomplete_fields = ["instance_type", "region"]
    readonly_fields = [
        "usd_per_hour", "usd_per_gpu_hour", "source", "scrape_run", "gone_at", "missed_runs",
        "updated_at",
    ]  # fmt: skip
    actions = ["lock_prices", "unlock_prices"]
    date_hierarchy = "observed_at"

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        if obj is not None:  # the natural key and the scraped figures are not edited by hand
            fields += [
                "instance_type",
                "region",
                "pricing_model",
                "amount",
                "currency",
                "unit",
                "observed_at",
                "source_url",
            ]
        return fields

    def has_add_permission(self, request):
        return False  # prices arrive from scrapers, fixtures or a price sheet (with history)

    @admin.action(description="Lock: scrapers will not overwrite")
    def lock_prices(self, request, queryset):
        updated = queryset.update(locked=True)
        self.message_user(request, f"Locked {updated} price(s).")

    @admin.action(description="Unlock: scrapers may update")
    def unlock_prices(self, request, queryset):
        updated = queryset.update(locked=False)
        self.message_user(request, f"Unlocked {updated} price(s).")

    def get_urls(self):
        extra = [
            path(
                "import-sheet/",
                self.admin_site.admin_view(self.import_sheet_view),
                name="catalog_price_import_sheet",
            ),
            path(
                "audit/",
                self.admin_site.admin_view(self.audit_view),
                name="catalog_price_audit",
            ),
        ]
        return extra + super().get_urls()

    def audit_view(self, request: HttpRequest) -> HttpResponse:
        """Read-only: what `manage.py audit_catalog` reports, for curators."""
        findings = catalog_audit()
        context = {
            **self.admin_site.each_context(request),
            "title": "Catalog audit",
            "findings": findings,
            "counts": audit_counts(findings),
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/catalog/price/audit.html", context)

    def import_sheet_view(self, request: HttpRequest) -> HttpResponse:
        if not request.user.has_perm("catalog.change_price"):
            messages.error(request, "You may not change prices.")
            return redirect(reverse("admin:catalog_price_changelist"))
        report = None
        form = PriceSheetForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            report = services.price_sheet_import(text=form.cleaned_data["sheet"])
            if report.applied:
                messages.success(request, f"Applied {report.rows} row(s): {report.events}")
                return redirect(reverse("admin:catalog_price_changelist"))
        context = {
            **self.admin_site.each_context(request),
            "title": "Import a price sheet",
            "form": form,
            "report": report,
            "columns": services.PRICE_SHEET_COLUMNS,
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/catalog/price/import_sheet.html", context)


@admin.register(PriceHistory)
class PriceHistoryAdmin(admin.ModelAdmin):
    list_display = [
        "recorded_at",
        "event",
        "instance_type",
        "region",
        "pricing_model",
        "previous_amount",
        "amount",
        "currency",
        "source",
    ]
    list_filter = ["event", "pricing_model", "source", "instance_type__provider"]
    search_fields = ["instance_type__name", "region__code"]
    list_select_related = ["instance_type__provider", "region__provider"]
    date_hierarchy = "recorded_at"

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False  # append-only

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(CurrencyRate)
class CurrencyRateAdmin(admin.ModelAdmin):
    list_display = ["currency", "usd_per_unit", "as_of", "source"]
    list_filter = ["currency"]
    search_fields = ["currency"]
    date_hierarchy = "as_of"
