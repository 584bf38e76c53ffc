"""The gpuatlas CLI against a live test server: exit codes, JSON, tables, gates and retries."""

from __future__ import annotations

import ast
import json
import re
import socket
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from clients import gpuatlas

CLIENT = Path(gpuatlas.__file__).resolve()
REPO = CLIENT.parent.parent

LORA_8B = [
    "--model", "llama-3-8b", "--method", "lora", "--gradient-checkpointing", "full",
    "--tokens", "200M", "--pricing", "spot,on_demand", "--max-usd-per-hour", "5",
]  # fmt: skip
LIVE = pytest.mark.django_db(transaction=True)


# Its live_server tests are transactional: they flush the database the session loaded.
pytestmark = pytest.mark.usefixtures("catalog_reloaded_after")


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch) -> None:
    monkeypatch.delenv("GPUATLAS_URL", raising=False)
    monkeypatch.delenv("GPUATLAS_TOKEN", raising=False)


@pytest.fixture
def sleeps(monkeypatch) -> list[float]:
    """Backoff waits, recorded instead of slept."""
    waited: list[float] = []
    monkeypatch.setattr(gpuatlas, "_sleep", waited.append)
    return waited


@pytest.fixture
def run(capsys):
    def run(*argv: str) -> Result:
        code = gpuatlas.main(list(argv))
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


@pytest.fixture
def atlas(run, live_server, catalog_loaded):
    """The CLI pointed at the live test server."""

    def atlas(command: str, *argv: str) -> Result:
        return run(command, "--url", live_server.url, *argv)

    return atlas


def post_json(url: str, body: dict) -> dict:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request) as response:
        return json.loads(response.read())


# --- recommend ------------------------------------------------------------------------------


@LIVE
def test_recommend_prints_an_aligned_table_with_rejections_and_advice(atlas):
    result = atlas("recommend", *LORA_8B, "--limit", "3")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    header = lines[0]
    for column in ("rank", "provider", "region", "instance type", "gpu x count", "nodes"):
        assert column in header
    for column in ("pricing", "$/h", "hours", "total $", "mem/GPU GiB", "headroom %"):
        assert column in header
    assert "first warning" in header
    assert set(lines[1]) == {"-", " "}
    rows = lines[2:5]
    assert [row.split()[0] for row in rows] == ["1", "2", "3"]
    gaps = [i for i, char in enumerate(lines[1]) if char == " "]
    for line in [header, *rows]:
        assert all(line[i] == " " for i in gaps if i < len(line)), line  # columns line up
    assert any(line.startswith("rejected: ") for line in lines)
    assert any(line.startswith("objective cheapest;") for line in lines)
    assert result.err == ""


@LIVE
def test_recommend_json_is_the_servers_answer(atlas, live_server):
    result = atlas("recommend", *LORA_8B, "--limit", "3", "--json")
    assert result.code == 0, result.err
    answer = json.loads(result.out)
    direct = post_json(
        f"{live_server.url}/api/recommend",
        {
            "workload": {
                "model": "llama-3-8b",
                "method": "lora",
                "gradient_checkpointing": "full",
                "tokens": 200_000_000,
            },
            "constraints": {"pricing": ["spot", "on_demand"], "max_usd_per_hour": 5},
            "limit": 3,
        },
    )
    assert answer == direct
    assert [r["rank"] for r in answer["recommendations"]] == [1, 2, 3]
    assert all(r["usd_per_hour"] <= 5 for r in answer["recommendations"])


@LIVE
def test_common_options_go_before_or_after_the_command(run, live_server, catalog_loaded):
    before = run("--json", "--url", live_server.url, "gpus", "--min-memory-gib", "141")
    after = run("gpus", "--min-memory-gib", "141", "--url", live_server.url, "--json")
    assert before.code == after.code == 0
    assert json.loads(before.out) == json.loads(after.out)


@LIVE
def test_gpuatlas_url_comes_from_the_environment(run, live_server, catalog_loaded, monkeypatch):
    monkeypatch.setenv("GPUATLAS_URL", live_server.url + "/")
    result = run("gpus", "--min-memory-gib", "141", "--json")
    assert result.code == 0, result.err
    assert {g["slug"] for g in json.loads(result.out)["results"]} >= {"h200-sxm"}


