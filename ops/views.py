"""/livez, /readyz, /healthz, /metrics and the downloadable CLI client."""

from __future__ import annotations

import hmac
import logging
from pathlib import Path

from django.conf import settings
from django.db import connection
from django.http import FileResponse, HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.views.decorators.http import require_GET
from redis.backoff import NoBackoff
from redis.retry import Retry

from .cache import DEFAULT_CONNECT_TIMEOUT_S, DEFAULT_SOCKET_TIMEOUT_S, RateLimitedWarning
from .metrics import render_latest
from .security import address_allowed, client_ip

logger = logging.getLogger(__name__)
CLIENT_FILE = Path(settings.BASE_DIR) / "clients" / "gpuatlas.py"


_warn_database = RateLimitedWarning(logger)
_warn_redis = RateLimitedWarning(logger)


def _check_database() -> dict:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # any driver error means the database is not usable
        _warn_database("health check: database unavailable (%s: %s)", type(exc).__name__, exc)
        return {"ok": False, "error": type(exc).__name__}
    return {"ok": True, "vendor": connection.vendor}


def _redis_timeouts() -> tuple[float, float]:
    options = settings.CACHES.get("default", {}).get("OPTIONS", {})
    return (
        float(options.get("socket_connect_timeout", DEFAULT_CONNECT_TIMEOUT_S)),
        float(options.get("socket_timeout", DEFAULT_SOCKET_TIMEOUT_S)),
    )


def _check_redis() -> dict:
    if not settings.REDIS_URL:
        return {"ok": True, "configured": False}
    import redis

    connect_timeout_s, timeout_s = _redis_timeouts()
    try:
        client = redis.Redis.from_url(
            settings.REDIS_URL,
            socket_connect_timeout=connect_timeout_s,
            socket_timeout=timeout_s,
            retry=Retry(NoBackoff(), 0),
        )
        try:
            client.ping()
        finally:
            client.close()
    except Exception as exc:  # connection refused, timeout, auth: Redis is down for us
        _warn_redis("health check: redis unavailable (%s: %s)", type(exc).__name__, exc)
        return {"ok": False, "configured": True, "error": type(exc).__name__}
    return {"ok": True, "configured": True}


def _checks() -> tuple[dict, list[str]]:
    checks = {"database": _check_database(), "redis": _check_redis()}
    return checks, [name for name, state in checks.items() if not state["ok"]]


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
def livez(request: HttpRequest) -> JsonResponse:
    """Liveness: 200 while this process serves requests; touches no dependency."""
    return JsonResponse({"status": "ok"})


@require_GET
def readyz(request: HttpRequest) -> JsonResponse:
    """Readiness for a load balancer: 503 only when the database (needed for every answer) is
    down; with Redis down reads are still served (local cache), so 200 ``degraded``."""
    checks, down = _checks()
    if not checks["database"]["ok"]:
        status, code = "unavailable", 503
    else:
        status, code = ("degraded" if down else "ready"), 200
    return JsonResponse({"status": status, "down": down, "checks": checks}, status=code)


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """For monitoring: 200 when the database and Redis answer, 503 naming what is down when
    either does not; refresh ages as data. Probes belong on /livez and /readyz."""
    checks, down = _checks()
    body = {
        "status": "unavailable" if down else "ok",
        "down": down,
        "checks": checks,
        "providers": _refresh_ages(checks["database"]["ok"]),
    }
    return JsonResponse(body, status=503 if down else 200)


@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    """Prometheus text format. With METRICS_TOKEN set, only for ``Authorization: Bearer <token>``;
    without one, only for callers inside METRICS_ALLOWED_NETWORKS (loopback by default)."""
    token = settings.METRICS_TOKEN
    if token:
        given = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if not hmac.compare_digest(given.encode(), token.encode()):
            return HttpResponse(
                "metrics need a bearer token\n", status=401, content_type="text/plain"
            )
    elif not address_allowed(client_ip(request), settings.METRICS_ALLOWED_NETWORKS):
        return HttpResponse(
            "metrics are served to METRICS_ALLOWED_NETWORKS or with METRICS_TOKEN\n",
            status=403,
            content_type="text/plain",
        )
    return HttpResponse(render_latest(), content_type="text/plain; version=0.0.4; charset=utf-8")


@require_GET
def client_file(request: HttpRequest) -> FileResponse:
    """The stand-alone CLI, for pipelines: ``curl -fsS $GPUATLAS_URL/client/gpuatlas.py``."""
    return FileResponse(
        CLIENT_FILE.open("rb"), content_type="text/x-python; charset=utf-8", filename="gpuatlas.py"
    )
