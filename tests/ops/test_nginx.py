"""The compose nginx (ops/nginx/nginx.conf) run for real in front of a one-request-at-a-time
backend (what a sync gunicorn worker is): its configuration loads, a client trickling its body
does not hold the backend, oversized bodies never reach it, and the headers it passes on are the
ones the app's TRUSTED_PROXY_COUNT=1 and load shedding read.

Skipped where nginx is not installed (Debian: ``apt-get install nginx``)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from django.test import RequestFactory, override_settings

from ops.security import client_ip
from ops.throttling import queued_seconds

ROOT = Path(__file__).resolve().parents[2]
CONF = ROOT / "ops" / "nginx" / "nginx.conf"
NGINX = shutil.which("nginx") or next(
    (p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if Path(p).exists()), None
)
pytestmark = pytest.mark.skipif(NGINX is None, reason="nginx is not installed")


class _Recorder(BaseHTTPRequestHandler):
    """Answers 200 and records when each request reached it, its headers and its body."""

    def do_POST(self) -> None:
        arrived = time.monotonic()
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.seen.append({"at": arrived, "headers": dict(self.headers), "body": body})
        self._answer()

    def do_GET(self) -> None:
        self.server.seen.append({"at": time.monotonic(), "headers": dict(self.headers)})
        self._answer()

    def _answer(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args) -> None:
        pass


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _config(tmp_path: Path, backend_port: int, port: int) -> Path:
    """The repository's nginx.conf with only its addresses and writable paths moved."""
    text = CONF.read_text()
    replacements = {
        "server web:8000;": f"server 127.0.0.1:{backend_port};",
        "listen 8080;": f"listen 127.0.0.1:{port};",
        "pid /tmp/nginx.pid;": f"pid {tmp_path}/nginx.pid;",
        "http {": "http {\n"
        + "".join(
            f"    {kind}_temp_path {tmp_path}/{kind};\n"
            for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
        ),
    }
    for old, new in replacements.items():
        assert text.count(old) == 1, f"nginx.conf changed shape: {old!r}"
        text = text.replace(old, new)
    path = tmp_path / "nginx.conf"
    path.write_text(text)
    return path


@pytest.fixture
def proxy(tmp_path):
    """nginx on a free port in front of a single-threaded recording backend."""
    backend = HTTPServer(("127.0.0.1", 0), _Recorder)
    backend.seen = []
    threading.Thread(target=backend.serve_forever, daemon=True).start()
    port = _free_port()
    conf = _config(tmp_path, backend.server_address[1], port)
    command = [NGINX, "-c", str(conf), "-p", str(tmp_path), "-e", str(tmp_path / "error.log")]
    checked = subprocess.run([*command, "-t"], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    server = subprocess.Popen([*command, "-g", "daemon off;"])
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, (tmp_path / "error.log").read_text()
                time.sleep(0.05)
        yield port, backend
    finally:
        server.terminate()
        server.wait(timeout=10)
        backend.shutdown()
        backend.server_close()


def _send(port: int, head: str, body_parts: list[bytes], pause_s: float = 0.0) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head.encode())
        for part in body_parts:
            time.sleep(pause_s)
            sock.sendall(part)
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
        return answer


def _head(method: str, path: str, length: int | None = None, extra: str = "") -> str:
    lines = [f"{method} {path} HTTP/1.1", "Host: localhost", "Connection: close"]
    if length is not None:
        lines += ["Content-Type: application/json", f"Content-Length: {length}"]
    return "\r\n".join(lines) + "\r\n" + extra + "\r\n"


def test_the_config_loads(proxy):
    port, _ = proxy
    assert _send(port, _head("GET", "/livez"), []).startswith(b"HTTP/1.1 200")


PAUSE_S = 0.5  # between the four pieces of a slow client's body


def test_a_slow_body_is_buffered_and_does_not_hold_the_backend(proxy):
    port, backend = proxy
    parts = [b'{"workload": ', b'{"model": ', b'"llama-3-8b"}', b"}"]
    body = b"".join(parts)
    slow: dict[str, object] = {}

    def trickle() -> None:
        slow["answer"] = _send(port, _head("POST", "/api/estimate", len(body)), parts, PAUSE_S)
        slow["done"] = time.monotonic()

    started = time.monotonic()
    thread = threading.Thread(target=trickle)
    thread.start()
    time.sleep(0.3)  # the slow client is connected and has started its body
    fast = _send(port, _head("GET", "/api/gpus/"), [])
    fast_done = time.monotonic()
    thread.join(timeout=10)

    # The backend serves one request at a time, yet the fast request was answered while the
    # slow body was still arriving: nginx, not the backend, waited for it.
    assert fast.startswith(b"HTTP/1.1 200")
    assert fast_done - started < 1.5 < 4 * PAUSE_S <= slow["done"] - started
    assert slow["answer"].startswith(b"HTTP/1.1 200")
    posted = [r for r in backend.seen if "body" in r]
    assert len(posted) == 1
    # ... and passed the body on whole, with its length, once the last byte had come.
    assert posted[0]["body"] == body
    assert posted[0]["headers"]["Content-Length"] == str(len(body))
    assert posted[0]["at"] - started >= 4 * PAUSE_S


def test_an_oversized_body_is_refused_before_the_backend_in_the_api_shape(proxy):
    port, backend = proxy
    answer = _send(port, _head("POST", "/api/estimate", 2 * 1024 * 1024), [])
    assert answer.startswith(b"HTTP/1.1 413")
    assert b"Content-Type: application/json" in answer
    assert backend.seen == []


def test_a_burst_over_the_per_address_rate_gets_json_429s_with_retry_after(proxy):
    port, backend = proxy
    # 30 requests/s with a burst of 60: sent back to back (faster than 30/s even on a busy
    # machine), the first refusal comes after at least the 60 the burst allows.
    refused = b""
    for _ in range(400):
        answer = _send(port, _head("GET", "/api/gpus/"), [])
        if answer.startswith(b"HTTP/1.1 429"):
            refused = answer
            break
    assert refused, "no request was refused"
    assert len(backend.seen) >= 60
    assert b"Retry-After: 1" in refused and b"application/json" in refused


@override_settings(TRUSTED_PROXY_COUNT=1)
def test_forwarded_headers_are_what_the_app_trusts(proxy):
    """A client's own X-Forwarded-For and X-Request-Start do not survive: with
    TRUSTED_PROXY_COUNT=1 the app sees the address nginx saw and nginx's own queue stamp."""
    port, backend = proxy
    forged = "X-Forwarded-For: 203.0.113.9\r\nX-Request-Start: t=1\r\n"
    assert _send(port, _head("GET", "/api/gpus/", extra=forged), []).startswith(b"HTTP/1.1 200")
    headers = backend.seen[-1]["headers"]
    assert headers["X-Forwarded-For"] == "203.0.113.9, 127.0.0.1"
    request = RequestFactory().get(
        "/api/gpus/",
        REMOTE_ADDR="127.0.0.1",  # gunicorn sees nginx
        HTTP_X_FORWARDED_FOR=headers["X-Forwarded-For"],
        HTTP_X_REQUEST_START=headers["X-Request-Start"],
    )
    assert client_ip(request) == "127.0.0.1"
    waited = queued_seconds(request, time.time())
    assert waited is not None and 0 <= waited < 5
    assert headers["X-Forwarded-Proto"] == "http"