@LIVE
def test_stale_list_prices_are_ranked_by_default_and_the_flags_choose_the_rest(atlas):
    argv = ["--model", "llama-3-8b", "--method", "lora", "--tokens", "1e8", "--json"]
    argv += ["--pricing", "on_demand,spot", "--limit", "50"]
    default = atlas("recommend", *argv)
    assert default.code == 0, default.err
    answer = json.loads(default.out)
    recs = answer["recommendations"]
    assert any(r["stale"] for r in recs)  # the curated list prices are dated, and ranked
    assert not any(r["stale"] and r["pricing_model"] == "spot" for r in recs)
    assert answer["prices_oldest_observed_at"] <= answer["prices_newest_observed_at"]
    every = json.loads(atlas("recommend", *argv, "--include-stale").out)
    assert "stale_price" not in every["rejected"]
    fresh = atlas("recommend", *argv, "--exclude-stale")
    assert fresh.code in (0, 3)
    fresh_answer = json.loads(fresh.out)
    assert fresh_answer["rejected"]["stale_price"]["count"] > 0
    assert not any(r["stale"] for r in fresh_answer["recommendations"])


@LIVE
def test_cost_gate_passes_under_the_limit(atlas):
    result = atlas(
        "recommend", *LORA_8B, "--fail-if-cost-over", "200", "--fail-if-hours-over", "500"
    )
    assert result.code == 0
    assert result.err.startswith("gpuatlas: gate passed: ")
    assert "<= --fail-if-cost-over 200" in result.err


@LIVE
def test_cost_gate_over_the_limit_exits_1_with_one_line(atlas):
    result = atlas("recommend", *LORA_8B, "--json", "--fail-if-cost-over", "0.5")
    assert result.code == 1
    top = json.loads(result.out)["recommendations"][0]
    assert result.err.count("\n") == 1
    assert result.err.startswith("gpuatlas: gate failed: --fail-if-cost-over 0.5: ")
    assert f"{top['provider']}/{top['instance_type']}" in result.err
    assert f"${top['est_total_usd']:,.2f}" in result.err


@LIVE
def test_hours_gate_over_the_limit_exits_1(atlas):
    result = atlas("recommend", *LORA_8B, "--fail-if-hours-over", "0.01")
    assert result.code == 1
    assert "gate failed: --fail-if-hours-over 0.01" in result.err


def test_a_cost_gate_without_tokens_is_bad_input(run):
    result = run("recommend", "--model", "llama-3-8b", "--fail-if-cost-over", "200")
    assert result.code == 2
    assert "need --tokens" in result.err


@LIVE
def test_nothing_fits_exits_3_with_the_servers_advice(atlas):
    result = atlas(
        "recommend", "--model", "llama-3-70b", "--method", "full", "--max-usd-per-hour", "0.1",
        "--fail-if-cost-over", "1000", "--tokens", "1e9",
    )  # fmt: skip
    assert result.code == 3
    assert "No plan ranked" in result.out
    assert "rejected: " in result.out
    assert result.err.startswith("gpuatlas: nothing fits (rejected: does_not_fit_memory ")
    assert "; the server advises: " in result.err
    assert "LoRA" in result.err


@LIVE
def test_the_servers_400_names_each_field_and_exits_2(atlas):
    result = atlas(
        "recommend", "--model", "llama-3-8b", "--pricing", "spot,nope", "--providers", "awz"
    )
    assert result.code == 2
    assert result.out == ""
    assert "the server rejected the request (HTTP 400):" in result.err
    assert "  constraints.pricing.1: " in result.err
    assert "  constraints.providers: unknown provider 'awz' (did you mean aws" in result.err


@LIVE
def test_a_bad_workload_is_named_by_field(atlas):
    result = atlas("recommend", "--model", "llama-3-8x", "--method", "lorax", "--json")
    assert result.code == 2
    assert "  workload.model: Unknown model preset 'llama-3-8x'" in result.err
    assert "  workload.method: " in result.err


@pytest.mark.parametrize(
    "argv",
    [
        ["recommend", "--model", "x", "--tokens", "lots"],
        ["recommend", "--model", "x", "--max-usd-per-hour", "-1"],
        ["compare", "--model", "x", "--target", "aws"],
        ["recommend", "--model", "x", "--no-such-flag"],
        ["recommend", "--model", "x", "--url", "ftp://example.org"],
        ["gpus", "--url", "http://localhost:port"],
        ["gpus", "--timeout", "0"],
        [],
    ],
)
def test_bad_command_lines_exit_2(run, argv):
    assert run(*argv).code == 2


