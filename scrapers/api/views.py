"""POST /api/refresh/<provider>/: queue a refresh (token with the right permission only).
GET /api/scrape-runs/health/: each scraper's health (last good run, warnings, held runs, names)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api.errors import bad_request
from catalog.models import Provider

from ..selectors import scraper_health
from ..tasks import refresh_provider


class ScraperHealthSerializer(serializers.Serializer):
    """One provider's refresh health (scrapers.selectors.ScraperHealth)."""

    provider = serializers.CharField()
    state = serializers.ChoiceField(
        choices=["ok", "warnings", "held", "failing", "never"],
        help_text="held: a run waits for a curator; failing: the last run failed; warnings: "
        "unmatched names or warnings on the last run; never: no run yet.",
    )
    last_run_at = serializers.DateTimeField(allow_null=True)
    last_run_status = serializers.CharField()
    last_run_records = serializers.IntegerField()
    last_run_warnings = serializers.ListField(child=serializers.CharField())
    last_good_run_at = serializers.DateTimeField(allow_null=True)
    last_good_run_records = serializers.IntegerField()
    held_runs = serializers.IntegerField(
        help_text="Runs held for a curator (too few records, a GPU model lost)."
    )
    held_reason = serializers.CharField(help_text="Why the newest held run was held.")
    unmatched_names = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="Names no mapping knows yet, by kind (gpu, sku, instance, region).",
    )


class ScraperHealthView(APIView):
    """Each scraper's health: last good run, records, warnings, held runs, unmatched names."""

    @extend_schema(
        responses={200: ScraperHealthSerializer(many=True)},
        parameters=[
            OpenApiParameter("provider", str, description="one provider's slug; all when absent")
        ],
    )
    def get(self, request: Request) -> Response:
        provider = request.query_params.get("provider") or None
        health = scraper_health(provider=provider)
        if provider and not health:
            raise bad_request({"provider": [f"no provider with a scraper is called {provider!r}"]})
        return Response(ScraperHealthSerializer(health, many=True).data)


class CanTriggerRefresh(BasePermission):
    """Authenticated users holding ``catalog.add_scraperun`` (give it per user or group)."""

    def has_permission(self, request, view) -> bool:
        user = request.user
        return bool(user and user.is_authenticated and user.has_perm("catalog.add_scraperun"))


class RefreshView(APIView):
    """Queue a price refresh of one provider; the run appears under /api/scrape-runs/."""

    permission_classes = [CanTriggerRefresh]

    @extend_schema(
        request=None,
        responses={
            202: inline_serializer(
                "RefreshQueued",
                {"provider": serializers.CharField(), "task_id": serializers.CharField()},
            )
        },
    )
    def post(self, request: Request, provider: str) -> Response:
        target = get_object_or_404(Provider.objects.with_scraper(), slug=provider)
        result = refresh_provider.delay(target.slug, "api")
        return Response(
            {"provider": target.slug, "task_id": result.id}, status=status.HTTP_202_ACCEPTED
        )
