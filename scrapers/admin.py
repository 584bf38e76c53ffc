"""The refresh bookkeeping curators act on: held runs, quarantined prices, unmatched names and
price disagreements the cross-check filed."""

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from catalog import choices
from catalog.models import (
    CrossCheckRun,
    PriceDisagreement,
    QuarantinedPrice,
    ScrapeRun,
    UnmatchedGPUName,
)
from catalog.services import unmatched_gpu_name_map

from . import crosscheck, services


@admin.register(ScrapeRun)
class ScrapeRunAdmin(admin.ModelAdmin):
    """Every refresh; a held one waits here for a curator to approve or reject it."""

    list_display = [
        "provider", "started_at", "status", *ScrapeRun.COUNT_FIELDS, "warning_count", "held_reason",
    ]  # fmt: skip
    list_filter = ["status", "provider", "trigger"]
    list_select_related = ["provider"]
    date_hierarchy = "started_at"
    exclude = ["held_records"]  # can be thousands of records; the count is in records_seen
    actions = ["approve_held", "reject_held"]

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in self.model._meta.fields if f.name != "held_records"]

    def has_add_permission(self, request):
        return False

    @admin.display(description="warnings")
    def warning_count(self, obj: ScrapeRun) -> int:
        return len(obj.warnings or [])

    @admin.action(description="Approve held runs: ingest their records now")
    def approve_held(self, request: HttpRequest, queryset: QuerySet[ScrapeRun]) -> None:
        done = 0
        for run in queryset.filter(status=choices.ScrapeStatus.HELD).select_related("provider"):
            try:
                services.held_run_approve(run=run, user=request.user.get_username())
            except (services.HeldRunDecisionError, services.RefreshInProgress) as exc:
                self.message_user(request, str(exc), level=messages.WARNING)
                continue
            done += 1
        self.message_user(request, f"Approved {done} held run(s).")

    @admin.action(description="Reject held runs: keep the current prices")
    def reject_held(self, request: HttpRequest, queryset: QuerySet[ScrapeRun]) -> None:
        done = 0
        for run in queryset.filter(status=choices.ScrapeStatus.HELD):
            services.held_run_reject(run=run, user=request.user.get_username())
            done += 1
        self.message_user(request, f"Rejected {done} held run(s).")


@admin.register(UnmatchedGPUName)
class UnmatchedGPUNameAdmin(admin.ModelAdmin):
    """Names refreshes could not map. A GPU name: choose a GPU and save to create the alias; a
    SKU, instance family or region: fix the parser's table or the fixtures (docs/operations.md)."""

    list_display = [
        "name", "kind", "provider", "times_seen", "first_seen_at", "last_seen_at", "mapped_to",
    ]  # fmt: skip
    list_filter = ["kind", "provider", ("mapped_to", admin.EmptyFieldListFilter)]
    search_fields = ["name", "normalised"]
    list_select_related = ["provider", "mapped_to"]
    autocomplete_fields = ["mapped_to"]
    readonly_fields = [
        "provider",
        "kind",
        "name",
        "normalised",
        "times_seen",
        "first_seen_at",
        "last_seen_at",
        "example",
    ]

    def get_readonly_fields(self, request, obj=None):
        fields = list(self.readonly_fields)
        if obj is not None and obj.kind != choices.UnmatchedKind.GPU:
            fields.append("mapped_to")  # only a GPU name can be mapped through an alias
        return fields

    def has_add_permission(self, request):
        return False

    def save_model(self, request, obj, form, change):
        if obj.mapped_to_id and "mapped_to" in form.changed_data:
            unmatched_gpu_name_map(item=obj, gpu=obj.mapped_to)
            self.message_user(request, f"{obj.name!r} now maps to {obj.mapped_to}.")
        else:
            super().save_model(request, obj, form, change)