def test_help_exits_0(run):
    result = run("recommend", "--help")
    assert result.code == 0
    assert "--fail-if-cost-over" in result.out


# --- estimate, compare, prices, gpus --------------------------------------------------------


@LIVE
def test_estimate_table_and_json(atlas):
    argv = ["--model", "llama-2-7b", "--method", "qlora", "--gpu", "t4", "--tokens", "1e8"]
    table = atlas("estimate", *argv)
    assert table.code == 0, table.err
    assert "memory per GPU" in table.out
    assert "fits              yes" in table.out
    as_json = atlas("estimate", *argv, "--json")
    answer = json.loads(as_json.out)
    assert answer["gpu"] == "t4"
    assert answer["assumptions"]["tokens"] == 1e8
    assert answer["min_gpus"] == 1


@LIVE
def test_estimate_that_does_not_fit_exits_3(atlas):
    result = atlas("estimate", "--model", "llama-3-70b", "--method", "full", "--gpu", "t4")
    assert result.code == 3
    assert "does not fit" in result.err


@LIVE
def test_estimate_shows_the_range_and_fit_on_flips_the_verdict(atlas):
    # ~35 GiB estimated for a 40 GB A100: fits on the estimate, not on the high end.
    argv = ["--model", "llama-3-8b", "--method", "lora", "--batch-size", "1"]
    argv += ["--gpu", "a100-sxm4-40gb"]
    strict = atlas("estimate", *argv)
    assert strict.code == 3
    assert "the estimate fits, the high end of its range" in strict.err
    assert "--fit-on point" in strict.err
    loose = atlas("estimate", *argv, "--fit-on", "point")
    assert loose.code == 0, loose.err
    line = next(line for line in loose.out.splitlines() if line.startswith("memory range"))
    assert " GiB (5th-95th percentile of " in line and "calibration rows" in line
    assert "decided on the estimate" in loose.out
    table = atlas("recommend", *LORA_8B, "--limit", "2", "--fit-on", "point")
    assert table.code == 0, table.err
    assert "mem/GPU GiB (range)" in table.out


@LIVE
def test_estimate_hours_gate(atlas):
    argv = ["--model", "llama-2-7b", "--method", "qlora", "--gpu", "t4", "--tokens", "1e8"]
    assert atlas("estimate", *argv, "--fail-if-hours-over", "100000").code == 0
    failed = atlas("estimate", *argv, "--fail-if-hours-over", "0.1")
    assert failed.code == 1
    assert "gate failed: --fail-if-hours-over 0.1" in failed.err


@LIVE
def test_compare_keeps_the_target_order(atlas):
    result = atlas(
        "compare", "--model", "llama-3-8b", "--method", "full", "--gradient-checkpointing",
        "--tokens", "1e8", "--no-multi-node", "--target", "aws/p4d.24xlarge",
        "--target-gpu", "h100-sxm", "--target", "aws/g5.xlarge", "--json",
    )  # fmt: skip
    assert result.code == 0, result.err
    rows = json.loads(result.out)["rows"]
    assert [(r["provider"], r.get("instance_type")) for r in rows][::2] == [
        ("aws", "p4d.24xlarge"),
        ("aws", "g5.xlarge"),
    ]
    assert rows[1]["gpu"] == "h100-sxm"
    assert [r["fits"] for r in rows] == [True, True, False]


@LIVE
def test_compare_table_and_nothing_fits(atlas):
    table = atlas("compare", "--model", "llama-3-8b", "--target", "aws/p4d.24xlarge")
    assert table.code == 0, table.err
    assert table.out.splitlines()[2].startswith("aws/p4d.24xlarge  yes")
    none = atlas(
        "compare", "--model", "llama-3-70b", "--method", "full", "--target", "aws/g5.xlarge"
    )
    assert none.code == 3
    assert "nothing fits" in none.err


