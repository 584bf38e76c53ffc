"""A loopback HTTP server that replays recorded provider pages, as CI's stand-in for the internet.

Each provider folder under tests/scrapers/pages/ has a ``manifest.json``: a list of routes
``{"method", "path", "query" (optional; every listed parameter must match), "file", "status"
(default 200), "content_type"}``. The server is mounted at ``/<provider>/`` so one server serves
every provider; a scraper's base URL is ``http://127.0.0.1:<port>/<provider>``.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import httpx

from scrapers.base import HttpClient

PAGES = Path(__file__).resolve().parent / "pages"


def load_routes(root: Path = PAGES) -> dict[str, list[dict]]:
    routes = {}
    for manifest in sorted(root.glob("*/manifest.json")):
        routes[manifest.parent.name] = json.loads(manifest.read_text(encoding="utf-8"))
    return routes


class _Handler(BaseHTTPRequestHandler):
    server_version = "GPUAtlasLoopback/1.0"
    routes: dict[str, list[dict]] = {}
    root: Path = PAGES
    overrides: dict[tuple[str, str], tuple[int, str, str]] = {}

    def log_message(self, *args) -> None:  # keep test output quiet
        pass

    def _serve(self, method: str) -> None:
        if method == "POST":
            length = int(self.headers.get("content-length") or 0)
            self.rfile.read(length)
        parts = urlsplit(self.path)
        provider, _, rest = parts.path.lstrip("/").partition("/")
        path = "/" + rest
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        override = self.overrides.get((provider, path))
        if override:
            status, content_type, body = override
            return self._reply(status, content_type, body.encode())
        for route in self.routes.get(provider, []):
            if route.get("method", "GET") != method or route["path"] != path:
                continue
            wanted = route.get("query") or {}
            if any(query.get(k) != v for k, v in wanted.items()):
                continue
            body = (self.root / provider / route["file"]).read_bytes()
            return self._reply(
                route.get("status", 200), route.get("content_type", "application/json"), body
            )
        self._reply(404, "text/plain", f"no recorded page for {method} {self.path}".encode())

    def _reply(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")


class LoopbackServer:
    """Start with ``with LoopbackServer() as server: server.base_url("aws")``."""

    def __init__(self, root: Path = PAGES) -> None:
        handler = type(
            "Handler", (_Handler,), {"routes": load_routes(root), "root": root, "overrides": {}}
        )
        self.handler = handler
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    def base_url(self, provider: str) -> str:
        return f"http://127.0.0.1:{self.port}/{provider}"

    def override(
        self,
        provider: str,
        path: str,
        *,
        status: int = 200,
        body: str = "",
        content_type: str = "application/json",
    ) -> None:
        """Answer ``path`` with something else (a 500, truncated JSON, HTML...) for fault tests."""
        self.handler.overrides[(provider, path)] = (status, content_type, body)

    def __enter__(self) -> LoopbackServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


# Sources fetched region by region have recorded pages for these regions only.
RECORDED_REGIONS = {
    "aws": ["us-east-1", "us-west-2", "eu-north-1"],
    "azure": ["eastus", "southcentralus", "eastus2euap"],
    "huawei": ["cn-north-4", "ap-southeast-1", "cn-east-3"],
}


def point_settings_at(server: LoopbackServer, settings) -> None:
    """Point every scraper of a pytest-django ``settings`` at the loopback server."""
    settings.SCRAPER_BASE_URLS = {key: server.base_url(key) for key in load_routes()}
    settings.SCRAPER_REGIONS = dict(RECORDED_REGIONS)
    settings.SCRAPER_RETRIES = 0
    # GCP prices whole machines only from the Billing Catalog, which needs a key (any, on loopback).
    settings.SCRAPER_CREDENTIALS = {
        **settings.SCRAPER_CREDENTIALS,
        "gcp_api_key": "loopback-test-key",
    }


def worker_environment(server: LoopbackServer) -> dict[str, str]:
    """The same, as environment variables for a worker process."""
    return {
        "SCRAPER_BASE_URLS": ",".join(f"{key}={server.base_url(key)}" for key in load_routes()),
        "SCRAPER_REGIONS": ",".join(
            f"{key}={';'.join(codes)}" for key, codes in RECORDED_REGIONS.items()
        ),
        "SCRAPER_RETRIES": "0",
        "GCP_BILLING_API_KEY": "loopback-test-key",
    }


def quiet_client(**options) -> HttpClient:
    """An HttpClient for fault tests: one retry, no back-off and no sleeping between tries."""
    return HttpClient(retries=1, backoff_s=0, sleep=lambda s: None, **options)


def timing_out(error: type[httpx.TimeoutException] = httpx.ReadTimeout) -> httpx.MockTransport:
    """A transport on which every request times out with ``error`` (a stalled provider)."""

    def stall(request: httpx.Request) -> httpx.Response:
        raise error("timed out", request=request)

    return httpx.MockTransport(stall)