@admin.register(QuarantinedPrice)
class QuarantinedPriceAdmin(admin.ModelAdmin):
    """Figures a refresh held back (zero, or moved beyond the factor): approve or reject them."""

    list_display = [
        "instance_type", "region", "pricing_model", "amount", "currency", "usd_per_hour",
        "previous_usd_per_hour", "reason", "observed_at", "status",
    ]  # fmt: skip
    list_filter = ["status", "pricing_model", "instance_type__provider"]
    search_fields = ["instance_type__name", "region__code", "reason"]
    list_select_related = ["instance_type__provider", "region__provider"]
    actions = ["approve", "reject"]

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in self.model._meta.fields]

    def has_add_permission(self, request):
        return False

    @admin.action(description="Approve: make these the current prices")
    def approve(self, request, queryset):
        done = 0
        for item in queryset.filter(status=QuarantinedPrice.Status.PENDING).select_related(
            "instance_type", "region", "scrape_run"
        ):
            try:
                services.quarantined_price_approve(item=item, user=request.user.get_username())
            except services.QuarantineDecisionError as exc:
                self.message_user(request, str(exc), level=messages.WARNING)
                continue
            done += 1
        self.message_user(request, f"Approved {done} price(s).")

    @admin.action(description="Reject: keep the current prices")
    def reject(self, request, queryset):
        done = 0
        for item in queryset.filter(status=QuarantinedPrice.Status.PENDING):
            services.quarantined_price_reject(item=item, user=request.user.get_username())
            done += 1
        self.message_user(request, f"Rejected {done} price(s).")


@admin.register(CrossCheckRun)
class CrossCheckRunAdmin(admin.ModelAdmin):
    """Every cross-check against the second source: what it read, compared and filed."""

    list_display = [
        "provider",
        "started_at",
        "status",
        *CrossCheckRun.COUNT_FIELDS,
        "source_commit",
    ]
    list_filter = ["status", "provider", "trigger"]
    list_select_related = ["provider"]
    date_hierarchy = "started_at"

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in self.model._meta.fields]

    def has_add_permission(self, request):
        return False


@admin.register(PriceDisagreement)
class PriceDisagreementAdmin(admin.ModelAdmin):
    """Prices a second source puts more than the tolerance away: accept its figure or dismiss it.

    Accepting writes the second figure as the current price (a curator's price, with history and a
    source note naming the source and commit); dismissing keeps ours. Neither figure is filed again
    unless one of them moves (docs/operations.md).
    """

    list_display = [
        "price", "provider", "primary_usd_per_hour", "second_usd_per_hour", "ratio",
        "primary_observed_at", "source_commit", "status", "times_seen", "last_seen_at",
    ]  # fmt: skip
    list_filter = ["status", "provider", "price__pricing_model"]
    search_fields = ["price__instance_type__name", "price__region__code", "note"]
    list_select_related = ["provider", "price__instance_type__provider", "price__region"]
    actions = ["accept", "dismiss"]

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in self.model._meta.fields if f.name != "note"]

    def has_add_permission(self, request):
        return False

    @admin.action(description="Accept: make the second source's figure the current price")
    def accept(self, request: HttpRequest, queryset: QuerySet[PriceDisagreement]) -> None:
        done = 0
        for item in queryset.filter(status=choices.DisagreementStatus.OPEN).select_related(
            "provider"
        ):
            try:
                crosscheck.price_disagreement_accept(item=item, user=request.user.get_username())
            except crosscheck.DisagreementDecisionError as exc:
                self.message_user(request, str(exc), level=messages.WARNING)
                continue
            done += 1
        self.message_user(request, f"Accepted {done} disagreement(s).")

    @admin.action(description="Dismiss: keep the current prices")
    def dismiss(self, request: HttpRequest, queryset: QuerySet[PriceDisagreement]) -> None:
        done = 0
        for item in queryset.filter(status=choices.DisagreementStatus.OPEN):
            crosscheck.price_disagreement_dismiss(item=item, user=request.user.get_username())
            done += 1
        self.message_user(request, f"Dismissed {done} disagreement(s).")
