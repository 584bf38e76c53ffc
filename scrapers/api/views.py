"""POST /api/refresh/<provider>/: queue a refresh (token with the right permission only)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from catalog.models import Provider

from ..tasks import refresh_provider


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
