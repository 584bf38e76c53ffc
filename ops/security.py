"""Security headers and guards: the Content-Security-Policy, the client address behind trusted
proxies, the admin login lockout and the /metrics network rule."""

from __future__ import annotations

import hashlib
import ipaddress
import logging
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse

logger = logging.getLogger(__name__)


def client_ip(request: HttpRequest) -> str:
    """The caller's address: REMOTE_ADDR, or with ``TRUSTED_PROXY_COUNT`` = n > 0 proxies in
    front, the address the outermost trusted proxy saw (the n-th entry from the right of
    ``X-Forwarded-For``), so a caller cannot choose it by sending the header itself."""
    remote = request.META.get("REMOTE_ADDR", "") or ""
    proxies = settings.TRUSTED_PROXY_COUNT
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if proxies <= 0 or not forwarded:
        return remote
    hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
    if not hops:
        return remote
    return hops[-min(proxies, len(hops))]


# --- Content-Security-Policy --------------------------------------------------------------


def _policy(directives: dict[str, str]) -> str:
    return "; ".join(f"{name} {value}" for name, value in directives.items())


class ContentSecurityPolicyMiddleware:
    """Sends ``CONTENT_SECURITY_POLICY`` on every response (a view's own header wins); paths under
    ``CONTENT_SECURITY_POLICY_RELAXED_PATHS`` (the vendored API docs and the browsable API, which
    style elements inline) get ``CONTENT_SECURITY_POLICY_RELAXED``. Scripts are 'self' on both."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.strict = _policy(settings.CONTENT_SECURITY_POLICY)
        self.relaxed = _policy(settings.CONTENT_SECURITY_POLICY_RELAXED)
        self.relaxed_paths = tuple(settings.CONTENT_SECURITY_POLICY_RELAXED_PATHS)

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        relaxed = request.path.startswith(self.relaxed_paths)
        response.setdefault("Content-Security-Policy", self.relaxed if relaxed else self.strict)
        return response


# --- Admin login lockout ------------------------------------------------------------------


def _key(kind: str, value: str) -> str:
    digest = hashlib.sha256(value.strip().lower().encode()).hexdigest()[:32]
    return f"login-failures:{kind}:{digest}"


def _count(key: str) -> int:
    value = cache.get(key)
    return int(value) if isinstance(value, int) else 0


def _bump(key: str) -> None:
    window_s = settings.ADMIN_LOGIN_LOCKOUT_SECONDS
    if not cache.add(key, 1, timeout=window_s):
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.add(key, 1, timeout=window_s)


def login_failed(
    sender: Any, credentials: dict, request: HttpRequest | None = None, **_: Any
) -> None:
    """``user_login_failed`` receiver: count the failure for the address and the username."""
    if request is None:
        return
    _bump(_key("ip", client_ip(request)))
    username = str(credentials.get("username") or "")
    if username:
        _bump(_key("user", username))
    logger.warning("login failed", extra={"username": username[:150], "ip": client_ip(request)})


def login_succeeded(
    sender: Any, request: HttpRequest | None = None, user: Any = None, **_: Any
) -> None:
    """``user_logged_in`` receiver: a good login clears the username's failures."""
    if user is not None:
        cache.delete(_key("user", user.get_username()))


class AdminLoginThrottleMiddleware:
    """Refuses (429 with Retry-After) admin login attempts from an address or for a username that
    failed ``ADMIN_LOGIN_MAX_FAILURES_PER_IP`` / ``_PER_USER`` times in the last
    ``ADMIN_LOGIN_LOCKOUT_SECONDS``, before the password is even checked."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method == "POST" and request.path == _admin_login_path():
            username = request.POST.get("username", "")
            over_ip = (
                _count(_key("ip", client_ip(request))) >= settings.ADMIN_LOGIN_MAX_FAILURES_PER_IP
            )
            over_user = bool(username) and (
                _count(_key("user", username)) >= settings.ADMIN_LOGIN_MAX_FAILURES_PER_USER
            )
            if over_ip or over_user:
                logger.warning("admin login locked out", extra={"ip": client_ip(request)})
                response = HttpResponse(
                    "Too many failed logins. Try again later.\n",
                    status=429,
                    content_type="text/plain; charset=utf-8",
                )
                response["Retry-After"] = str(settings.ADMIN_LOGIN_LOCKOUT_SECONDS)
                return response
        return self.get_response(request)


def _admin_login_path() -> str:
    from django.urls import reverse

    return reverse("admin:login")


# --- /metrics network rule ----------------------------------------------------------------


def address_allowed(address: str, networks: list[str]) -> bool:
    """True when ``address`` is inside one of ``networks`` (CIDR strings)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in ipaddress.ip_network(net, strict=False) for net in networks)