@LIVE
def test_prices_follow_pages_up_to_the_limit(atlas, live_server, monkeypatch):
    monkeypatch.setattr(gpuatlas, "MAX_PAGE_SIZE", 100)
    pages: list[str] = []
    original = gpuatlas.Client.get

    def spy(self, path, query=None):
        pages.append(str((query or {}).get("page", 1)))
        return original(self, path, query)

    monkeypatch.setattr(gpuatlas.Client, "get", spy)
    result = atlas("prices", "--limit", "250", "--ordering", "usd_per_hour", "--json")
    assert result.code == 0, result.err
    answer = json.loads(result.out)
    assert pages == ["1", "2", "3"]
    assert len(answer["results"]) == 250
    assert answer["count"] > 250
    with urllib.request.urlopen(
        f"{live_server.url}/api/prices/?ordering=usd_per_hour&page_size=250"
    ) as response:
        direct = json.loads(response.read())["results"]
    assert [p["id"] for p in answer["results"]] == [p["id"] for p in direct]

    everything = atlas("prices", "--limit", "0", "--json")
    answer = json.loads(everything.out)
    assert len(answer["results"]) == answer["count"]


@LIVE
def test_prices_filters_and_table(atlas):
    result = atlas(
        "prices", "--gpu", "h100-sxm", "--pricing", "on_demand", "--max-usd-per-hour", "50",
        "--limit", "0", "--json",
    )  # fmt: skip
    assert result.code == 0, result.err
    results = json.loads(result.out)["results"]
    assert results
    assert {p["gpu"] for p in results} == {"h100-sxm"}
    assert {p["pricing_model"] for p in results} == {"on_demand"}
    assert all(p["usd_per_hour"] <= 50 for p in results)

    table = atlas("prices", "--gpu", "h100-sxm", "--limit", "5")
    lines = table.out.splitlines()
    assert lines[0].split()[:3] == ["provider", "region", "instance"]
    assert len(lines) == 2 + 5 + 1
    assert lines[-1].startswith("5 of ")


@LIVE
def test_gpus_filters_and_table(atlas):
    result = atlas("gpus", "--min-memory-gib", "80", "--vendor", "nvidia", "--json")
    gpus = json.loads(result.out)["results"]
    assert gpus
    assert all(g["memory_gib"] >= 80 and g["vendor"] == "nvidia" for g in gpus)
    by_memory = atlas("gpus", "--ordering", "-memory_gib", "--json")
    memory = [g["memory_gib"] for g in json.loads(by_memory.out)["results"]]
    assert memory == sorted(memory, reverse=True)
    table = atlas("gpus", "--min-memory-gib", "80")
    assert table.code == 0
    assert "h100-sxm" in table.out
    assert table.out.splitlines()[-1].endswith(" GPUs")


# --- auth, errors, retries -------------------------------------------------------------------


@LIVE
def test_token_is_sent_and_needed_when_reads_need_one(
    atlas, settings, django_user_model, monkeypatch
):
    from rest_framework.authtoken.models import Token

    settings.API_REQUIRE_TOKEN_FOR_READS = True
    refused = atlas("gpus")
    assert refused.code == 4
    assert (
        "HTTP 401: Authentication credentials were not provided. (set GPUATLAS_TOKEN)"
        in refused.err
    )

    user = django_user_model.objects.create_user("ci", password="x-ci-pw-1")
    monkeypatch.setenv("GPUATLAS_TOKEN", Token.objects.create(user=user).key)
    assert atlas("gpus", "--min-memory-gib", "141").code == 0
    assert atlas("recommend", *LORA_8B).code == 0

    monkeypatch.setenv("GPUATLAS_TOKEN", "not-a-token")
    bad = atlas("gpus")
    assert bad.code == 4
    assert "Invalid token" in bad.err and "check GPUATLAS_TOKEN" in bad.err


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_server_down_exits_4_after_retrying(run, sleeps):
    url = f"http://127.0.0.1:{_closed_port()}"
    result = run("gpus", "--url", url, "--retries", "1", "--timeout", "2")
    assert result.code == 4
    assert len(sleeps) == 1
    assert f"cannot reach {url}" in result.err
    assert "(2 attempts;" in result.err
    assert run("recommend", "--model", "x", "--url", url, "--retries", "0").code == 4
    assert len(sleeps) == 1


