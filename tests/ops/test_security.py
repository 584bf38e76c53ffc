"""Hardening: Content-Security-Policy, admin login lockout, the /metrics network rule and the
client address behind trusted proxies."""

from __future__ import annotations

import re
from unittest import mock

import pytest
from django.core.cache import cache

pytestmark = pytest.mark.django_db

PAGES = [
    "/", "/plan", "/plan?model=llama-3-8b&task=finetune&method=lora&tokens=200000000",
    "/compare", "/gpus", "/gpus/h100-sxm", "/providers", "/providers/aws", "/admin/login/",
]  # fmt: skip


@pytest.fixture(autouse=True)
def _clear_cache():
    cache.clear()
    yield
    cache.clear()


def _directives(header: str) -> dict[str, str]:
    return dict([*part.strip().split(" ", 1), ""][:2] for part in header.split(";") if part.strip())


@pytest.mark.parametrize("path", PAGES)
def test_every_page_has_a_strict_content_security_policy(client, path):
    response = client.get(path)
    assert response.status_code == 200, path
    policy = _directives(response["Content-Security-Policy"])
    assert policy["script-src"] == "'self'"
    assert policy["style-src"] == "'self'" and "style-src-attr" not in policy
    assert policy["object-src"] == "'none'" and policy["frame-ancestors"] == "'none'"


@pytest.mark.parametrize("path", PAGES)
def test_pages_use_no_inline_script_or_style_element(client, path):
    html = client.get(path).content.decode()
    inline_scripts = [
        tag
        for tag in re.findall(r"<script\b[^>]*>", html, flags=re.I)
        if "src=" not in tag and 'type="application/json"' not in tag
    ]
    assert inline_scripts == [], path
    assert not re.search(r"<style\b", html, flags=re.I), path
    assert not re.search(r"\sstyle\s*=", html, flags=re.I), path  # no style attributes either
    assert not re.search(r"\son[a-z]+\s*=", html, flags=re.I), path
    assert "javascript:" not in html.lower(), path


def test_api_docs_allow_inline_styles_but_not_inline_scripts(client):
    response = client.get("/api/docs/")
    assert response.status_code == 200
    policy = _directives(response["Content-Security-Policy"])
    assert policy["script-src"] == "'self'"
    assert "'unsafe-inline'" in policy["style-src"]
    # Swagger UI's start-up script is a separate file, so script-src 'self' is enough.
    assert not re.search(r"<script>", response.content.decode())


def _login(client, username: str, password: str, **extra):
    return client.post(
        "/admin/login/?next=/admin/", {"username": username, "password": password}, **extra
    )


def test_admin_login_locks_a_username_out_after_repeated_failures(
    client, django_user_model, settings
):
    settings.ADMIN_LOGIN_MAX_FAILURES_PER_USER = 3
    django_user_model.objects.create_superuser("root", "root@example.org", "right-pw-123456")
    codes = [_login(client, "root", f"wrong-{i}").status_code for i in range(3)]
    assert codes == [200, 200, 200]  # the form again, with an error
    locked = _login(client, "root", "right-pw-123456")
    assert locked.status_code == 429 and int(locked["Retry-After"]) > 0
    # Another username from another address is unaffected.
    django_user_model.objects.create_superuser("ops", "ops@example.org", "ops-pw-123456")
    ok = _login(client, "ops", "ops-pw-123456", REMOTE_ADDR="10.1.2.3")
    assert ok.status_code == 302


def test_admin_login_locks_an_address_out_whatever_the_usernames(client, settings):
    settings.ADMIN_LOGIN_MAX_FAILURES_PER_IP = 4
    for i in range(4):
        assert _login(client, f"guess-{i}", "x").status_code == 200
    assert _login(client, "another-guess", "x").status_code == 429


def test_a_good_login_clears_the_username_failures(client, django_user_model, settings):
    settings.ADMIN_LOGIN_MAX_FAILURES_PER_USER = 3
    django_user_model.objects.create_superuser("root", "root@example.org", "right-pw-123456")
    for _ in range(2):
        _login(client, "root", "wrong")
    assert _login(client, "root", "right-pw-123456").status_code == 302
    client.logout()
    for _ in range(2):
        assert _login(client, "root", "wrong").status_code == 200


def test_lockout_cannot_be_dodged_by_varying_x_forwarded_for(client, settings):
    settings.TRUSTED_PROXY_COUNT = 1
    settings.ADMIN_LOGIN_MAX_FAILURES_PER_IP = 3
    for i in range(3):
        _login(client, f"u{i}", "x", HTTP_X_FORWARDED_FOR=f"198.51.100.{i}, 203.0.113.9")
    blocked = _login(client, "u9", "x", HTTP_X_FORWARDED_FOR="198.51.100.77, 203.0.113.9")
    assert blocked.status_code == 429
    # A different client behind the same proxy is not blocked.
    other = _login(client, "u9", "x", HTTP_X_FORWARDED_FOR="203.0.113.10")
    assert other.status_code == 200


def test_anonymous_throttle_cannot_be_dodged_by_varying_x_forwarded_for(api_client, settings):
    from rest_framework.throttling import AnonRateThrottle

    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    with mock.patch.object(AnonRateThrottle, "THROTTLE_RATES", {"anon": "3/minute"}):
        codes = [
            api_client.get(
                "/api/interconnects/", HTTP_X_FORWARDED_FOR=f"192.0.2.{i}, 203.0.113.9"
            ).status_code
            for i in range(5)
        ]
    assert codes[:3] == [200, 200, 200] and codes[-1] == 429


def test_metrics_are_refused_outside_the_allowed_networks(client, settings):
    settings.METRICS_TOKEN = ""
    assert client.get("/metrics").status_code == 200  # the test client is 127.0.0.1
    assert client.get("/metrics", REMOTE_ADDR="203.0.113.5").status_code == 403
    settings.METRICS_ALLOWED_NETWORKS = ["203.0.113.0/24"]
    assert client.get("/metrics", REMOTE_ADDR="203.0.113.5").status_code == 200


def test_metrics_network_rule_reads_the_client_behind_the_proxy(client, settings):
    settings.METRICS_TOKEN = ""
    settings.TRUSTED_PROXY_COUNT = 1
    # The caller claims loopback; the proxy (127.0.0.1 itself) appends the real address.
    spoofed = client.get("/metrics", HTTP_X_FORWARDED_FOR="127.0.0.1, 203.0.113.5")
    assert spoofed.status_code == 403


def test_client_ip_takes_the_trusted_hop(rf, settings):
    from ops.security import client_ip

    request = rf.get("/", HTTP_X_FORWARDED_FOR="1.1.1.1, 2.2.2.2, 3.3.3.3", REMOTE_ADDR="10.0.0.1")
    settings.TRUSTED_PROXY_COUNT = 0
    assert client_ip(request) == "10.0.0.1"
    settings.TRUSTED_PROXY_COUNT = 1
    assert client_ip(request) == "3.3.3.3"
    settings.TRUSTED_PROXY_COUNT = 2
    assert client_ip(request) == "2.2.2.2"
    settings.TRUSTED_PROXY_COUNT = 9
    assert client_ip(request) == "1.1.1.1"
