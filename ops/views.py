"""/healthz, /metrics and the downloadable CLI client."""

from __future__ import annotations

import hmac
import logging
from pathlib import Path

from django.conf import settings
from django.db import connection
from django.http import FileResponse, HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.views.decorators.http import require_GET

from .metrics import render_latest

logger = logging.getLogger(__name__)
CLIENT_FILE = Path(settings.BASE_DIR) / "clients" / "gpuatlas.py"


def _check_database() -> dict:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # any driver error means the database is not usable
        logger.exception("health check: database")
        return {"ok": False, "error": type(exc).__name__}
    return {"ok": True, "vendor": connection.vendor}


def _check_redis() -> dict:
    if not settings.REDIS_URL:
        return {"ok": True, "configured": False}
    import redis

    try:
        client = redis.Redis.from_url(
            settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=2
        )
        client.ping()
    except Exception as exc:  # connection refused, timeout, auth: Redis is down for us
        logger.exception("health check: redis")
        return {"ok": False, "configured": True, "error": type(exc).__name__}
    return {"ok": True, "configured": True}


def _refresh_ages(database_ok: bool) -> dict:
    if not database_ok:
        return {}
    from catalog.models import Provider
    from catalog.selectors import provider_last_success_at

    last = provider_last_success_at()
    now = timezone.now()
    return {
        slug: {
            "last_success_at": last[slug].isoformat() if last.get(slug) else None,
            "age_seconds": round((now - last[slug]).total_seconds()) if last.get(slug) else None,
        }
        for slug in Provider.objects.with_scraper().values_list("slug", flat=True)
    }


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """200 when the database and Redis answer, 503 when either does not; refresh ages as data."""
    database = _check_database()
    redis_state = _check_redis()
    ok = database["ok"] and redis_state["ok"]
    body = {
        "status": "ok" if ok else "unavailable",
        "checks": {"database": database, "redis": redis_state},
        "providers": _refresh_ages(database["ok"]),
    }
    return JsonResponse(body, status=200 if ok else 503)


@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    """Prometheus text format; with METRICS_TOKEN set, only for ``Authorization: Bearer <token>``."""
    token = settings.METRICS_TOKEN
    if token:
        given = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if not hmac.compare_digest(given, token):
            return HttpResponse(
                "metrics need a bearer token\n", status=401, content_type="text/plain"
            )
    return HttpResponse(render_latest(), content_type="text/plain; version=0.0.4; charset=utf-8")


@require_GET
def client_file(request: HttpRequest) -> FileResponse:
    """The stand-alone CLI, for pipelines: ``curl -fsS $GPUATLAS_URL/client/gpuatlas.py``."""
    return FileResponse(
        CLIENT_FILE.open("rb"), content_type="text/x-python; charset=utf-8", filename="gpuatlas.py"
    )