class Scripted(BaseHTTPRequestHandler):
    """Answers from a script of (status, headers, body), recording each request."""

    script: list[tuple[int, dict, bytes]] = []
    seen: list[dict] = []

    def log_message(self, *args) -> None:
        pass

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        type(self).seen.append(
            {"method": self.command, "path": self.path, "headers": dict(self.headers), "body": body}
        )
        status, headers, payload = type(self).script.pop(0)
        self.send_response(status)
        for name, value in {"Content-Type": "application/json", **headers}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = _answer


@pytest.fixture
def scripted() -> Iterator[tuple[str, type[Scripted]]]:
    handler = type("Handler", (Scripted,), {"script": [], "seen": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", handler
    server.shutdown()
    server.server_close()


EMPTY_LIST = json.dumps({"count": 0, "next": None, "previous": None, "results": []}).encode()


def test_retries_a_503_then_succeeds(run, scripted, sleeps):
    url, handler = scripted
    handler.script += [(503, {}, b'{"detail": "down"}'), (200, {}, EMPTY_LIST)]
    result = run("gpus", "--url", url)
    assert result.code == 0, result.err
    assert len(handler.seen) == 2
    assert len(sleeps) == 1 and 0.25 <= sleeps[0] <= 0.5
    assert "HTTP 503; retry 1 of 3" in result.err


def test_honours_retry_after_on_429(run, scripted, sleeps):
    url, handler = scripted
    handler.script += [
        (429, {"Retry-After": "7"}, b'{"detail": "Request was throttled."}'),
        (429, {"Retry-After": "1"}, b'{"detail": "Request was throttled."}'),
        (200, {}, EMPTY_LIST),
    ]
    assert run("gpus", "--url", url).code == 0
    assert sleeps[0] == 7
    assert 1 <= sleeps[1] <= 1.0 + 1.0  # backoff grows to 0.5-1 s, Retry-After floors it at 1


def test_gives_up_with_exit_4_when_retries_run_out(run, scripted, sleeps):
    url, handler = scripted
    handler.script += [(502, {}, b"<html>bad gateway</html>")] * 3
    result = run("gpus", "--url", url, "--retries", "2")
    assert result.code == 4
    assert len(handler.seen) == 3 and len(sleeps) == 2
    assert result.err.splitlines()[-1] == "gpuatlas: HTTP 502: Bad Gateway"


def test_sends_token_user_agent_and_json(run, scripted, monkeypatch):
    url, handler = scripted
    monkeypatch.setenv("GPUATLAS_TOKEN", "s3cret")
    answer = {"estimate": {}, "recommendations": [], "rejected": {}, "advice": ["loosen it"]}
    handler.script.append((200, {}, json.dumps(answer).encode()))
    result = run(
        "recommend", "--url", url + "/prefix/", "--model", "llama-3-8b", "--tokens", "1.5B",
        "--pricing", "spot", "--pricing", "on_demand", "--no-mainland-china", "--no-multi-node",
        "--exclude-stale", "--gpus", "h100-sxm,a100-sxm4-80gb", "--objective", "fastest",
    )  # fmt: skip
    assert result.code == 3
    seen = handler.seen[0]
    assert seen["method"] == "POST" and seen["path"] == "/prefix/api/recommend"
    assert seen["headers"]["Authorization"] == "Token s3cret"
    assert seen["headers"]["User-Agent"] == f"gpuatlas-cli/{gpuatlas.__version__}"
    assert seen["headers"]["Content-Type"] == "application/json"
    assert json.loads(seen["body"]) == {
        "workload": {"model": "llama-3-8b", "tokens": 1_500_000_000},
        "constraints": {
            "pricing": ["spot", "on_demand"],
            "gpus": ["h100-sxm", "a100-sxm4-80gb"],
            "mainland_china": False,
            "allow_multi_node": False,
            "include_stale": False,
        },
        "objective": "fastest",
    }
    assert "loosen it" in result.err


STALE_ONLY = {
    "estimate": {},
    "recommendations": [],
    "rejected": {"stale_price": {"count": 1674, "examples": ["aws/g6.xlarge in us-east-1 (spot)"]}},
    "advice": ["1674 offer(s) were left out because their prices are older than the limit."],
    "catalog_as_of": "2026-11-30T00:00:00Z",
    "prices_oldest_observed_at": None,
    "prices_newest_observed_at": None,
    "objective": "cheapest",
    "considered": 0,
}


def test_nothing_ranked_because_every_offer_is_stale_exits_5_and_says_so(run, scripted):
    url, handler = scripted
    handler.script.append((200, {}, json.dumps(STALE_ONLY).encode()))
    result = run("recommend", "--url", url, "--model", "llama-3-8b", "--pricing", "spot")
    assert result.code == gpuatlas.EXIT_ONLY_STALE == 5
    assert result.err == (
        "gpuatlas: nothing ranked: 1,674 offers left out as stale (price past the server's shelf "
        "life, never weighed); pass --include-stale to weigh them\n"
    )
    assert "nothing fits" not in result.err
    assert "rejected: stale_price 1,674" in result.out


def test_stale_offers_beside_other_rejections_are_named_and_exit_3(run, scripted):
    url, handler = scripted
    answer = {
        **STALE_ONLY,
        "rejected": {**STALE_ONLY["rejected"], "does_not_fit_memory": {"count": 12}},
    }
    handler.script.append((200, {}, json.dumps(answer).encode()))
    result = run("recommend", "--url", url, "--model", "llama-3-8b")
    assert result.code == 3
    assert result.err.startswith("gpuatlas: nothing fits (rejected: does_not_fit_memory 12); ")
    assert "1,674 offers left out as stale" in result.err and "--include-stale" in result.err


def test_recommend_table_shows_each_prices_date_and_stale_flag(run, scripted):
    url, handler = scripted
    rows = [
        {
            "rank": 1,
            "provider": "autodl",
            "price_observed_at": "2026-03-28T00:00:00Z",
            "stale": True,
        },
        {"rank": 2, "provider": "aws", "price_observed_at": "2026-11-30T08:00:00Z", "stale": False},
    ]
    answer = {
        **STALE_ONLY,
        "recommendations": rows,
        "rejected": {},
        "advice": [],
        "prices_oldest_observed_at": "2026-03-28T00:00:00Z",
        "prices_newest_observed_at": "2026-11-30T08:00:00Z",
    }
    handler.script.append((200, {}, json.dumps(answer).encode()))
    result = run("recommend", "--url", url, "--model", "llama-3-8b")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert "price observed" in lines[0]
    assert "2026-03-28 stale" in lines[2]
    assert "2026-11-30" in lines[3] and "stale" not in lines[3]
    assert lines[-1].endswith("catalog as of 2026-11-30; prices observed 2026-03-28 to 2026-11-30")


def test_only_the_flags_given_are_sent(run, scripted):
    url, handler = scripted
    answer = {"recommendations": [{"rank": 1, "est_total_usd": 3.0, "est_hours": 1.0}]}
    handler.script.append((200, {}, json.dumps(answer).encode()))
    assert run("recommend", "--url", url, "--model", "bert-base").code == 0
    # constraints goes even when empty, so the server applies its documented defaults
    assert json.loads(handler.seen[0]["body"]) == {
        "workload": {"model": "bert-base"},
        "constraints": {},
    }


def test_a_non_json_answer_is_a_server_error(run, scripted):
    url, handler = scripted
    handler.script.append((200, {"Content-Type": "text/html"}, b"<html>hello</html>"))
    result = run("gpus", "--url", url)
    assert result.code == 4
    assert "did not answer JSON" in result.err


# --- as a fetched script ---------------------------------------------------------------------


@LIVE
def test_runs_as_a_standalone_script(live_server, catalog_loaded):
    def script(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, str(CLIENT), *argv],
            capture_output=True,
            text=True,
            cwd=REPO.parent,  # not the checkout: the file must stand alone
            env={"PATH": "/usr/bin:/bin", "GPUATLAS_URL": live_server.url},
            timeout=120,
            check=False,
        )

    gated = script("recommend", *LORA_8B, "--fail-if-cost-over", "0.5")
    assert gated.returncode == 1, gated.stderr
    assert "gate failed" in gated.stderr
    assert gated.stdout.splitlines()[0].startswith("rank  provider")

    passed = script("recommend", *LORA_8B, "--json", "--fail-if-cost-over", "200")
    assert passed.returncode == 0, passed.stderr
    assert json.loads(passed.stdout)["recommendations"][0]["rank"] == 1

    assert script("--version").stdout.strip() == f"gpuatlas {gpuatlas.__version__}"


# --- the pieces --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [("2e9", 2_000_000_000), ("200M", 200_000_000), ("1.5B", 1_500_000_000), ("500k", 500_000),
     ("2_000_000", 2_000_000), ("1T", 10**12), ("0.5", 0.5)],
)  # fmt: skip
def test_parse_count(text, value):
    assert gpuatlas.parse_count(text) == value


