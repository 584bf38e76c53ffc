"""Curator review of quarantined prices."""

from django.contrib import admin, messages

from catalog.models import QuarantinedPrice

from . import services


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