@pytest.mark.parametrize("text", ["lots", "-5", "", "1.5X", "nan"])
def test_parse_count_refuses(text):
    with pytest.raises(Exception, match=r"count|positive"):
        gpuatlas.parse_count(text)


def test_backoff_grows_with_jitter_and_honours_retry_after():
    for attempt in range(4):
        delay = gpuatlas.backoff_delay(attempt)
        full = gpuatlas.BACKOFF_BASE_S * 2**attempt
        assert full / 2 <= delay <= full
    assert gpuatlas.backoff_delay(0, "12") == 12
    assert gpuatlas.backoff_delay(0, "86400") == gpuatlas.RETRY_AFTER_MAX_S
    assert gpuatlas.backoff_delay(0, "Wed, 21 Oct 2015 07:28:00 GMT") <= 0.5
    assert gpuatlas.backoff_delay(20) <= gpuatlas.BACKOFF_MAX_S


def test_is_one_python_39_file_of_standard_library_only():
    source = CLIENT.read_text(encoding="utf-8")
    tree = ast.parse(source, feature_version=(3, 9))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "no relative imports: the file must stand alone"
            imported.add(node.module.split(".")[0])
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}
    assert source.splitlines()[0] == "#!/usr/bin/env python3"
    assert "from __future__ import annotations" in source  # X | None stays unevaluated on 3.9


def test_advice_names_the_clients_flags_not_the_apis_fields(run, scripted):
    url, handler = scripted
    answer = {
        **STALE_ONLY,
        "rejected": {**STALE_ONLY["rejected"], "over_max_total_usd": {"count": 3}},
        "advice": [
            "2 offer(s) were left out because their prices are older than the staleness limit; "
            "set include_stale=true to see them flagged.",
            "Train on fewer tokens or raise max_total_usd / max_hours: some plans fit memory "
            "but not the budget.",
            "Allow multi-node (allow_multi_node=true) to shard over more GPUs.",
            "Plans were capped at 128 GPUs; set max_gpus to weigh larger clusters.",
            "deciding the fit on the estimate (fit_on=point) accepts them",
        ],
    }
    handler.script.append((200, {}, json.dumps(answer).encode()))
    result = run("recommend", "--url", url, "--model", "llama-3-8b")
    assert result.code == 3
    for text in (result.out, result.err):
        assert "pass --include-stale to see them flagged" in text
        assert "raise --max-total-usd / --max-hours" in text
        assert "(no --no-multi-node)" in text and "pass --max-gpus to weigh" in text
        assert "(--fit-on point)" in text
        for name in ("include_stale", "max_total_usd", "max_hours", "allow_multi_node", "fit_on"):
            assert f" {name}" not in text and f"({name}" not in text
    # Every flag the advice names is one the client takes.
    flags = set(re.findall(r"--[a-z][a-z-]+", result.out + result.err))
    source = Path(gpuatlas.__file__).read_text(encoding="utf-8")
    assert flags and all(f'"{flag}"' in source for flag in flags), flags


def test_compare_why_not_names_the_clients_flag(run, scripted):
    url, handler = scripted
    why = (
        "stale_price: gcp/a3-highgpu-1g in europe-north1 (spot), observed 2026-10-29, past the "
        "7-day shelf life of spot prices; include_stale=true weighs it (flagged stale)"
    )
    answer = {
        "estimate": {},
        "rows": [{"target": "gcp/a3-highgpu-1g", "fits": False, "why_not": why}],
        "catalog_as_of": "2026-11-30T00:00:00Z",
    }
    handler.script.append((200, {}, json.dumps(answer).encode()))
    result = run("compare", "--url", url, "--model", "llama-3-8b", "--target", "gcp/a3-highgpu-1g")
    assert "stale_price: gcp/a3-highgpu-1g" in result.out
    assert gpuatlas.cli_advice(why).endswith("--include-stale weighs it (flagged stale)")
