#!/usr/bin/env python3
"""gpuatlas: the GPU Atlas command-line client, for CI pipelines and for people.

One file, standard library only, Python 3.9+: a pipeline can fetch it from a running server
(``curl -fsS "$GPUATLAS_URL/client/gpuatlas.py" -o gpuatlas.py``) and run it with any Python 3.

    gpuatlas recommend --model llama-3-8b --method lora --tokens 200M \\
        --pricing spot,on_demand --max-usd-per-hour 5 --fail-if-cost-over 200
    gpuatlas estimate --model llama-2-7b --method qlora --gpu t4
    gpuatlas compare --model llama-3-8b --target aws/p4d.24xlarge --target-gpu h100-sxm
    gpuatlas prices --gpu h100-sxm --pricing spot,on_demand --limit 20
    gpuatlas gpus --min-memory-gib 80

Environment: GPUATLAS_URL (default http://127.0.0.1:8000; ``--url`` overrides it) and
GPUATLAS_TOKEN (sent as ``Authorization: Token <key>``). ``--json`` prints the server's JSON;
otherwise an aligned table. The report goes to stdout; errors and verdicts (gate passed or
failed, nothing fits) go to stderr, one line each.

Exit codes: 0 ok; 1 a --fail-if-* gate failed; 2 bad input (the server's 400 messages are
printed); 3 nothing fits; 4 server or network error (after retrying 429 and 5xx with backoff);
5 nothing ranked because offers were left out as stale (their prices are past the server's
shelf life, so they were never weighed; --include-stale weighs them, flagged). See docs/ci.md.
"""

from __future__ import annotations

import argparse
import email.utils
import http.client
import json
import os
import random
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from typing import Any

__version__ = "0.1.0"

DEFAULT_URL = "http://127.0.0.1:8000"
USER_AGENT = f"gpuatlas-cli/{__version__}"

EXIT_OK = 0
EXIT_GATE_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_NOTHING_FITS = 3
EXIT_SERVER_ERROR = 4
EXIT_ONLY_STALE = 5

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
BACKOFF_BASE_S = 0.5  # first retry after 0.25-0.5 s, doubling each time
BACKOFF_MAX_S = 30.0
RETRY_AFTER_MAX_S = 120.0  # a Retry-After longer than this is cut short: CI jobs have deadlines
MAX_PAGE_SIZE = 1000  # the server's page_size limit
WARNING_WIDTH = 48


class CliError(Exception):
    """Ends the command with `code` after printing `lines` to stderr."""

    def __init__(self, code: int, *lines: str):
        super().__init__(lines[0] if lines else "")
        self.code = code
        self.lines = list(lines)


# --- Input parsing ----------------------------------------------------------------------------

_COUNT_SUFFIXES = {"k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}


def parse_count(text: str) -> float:
    """A count such as ``2e9``, ``200M``, ``1.5B``, ``500k`` or ``2_000_000``; integral if whole."""
    raw = text.strip().replace("_", "").replace(",", "")
    scale = 1.0
    if raw and raw[-1].lower() in _COUNT_SUFFIXES:
        scale = _COUNT_SUFFIXES[raw[-1].lower()]
        raw = raw[:-1]
    try:
        value = float(raw) * scale
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a count (examples: 2e9, 200M, 1.5B)"
        ) from None
    if value < 0 or value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"{text!r} must be a positive number")
    return int(value) if value == int(value) else value


def comma_list(text: str) -> list[str]:
    """``a,b,c`` as a list; the option may also be repeated."""
    return [item.strip() for item in text.split(",") if item.strip()]


def non_negative(cast: Callable[[str], Any]) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        try:
            value = cast(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if value < 0:
            raise argparse.ArgumentTypeError(f"{text!r} must not be negative")
        return value

    parse.__name__ = cast.__name__
    return parse


def positive(cast: Callable[[str], Any]) -> Callable[[str], Any]:
    check = non_negative(cast)

    def parse(text: str) -> Any:
        value = check(text)
        if value == 0:
            raise argparse.ArgumentTypeError(f"{text!r} must be more than 0")
        return value

    parse.__name__ = cast.__name__
    return parse


def json_file(path: str) -> dict[str, Any]:
    """The JSON object in the file at ``path`` (a model's config.json)."""
    try:
        with open(path, encoding="utf-8") as fh:
            value = json.load(fh)
    except (OSError, ValueError) as exc:
        raise argparse.ArgumentTypeError(f"cannot read a JSON object from {path}: {exc}") from exc
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"{path} does not hold a JSON object")
    return value


def compare_target(text: str) -> dict[str, str]:
    provider, sep, instance_type = text.partition("/")
    if not sep or not provider.strip() or not instance_type.strip():
        raise argparse.ArgumentTypeError(
            f"{text!r} is not provider/instance_type (e.g. aws/p4d.24xlarge)"
        )
    return {"provider": provider.strip(), "instance_type": instance_type.strip()}


def compare_gpu_target(text: str) -> dict[str, str]:
    if not text.strip():
        raise argparse.ArgumentTypeError("a GPU slug, e.g. h100-sxm")
    return {"gpu": text.strip()}


def _flat(values: list[list[str]] | None) -> list[str] | None:
    """Repeated comma-list options as one list; None when the option was not given."""
    if values is None:
        return None
    return [item for chunk in values for item in chunk]


# --- HTTP -------------------------------------------------------------------------------------


def _sleep(seconds: float) -> None:
    time.sleep(seconds)


def _retry_after_seconds(value: str | None) -> float | None:
    """Retry-After as seconds: either delta-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def backoff_delay(attempt: int, retry_after: str | None = None) -> float:
    """Exponential backoff with jitter, never shorter than the server's Retry-After (capped)."""
    delay = min(BACKOFF_MAX_S, BACKOFF_BASE_S * float(2**attempt)) * random.uniform(0.5, 1.0)
    hinted = _retry_after_seconds(retry_after)
    if hinted is not None:
        delay = max(delay, min(hinted, RETRY_AFTER_MAX_S))
    return delay


def _flatten_errors(errors: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """``{"workload": {"model": ["..."]}}`` as ``("workload.model", "...")`` pairs."""
    if isinstance(errors, dict):
        for key, value in errors.items():
            key = str(key)
            sub = path if key == "non_field_errors" else (f"{path}.{key}" if path else key)
            yield from _flatten_errors(value, sub)
    elif isinstance(errors, list):
        if any(isinstance(item, (dict, list)) for item in errors):
            for index, item in enumerate(errors):
                if item:
                    yield from _flatten_errors(item, f"{path}.{index}" if path else str(index))
        else:
            for item in errors:
                yield path or "request", str(item)
    else:
        yield path or "request", str(errors)


class Client:
    """GPU Atlas over HTTP: JSON in and out, retries on 429/5xx and network errors."""

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        timeout: float = 60.0,
        retries: int = 3,
    ):
        self.base_url = base_url.rstrip("/")
        self.token = token or None
        self.timeout = timeout
        self.retries = max(0, retries)

    def url(self, path: str, query: dict[str, Any] | None = None) -> str:
        url = f"{self.base_url}{path}"
        if query:
            url += "?" + urllib.parse.urlencode(query)
        return url

    def get(self, path: str, query: dict[str, Any] | None = None) -> Any:
        return self.request("GET", self.url(path, query))

    def post(self, path: str, body: dict[str, Any]) -> Any:
        return self.request("POST", self.url(path), body)

    def request(self, method: str, url: str, body: dict[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode("utf-8")
        headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Token {self.token}"
        attempt = 0
        while True:
            req = urllib.request.Request(url, data=data, headers=headers, method=method)  # noqa: S310
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as response:  # noqa: S310
                    raw = response.read()
            except urllib.error.HTTPError as exc:
                status, raw_error = exc.code, _read_quietly(exc)
                if status in RETRY_STATUSES and attempt < self.retries:
                    self._wait(attempt, f"HTTP {status}", exc.headers.get("Retry-After"))
                    attempt += 1
                    continue
                raise self._http_error(status, raw_error, url) from None
            except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
                reason = getattr(exc, "reason", None) or exc
                if attempt < self.retries:
                    self._wait(attempt, f"{reason}", None)
                    attempt += 1
                    continue
                tries = attempt + 1
                raise CliError(
                    EXIT_SERVER_ERROR,
                    f"cannot reach {self.base_url}: {reason} "
                    f"({tries} attempt{'s' if tries > 1 else ''}; set GPUATLAS_URL or --url)",
                ) from None
            try:
                return json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                raise CliError(
                    EXIT_SERVER_ERROR,
                    f"{url} did not answer JSON; is {self.base_url} a GPU Atlas server?",
                ) from None

    def _wait(self, attempt: int, why: str, retry_after: str | None) -> None:
        delay = backoff_delay(attempt, retry_after)
        _err(f"{why}; retry {attempt + 1} of {self.retries} in {delay:.1f} s")
        _sleep(delay)

    def _http_error(self, status: int, raw: bytes, url: str) -> CliError:
        try:
            payload = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            payload = None
        if status == 400:
            if isinstance(payload, dict) and "errors" in payload:
                pairs = list(_flatten_errors(payload["errors"]))
            elif payload is not None:
                pairs = list(_flatten_errors(payload))
            else:
                pairs = [("request", _snippet(raw) or "bad request")]
            lines = ["the server rejected the request (HTTP 400):"]
            lines += [f"  {field}: {message}" for field, message in pairs]
            return CliError(EXIT_BAD_INPUT, *lines)
        detail = payload.get("detail") if isinstance(payload, dict) else None
        detail = str(detail) if detail else _snippet(raw) or http.client.responses.get(status, "")
        if status in (401, 403):
            hint = "check GPUATLAS_TOKEN" if self.token else "set GPUATLAS_TOKEN"
            return CliError(EXIT_SERVER_ERROR, f"HTTP {status}: {detail} ({hint})")
        if status == 404:
            return CliError(
                EXIT_SERVER_ERROR,
                f"HTTP 404 for {url}: {detail} (is {self.base_url} a GPU Atlas server?)",
            )
        if status == 429:
            return CliError(EXIT_SERVER_ERROR, f"HTTP 429, still throttled: {detail}")
        return CliError(EXIT_SERVER_ERROR, f"HTTP {status}: {detail}")

    def list_all(self, path: str, query: dict[str, Any], limit: int) -> dict[str, Any]:
        """Follow a paginated list up to `limit` results (0: all) as one list-shaped answer."""
        query = dict(query)
        query["page_size"] = min(limit, MAX_PAGE_SIZE) if limit else MAX_PAGE_SIZE
        page = 1
        answer: dict[str, Any] = {"count": 0, "next": None, "previous": None, "results": []}
        while True:
            if page > 1:
                query["page"] = page
            data = self.get(path, query)
            if not isinstance(data, dict) or not isinstance(data.get("results"), list):
                raise CliError(EXIT_SERVER_ERROR, f"{path} did not answer a list")
            answer["count"] = data.get("count", 0)
            answer["next"] = data.get("next")
            answer["results"].extend(data["results"])
            if limit and len(answer["results"]) >= limit:
                answer["results"] = answer["results"][:limit]
                return answer
            next_page = _page_of(data.get("next"))
            if next_page is None or next_page <= page or not data["results"]:
                return answer
            page = next_page


def _page_of(url: str | None) -> int | None:
    """The ``page`` number in a ``next`` link; the client re-asks its own base URL with it."""
    if not url:
        return None
    values = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query).get("page")
    try:
        return int(values[0]) if values else None
    except ValueError:
        return None


def _read_quietly(exc: urllib.error.HTTPError) -> bytes:
    try:
        return exc.read() or b""
    except (OSError, http.client.HTTPException):
        return b""


def _snippet(raw: bytes, size: int = 200) -> str:
    """The start of a plain-text body, on one line; nothing for an HTML page (a proxy's or
    Django's error page says less than the status line)."""
    text = raw.decode("utf-8", "replace").strip()
    if text.startswith("<") or "<html" in text[:500].lower():
        return ""
    return re.sub(r"\s+", " ", text)[:size]


# --- Output -----------------------------------------------------------------------------------


def _out(text: str = "") -> None:
    print(text, file=sys.stdout)


def _err(text: str) -> None:
    print(f"gpuatlas: {text}", file=sys.stderr)


def print_json(data: Any) -> None:
    _out(json.dumps(data, indent=2, ensure_ascii=False))


def _num(value: Any, digits: int = 2) -> str:
    if value is None:
        return "-"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value:,.{digits}f}"
    return str(value)


def _usd(value: Any) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < abs(value) < 1:
        return f"{value:.3f}"
    return _num(value, 2)


def _count(value: Any) -> str:
    if isinstance(value, float) and value == int(value):
        return str(int(value))
    return "-" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def _truncate(text: str, width: int = WARNING_WIDTH) -> str:
    return text if len(text) <= width else text[: width - 3].rstrip() + "..."


def render_table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: set[int]) -> str:
    """Columns aligned with two spaces between; indexes in `right` are right-aligned."""
    widths = [len(h) for h in headers]
    for row in rows:
        for index, cell in enumerate(row):
            widths[index] = max(widths[index], len(cell))

    def line(cells: Sequence[str]) -> str:
        parts = [
            cell.rjust(widths[i]) if i in right else cell.ljust(widths[i])
            for i, cell in enumerate(cells)
        ]
        return "  ".join(parts).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows])


def _where(row: dict[str, Any]) -> str:
    region = str(row.get("region") or "-")
    others = row.get("other_regions") or []
    return f"{region} +{len(others)}" if others else region


def _gpus(row: dict[str, Any]) -> str:
    return f"{row.get('gpu') or '-'} x{_count(row.get('gpu_count'))}"


PLAN_HEADERS = [
    "rank", "provider", "region", "instance type", "gpu x count", "nodes", "pricing",
    "$/h", "hours", "total $", "mem/GPU GiB (range)", "headroom %", "price observed",
    "first warning",
]  # fmt: skip
PLAN_RIGHT = {0, 5, 7, 8, 9, 10, 11}


def _plan_cells(row: dict[str, Any]) -> list[str]:
    warnings = row.get("warnings") or []
    return [
        str(row.get("rank", "-")),
        str(row.get("provider") or "-"),
        _where(row),
        str(row.get("instance_type") or "-"),
        _gpus(row),
        _count(row.get("nodes")),
        str(row.get("pricing_model") or "-"),
        _usd(row.get("usd_per_hour")),
        _num(row.get("est_hours"), 1),
        _usd(row.get("est_total_usd")),
        _memory_cell(row),
        _num(row.get("headroom_pct"), 0),
        _observed(row),
        _truncate(warnings[0]) if warnings else "",
    ]


def _date(value: Any) -> str:
    """The date of an ISO 8601 timestamp (2026-03-28T00:00:00Z -> 2026-03-28); "-" for none."""
    return str(value)[:10] if value else "-"


def _observed(row: dict[str, Any]) -> str:
    """When the row's price was observed, and "stale" when it is past the shelf life."""
    return _date(row.get("price_observed_at")) + (" stale" if row.get("stale") else "")


def _span(values: Any, digits: int = 0) -> str:
    """A range as low-high ("38-46"); "-" when there is none."""
    if not isinstance(values, list) or len(values) != 2:
        return "-"
    return f"{_num(values[0], digits)}-{_num(values[1], digits)}"


def _memory_cell(row: dict[str, Any]) -> str:
    """Memory per GPU with its range: 34.8 (27-66)."""
    value = _num(row.get("memory_per_gpu_gib"), 1)
    span = row.get("memory_per_gpu_gib_range")
    return f"{value} ({_span(span)})" if span else value


def _describe(row: dict[str, Any]) -> str:
    return (
        f"{row.get('provider')}/{row.get('instance_type')} "
        f"({_gpus(row)}, {row.get('pricing_model')}, {row.get('region')})"
    )


# --- Commands ---------------------------------------------------------------------------------

# --- Generated from sizing/inputs.py by `make schema`; do not edit. ---
WORKLOAD_OPTIONS: list[tuple[str, str, str, str | None, str]] = [
    ("model", "text", "Model preset; see fixtures/models.yaml.", None, "--model"),
    (
        "architecture",
        "object",
        "A Hugging Face config.json object: hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads, head_dim, intermediate_size, vocab_size, tie_word_embeddings and the MoE names (num_local_experts, num_experts, n_routed_experts, num_experts_per_tok, moe_intermediate_size, n_shared_experts).",
        None,
        "--config",
    ),
    ("params_b", "float", "Parameters, billions.", None, "--params-b"),
    ("task", "choice", "pretrain, finetune, inference.", None, "--task"),
    (
        "method",
        "choice",
        "full, lora, qlora, freeze. Training method (default full; none for inference).",
        None,
        "--method",
    ),
    (
        "precision",
        "choice",
        "fp32, bf16, fp16, fp8, int8, int4. Default bf16.",
        None,
        "--precision",
    ),
    (
        "mixed_precision",
        "bool",
        "fp32 master weights and gradients (default on for bf16/fp16/fp8 training; off for QLoRA under litgpt, which refuses it).",
        None,
        "--mixed-precision",
    ),
    (
        "optimizer",
        "choice",
        "adamw, adamw_8bit, sgd, adafactor. Default AdamW.",
        None,
        "--optimizer",
    ),
    ("batch_size", "int", "Per GPU.", None, "--batch-size"),
    ("seq_len", "int", "Tokens per sequence.", None, "--seq-len"),
    (
        "gradient_checkpointing",
        "choice",
        "none, selective, op_selective, full. Booleans accepted; a bare CLI flag means full.",
        "full",
        "--gradient-checkpointing",
    ),
    (
        "sharding",
        "choice",
        "none, zero1, zero2, zero3, fsdp, auto. Leave out (or auto) to let the planner choose.",
        None,
        "--sharding",
    ),
    ("lora_rank", "int", "Default 16.", None, "--lora-rank"),
    (
        "lora_targets",
        "choice",
        "qv, attention, all_linear. Default all_linear. qv: the q and v projections only; attention: q, k, v and o; all_linear: every linear of the blocks.",
        None,
        "--lora-targets",
    ),
    (
        "lora_dropout",
        "float",
        "Dropout on each adapter's input (0 to 1). Default: the framework's (PEFT, torchtune, LLaMA-Factory 0; litgpt 0.05).",
        None,
        "--lora-dropout",
    ),
    ("tokens", "count", "Tokens to train on.", None, "--tokens"),
    ("context_len", "int", "Inference.", None, "--context-len"),
    ("concurrency", "int", "Inference.", None, "--concurrency"),
    (
        "framework",
        "choice",
        "hf, torchtune, litgpt, axolotl, unsloth, llama_factory, deepspeed, megatron, torchtitan, vllm, sglang, gpt_fast, torchao, exllamav2, mlc_llm, llama_cpp. Sets the defaults of loss, activation_offloading, optimizer_in_backward, compile, lora_dropout and double_quant, and its QLoRA behaviour (litgpt: 4-bit head, no checkpointing, no mixed precision); for serving, the 4-bit decode kernel.",
        None,
        "--framework",
    ),
    (
        "loss",
        "choice",
        "standard, chunked, fused. standard: full fp32 logits; chunked; fused (default: the framework's).",
        None,
        "--loss",
    ),
    (
        "double_quant",
        "bool",
        "QLoRA: the NF4 block constants quantised again, 0.516 instead of 0.5625 bytes per 4-bit weight (default: the framework's; off for hf, as BitsAndBytesConfig).",
        None,
        "--double-quant",
    ),
    (
        "activation_offloading",
        "bool",
        "Saved activations kept in host memory (default: the framework's).",
        None,
        "--activation-offloading",
    ),
    (
        "optimizer_in_backward",
        "bool",
        "Each gradient is applied and freed during backward (default: the framework's).",
        None,
        "--optimizer-in-backward",
    ),
    (
        "compile",
        "bool",
        "Training step compiled with torch.compile: pointwise ops fused and recomputed in backward instead of saved, and a faster step (default: the framework's).",
        None,
        "--compile",
    ),
]
CONSTRAINT_LISTS: list[str] = ["providers", "regions", "countries", "pricing", "gpus"]
CONSTRAINT_VALUES: list[str] = [
    "mainland_china",
    "max_usd_per_hour",
    "max_total_usd",
    "max_hours",
    "min_gpu_memory_gb",
    "max_gpus",
    "allow_multi_node",
    "datacenter_only",
    "include_stale",
    "fit_on",
]
PRICING_MODELS: tuple[str, ...] = (
    "on_demand",
    "spot",
    "monthly",
    "yearly",
    "reserved_1y",
    "reserved_3y",
    "capacity_block",
)
OBJECTIVES: tuple[str, ...] = ("cheapest", "fastest", "cheapest_hourly")
# --- End of the generated options. ---
WORKLOAD_FIELDS = [row[0] for row in WORKLOAD_OPTIONS]


def workload_of(args: argparse.Namespace) -> dict[str, Any]:
    return {f: getattr(args, f) for f in WORKLOAD_FIELDS if getattr(args, f, None) is not None}


def constraints_of(args: argparse.Namespace) -> dict[str, Any]:
    constraints: dict[str, Any] = {}
    for field in CONSTRAINT_LISTS:
        values = _flat(getattr(args, field, None))
        if values is not None:
            constraints[field] = values
    for field in CONSTRAINT_VALUES:
        value = getattr(args, field, None)
        if value is not None:
            constraints[field] = value
    return constraints


def cmd_recommend(client: Client, args: argparse.Namespace) -> int:
    gates = _gates(args)
    if gates and "tokens" not in workload_of(args):
        raise CliError(
            EXIT_BAD_INPUT,
            "--fail-if-cost-over and --fail-if-hours-over need --tokens "
            "(total cost and hours depend on how much the job trains on)",
        )
    # constraints always goes, even empty: the server fills in its documented defaults then.
    body: dict[str, Any] = {"workload": workload_of(args), "constraints": constraints_of(args)}
    if args.objective is not None:
        body["objective"] = args.objective
    if args.limit is not None:
        body["limit"] = args.limit
    answer = client.post("/api/recommend", body)
    rows = answer.get("recommendations") or []
    if args.json:
        print_json(answer)
    else:
        _print_recommendations(answer, rows)
    if not rows:
        raise _nothing_ranked(answer)
    return _check_gates(gates, rows[0])


def _rejected_counts(answer: dict[str, Any]) -> list[tuple[str, int]]:
    """The answer's rejections as (reason, count), most first."""
    rejected = answer.get("rejected") or {}
    return sorted(
        ((reason, int((entry or {}).get("count", 0))) for reason, entry in rejected.items()),
        key=lambda item: -item[1],
    )


# The server's advice names API fields and values; the client says its own flags instead.
ADVICE_FLAGS: tuple[tuple[str, str], ...] = (
    (r"\bset include_stale=true\b", "pass --include-stale"),
    (r"\binclude_stale=true\b", "--include-stale"),
    (r"\binclude_stale=false\b", "--exclude-stale"),
    (r"\ballow_multi_node=true\b", "no --no-multi-node"),
    (r"\bfit_on=point\b", "--fit-on point"),
    (r"\bgradient_checkpointing=full\b", "--gradient-checkpointing full"),
    (r'\bconstraints\.pricing \(e\.g\. "pricing": \["(\w+)"\]\)', r"--pricing \1"),
    (r"\bset (max_total_usd|max_hours|max_gpus)\b", r"pass \1"),
    (r"\bmax_total_usd\b", "--max-total-usd"),
    (r"\bmax_hours\b", "--max-hours"),
    (r"\bmax_gpus\b", "--max-gpus"),
)


def cli_advice(text: str) -> str:
    """``text`` from the server with the API's parameter names as this client's flags."""
    for pattern, flag in ADVICE_FLAGS:
        text = re.sub(pattern, flag, text)
    return text


def _nothing_ranked(answer: dict[str, Any]) -> CliError:
    """Why no plan was ranked, from ``rejected`` and ``advice``: when the only offers left out
    were left out as stale, they were never weighed (exit 5: rerun with --include-stale);
    otherwise nothing fits (exit 3), with the reasons and the stale count beside them."""
    counts = _rejected_counts(answer)
    stale = dict(counts).get("stale_price", 0)
    others = ", ".join(f"{reason} {count:,}" for reason, count in counts if reason != "stale_price")
    advice = cli_advice(" ".join(answer.get("advice") or []))
    stale_text = (
        f"{stale:,} offer{'s' if stale != 1 else ''} left out as stale (price past the server's "
        "shelf life, never weighed); pass --include-stale to weigh them"
    )
    if stale and not others:
        return CliError(EXIT_ONLY_STALE, f"nothing ranked: {stale_text}")
    line = "nothing fits"
    if others:
        line += f" (rejected: {others})"
    if stale:
        line += f"; {stale_text}"
    return CliError(EXIT_NOTHING_FITS, line + (f"; the server advises: {advice}" if advice else ""))


def _print_recommendations(answer: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    if rows:
        _out(render_table(PLAN_HEADERS, [_plan_cells(r) for r in rows], PLAN_RIGHT))
    else:
        _out("No plan ranked (the reason follows on stderr).")
    counts = _rejected_counts(answer)
    if counts:
        _out("")
        _out("rejected: " + ", ".join(f"{reason} {count:,}" for reason, count in counts))
    for line in answer.get("advice") or []:
        _out(f"advice: {cli_advice(line)}")
    oldest, newest = (
        answer.get("prices_oldest_observed_at"),
        answer.get("prices_newest_observed_at"),
    )
    prices = f"; prices observed {_date(oldest)} to {_date(newest)}" if oldest or newest else ""
    _out(
        f"objective {answer.get('objective', '-')}; {answer.get('considered', '-')} offers "
        f"considered; catalog as of {_date(answer.get('catalog_as_of'))}{prices}"
    )


def _gates(args: argparse.Namespace) -> list[tuple[str, str, float]]:
    gates = []
    if getattr(args, "fail_if_cost_over", None) is not None:
        gates.append(("est_total_usd", "--fail-if-cost-over", args.fail_if_cost_over))
    if getattr(args, "fail_if_hours_over", None) is not None:
        gates.append(("est_hours", "--fail-if-hours-over", args.fail_if_hours_over))
    return gates


def _check_gates(gates: list[tuple[str, str, float]], row: dict[str, Any]) -> int:
    """Gates on the top row: a value over its limit, or missing, fails (exit 1)."""
    if not gates:
        return EXIT_OK
    what = _describe(row) if "instance_type" in row else f"{row.get('gpu')} x{row.get('gpu_count')}"
    failures, passes = [], []
    for key, flag, limit in gates:
        value = row.get(key)
        if value is None:
            unit = "total cost" if key == "est_total_usd" else "hours"
            failures.append(f"{flag} {limit:g}: the server gave no {unit} figure for {what}")
        elif value > limit:
            failures.append(f"{flag} {limit:g}: {what} needs {_gate_value(key, value)}")
        else:
            passes.append(f"{_gate_value(key, value)} <= {flag} {limit:g}")
    if failures:
        _err("gate failed: " + "; ".join(failures))
        return EXIT_GATE_FAILED
    _err(f"gate passed: {what}: " + "; ".join(passes))
    return EXIT_OK


def _gate_value(key: str, value: float) -> str:
    return f"${value:,.2f}" if key == "est_total_usd" else f"{value:,.1f} h"


def cmd_estimate(client: Client, args: argparse.Namespace) -> int:
    if args.fail_if_hours_over is not None and (
        "tokens" not in workload_of(args) or args.gpu is None
    ):
        raise CliError(EXIT_BAD_INPUT, "--fail-if-hours-over needs --tokens and --gpu")
    body: dict[str, Any] = {"workload": workload_of(args)}
    if args.gpu is not None:
        body["gpu"] = args.gpu
    if args.gpu_count is not None:
        body["gpu_count"] = args.gpu_count
    if args.fit_on is not None:
        body["fit_on"] = args.fit_on
    answer = client.post("/api/estimate", body)
    if args.json:
        print_json(answer)
    else:
        _print_estimate(answer)
    fits = _estimate_fits(answer)
    if fits is False:
        need = answer.get("min_gpus")
        hint = f"at least {need} are needed" if need else "no count of this GPU fits"
        if answer.get("fit_on") == "high" and answer.get("fits_point"):
            high = _span(answer.get("memory_per_gpu_gib_range"), 1).rpartition("-")[2]
            hint = (
                f"the estimate fits, the high end of its range ({high} GiB) does not "
                f"(--fit-on point decides on the estimate); {hint}"
            )
        raise CliError(
            EXIT_NOTHING_FITS,
            f"does not fit: {_num(answer.get('memory_per_gpu_gib'))} GiB per GPU on "
            f"{answer.get('gpu_count')} x {answer.get('gpu')}; {hint}",
        )
    return _check_gates(_gates(args), answer)


def _estimate_fits(answer: dict[str, Any]) -> bool | None:
    """Whether the workload fits the given GPUs (None when no GPU was given)."""
    return answer.get("fits") if answer.get("gpu") else None


def _print_estimate(answer: dict[str, Any]) -> None:
    breakdown = answer.get("breakdown") or {}
    parts = ", ".join(f"{k.replace('_', ' ')} {_num(v)}" for k, v in breakdown.items())
    fits = _estimate_fits(answer)
    rows = [
        ("memory per GPU", f"{_num(answer.get('memory_per_gpu_gib'))} GiB ({parts})"),
        ("memory range", _ranged(answer, "memory_per_gpu_gib_range", "GiB")),
        ("total memory", f"{_num(answer.get('total_memory_gib'))} GiB"),
    ]
    if answer.get("gpu"):
        rows.append(("GPUs", f"{answer.get('gpu')} x{answer.get('gpu_count')}"))
        on = "the high end of the range" if answer.get("fit_on") == "high" else "the estimate"
        rows.append(("fits", f"{'yes' if fits else 'no'} (decided on {on})"))
    rows += [
        ("min GPUs", _count(answer.get("min_gpus"))),
        ("training FLOPs", _sci(answer.get("training_flops"))),
        ("MFU", _num(answer.get("mfu"), 3)),
        ("tokens/s per GPU", _num(answer.get("tokens_per_second"), 1)),
        ("GPU-hours", _num(answer.get("gpu_hours"))),
        ("GPU-hours range", _ranged(answer, "gpu_hours_range", "")),
        ("hours", _num(answer.get("est_hours"))),
    ]
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        _out(f"{label.ljust(width)}  {value}")
    notes = answer.get("notes") or []
    if notes:
        _out("")
        for note in notes:
            _out(f"note: {note}")


def _ranged(answer: dict[str, Any], key: str, unit: str) -> str:
    """A range with its unit and what it rests on: 27-66 GiB (5th-95th percentile, 16 rows)."""
    span = answer.get(key)
    if not span:
        return "-"
    basis = (answer.get("range_basis") or {}).get("time" if "hours" in key else "memory") or {}
    quantiles = (answer.get("range_basis") or {}).get("quantiles") or []
    where = ""
    if basis.get("rows") and len(quantiles) == 2:
        where = (
            f" ({quantiles[0] * 100:g}th-{quantiles[1] * 100:g}th percentile of "
            f"{basis['rows']} calibration rows, {basis.get('basis')})"
        )
    return f"{_span(span, 1)} {unit}".rstrip() + where


def _sci(value: Any) -> str:
    return f"{value:.3g}" if isinstance(value, (int, float)) else "-"


COMPARE_HEADERS = [
    "target", "fits", "provider", "region", "instance type", "gpu x count", "pricing", "$/h",
    "hours", "total $", "mem/GPU GiB (range)", "headroom %", "why not / first warning",
]  # fmt: skip
COMPARE_RIGHT = {7, 8, 9, 10, 11}


def cmd_compare(client: Client, args: argparse.Namespace) -> int:
    if not args.targets:
        raise CliError(
            EXIT_BAD_INPUT, "give at least one --target provider/instance_type or --target-gpu"
        )
    body: dict[str, Any] = {
        "workload": workload_of(args),
        "targets": args.targets,
        "constraints": constraints_of(args),
    }
    answer = client.post("/api/compare", body)
    rows = answer.get("rows") or []
    if args.json:
        print_json(answer)
    else:
        cells = []
        for row in rows:
            fits = bool(row.get("fits"))
            warnings = row.get("warnings") or []
            note = cli_advice(row.get("why_not") or "") or (warnings[0] if warnings else "")
            cells.append(
                [
                    str(row["target"]),
                    "yes" if fits else "no",
                    str(row.get("provider") or "-"),
                    _where(row) if fits else "-",
                    str(row.get("instance_type") or "-"),
                    _gpus(row) if fits else str(row.get("gpu") or "-"),
                    str(row.get("pricing_model") or "-"),
                    _usd(row.get("usd_per_hour")),
                    _num(row.get("est_hours"), 1),
                    _usd(row.get("est_total_usd")),
                    _memory_cell(row),
                    _num(row.get("headroom_pct"), 0),
                    _truncate(str(note), 72),
                ]
            )
        _out(render_table(COMPARE_HEADERS, cells, COMPARE_RIGHT))
    if not any(row.get("fits") for row in rows):
        raise CliError(EXIT_NOTHING_FITS, "nothing fits: none of the targets holds the workload")
    return EXIT_OK


PRICE_HEADERS = [
    "provider", "region", "instance type", "gpu x count", "pricing", "price", "$/h", "$/GPU-h",
    "observed", "stale",
]  # fmt: skip


def cmd_prices(client: Client, args: argparse.Namespace) -> int:
    query: dict[str, Any] = {}
    for name, value in (
        ("provider", args.provider),
        ("region", args.region),
        ("country", args.country),
        ("gpu", args.gpu),
        ("pricing_model", args.pricing),
    ):
        values = _flat(value)
        if values:
            query[name] = ",".join(values)
    for name in (
        "max_usd_per_hour",
        "max_usd_per_gpu_hour",
        "min_gpu_memory_gib",
        "min_gpu_count",
        "ordering",
    ):
        if getattr(args, name) is not None:
            query[name] = getattr(args, name)
    if args.mainland_china is not None:
        query["mainland_china"] = str(args.mainland_china).lower()
    if args.exclude_stale:
        query["stale"] = "false"
    answer = client.list_all("/api/prices/", query, args.limit)
    if args.json:
        print_json(answer)
        return EXIT_OK
    rows = [
        [
            str(p.get("provider") or "-"),
            str(p.get("region") or "-"),
            str(p.get("instance_type") or "-"),
            _gpus(p),
            str(p.get("pricing_model") or "-"),
            f"{p.get('amount')} {p.get('currency')}/{p.get('unit')}",
            _usd(p.get("usd_per_hour")),
            _usd(p.get("usd_per_gpu_hour")),
            str(p.get("observed_at") or "-")[:10],
            "stale" if p.get("stale") else "",
        ]
        for p in answer["results"]
    ]
    _out(render_table(PRICE_HEADERS, rows, {5, 6, 7}))
    _out(f"{len(rows)} of {answer['count']} prices")
    return EXIT_OK


GPU_HEADERS = [
    "slug", "name", "vendor", "memory GiB", "bandwidth GB/s", "bf16 TFLOPS", "fp8 TFLOPS",
    "segment",
]  # fmt: skip


def cmd_gpus(client: Client, args: argparse.Namespace) -> int:
    query: dict[str, Any] = {}
    if args.vendor:
        query["vendor"] = ",".join(_flat(args.vendor) or [])
    for name in ("min_memory_gib", "q", "ordering"):
        if getattr(args, name) is not None:
            query[name] = getattr(args, name)
    if args.datacenter_only:
        query["datacenter_use_allowed"] = "true"
    answer = client.list_all("/api/gpus/", query, args.limit)
    if args.json:
        print_json(answer)
        return EXIT_OK
    rows = [
        [
            str(g.get("slug") or "-"),
            str(g.get("name") or "-"),
            str(g.get("vendor") or "-"),
            _num(g.get("memory_gib"), 0),
            _num(g.get("memory_bandwidth_gb_s"), 0),
            _num(g.get("bf16_tflops"), 0),
            _num(g.get("fp8_tflops"), 0),
            str(g.get("segment") or "-"),
        ]
        for g in answer["results"]
    ]
    _out(render_table(GPU_HEADERS, rows, {3, 4, 5, 6}))
    _out(f"{len(rows)} of {answer['count']} GPUs")
    return EXIT_OK


# --- Argument parser --------------------------------------------------------------------------


def _common_options() -> argparse.ArgumentParser:
    """Options every command takes, before or after the command name."""
    common = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    s = argparse.SUPPRESS  # so a value given before the command is not reset after it
    common.add_argument(
        "--url", default=s, help=f"server URL (default: $GPUATLAS_URL or {DEFAULT_URL})"
    )
    common.add_argument(
        "--timeout", type=positive(float), default=s, help="seconds per request (default 60)"
    )
    common.add_argument(
        "--retries",
        type=non_negative(int),
        default=s,
        help="retries on 429, 5xx and network errors, with backoff (default 3)",
    )
    common.add_argument(
        "--json", action="store_true", default=s, help="print the server's JSON (for scripts)"
    )
    return common


COMMON_DEFAULTS = {"url": None, "timeout": 60.0, "retries": 3, "json": False}


def _add_workload(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("workload (see docs/api.md)")
    types: dict[str, Callable[[str], Any]] = {
        "int": non_negative(int),
        "float": non_negative(float),
        "count": parse_count,
    }
    for field, kind, help_text, bare, flag in WORKLOAD_OPTIONS:
        if kind == "object":
            g.add_argument(flag, dest=field, type=json_file, metavar="FILE", help=help_text)
        elif kind == "bool":
            g.add_argument(flag, dest=field, action="store_const", const=True, help=help_text)
            g.add_argument("--no-" + flag[2:], dest=field, action="store_const", const=False)
        elif bare is not None:
            g.add_argument(flag, dest=field, nargs="?", const=bare, help=help_text)
        else:
            g.add_argument(flag, dest=field, type=types.get(kind, str), help=help_text)


def _add_constraints(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("constraints (lists: comma-separated or repeated)")
    g.add_argument("--providers", type=comma_list, action="append", help="provider slugs")
    g.add_argument("--regions", type=comma_list, action="append", help="region codes")
    g.add_argument("--countries", type=comma_list, action="append", help="ISO country codes")
    g.add_argument(
        "--mainland-china",
        dest="mainland_china",
        action="store_const",
        const=True,
        help="only mainland-China regions",
    )
    g.add_argument(
        "--no-mainland-china",
        dest="mainland_china",
        action="store_const",
        const=False,
        help="no mainland-China regions",
    )
    g.add_argument("--pricing", type=comma_list, action="append", help=", ".join(PRICING_MODELS))
    g.add_argument("--max-usd-per-hour", type=non_negative(float))
    g.add_argument("--max-total-usd", type=non_negative(float))
    g.add_argument("--max-hours", type=non_negative(float))
    g.add_argument("--gpus", type=comma_list, action="append", help="GPU slugs")
    g.add_argument("--min-gpu-memory-gb", type=non_negative(float))
    g.add_argument("--max-gpus", type=non_negative(int), help="default 128")
    g.add_argument("--no-multi-node", dest="allow_multi_node", action="store_const", const=False)
    g.add_argument("--datacenter-only", action="store_const", const=True, help="no GeForce")
    g.add_argument(
        "--include-stale",
        dest="include_stale",
        action="store_const",
        const=True,
        help="rank every stale price, flagged (by default stale spot/marketplace prices are left out)",
    )
    g.add_argument(
        "--exclude-stale",
        dest="include_stale",
        action="store_const",
        const=False,
        help="leave out prices older than the server's staleness limit",
    )
    _add_fit_on(g)


def _add_fit_on(group: Any) -> None:
    group.add_argument(
        "--fit-on",
        choices=("high", "point"),
        help="decide the fit on the high end of the memory range (the server's default) or on "
        "the estimate itself",
    )


def _add_gates(parser: argparse.ArgumentParser, *, cost: bool = True) -> None:
    g = parser.add_argument_group("gates (exit 1 when the top recommendation is over)")
    if cost:
        g.add_argument(
            "--fail-if-cost-over", type=non_negative(float), metavar="USD", help="total $"
        )
    g.add_argument("--fail-if-hours-over", type=non_negative(float), metavar="H", help="hours")


def build_parser() -> argparse.ArgumentParser:
    common = _common_options()
    parser = argparse.ArgumentParser(
        prog="gpuatlas",
        description="GPU Atlas client: what a deep-learning job should run on, and its cost.",
        epilog="Exit codes: 0 ok, 1 gate failed, 2 bad input, 3 nothing fits, "
        "4 server or network error. Environment: GPUATLAS_URL, GPUATLAS_TOKEN.",
        parents=[common],
        allow_abbrev=False,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="command")

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        return commands.add_parser(
            name, help=help_text, description=help_text, parents=[common], allow_abbrev=False
        )

    p = command("recommend", "rank instances for a workload (POST /api/recommend)")
    _add_workload(p)
    _add_constraints(p)
    p.add_argument("--objective", help=f"{', '.join(OBJECTIVES)} (default {OBJECTIVES[0]})")
    p.add_argument("--limit", type=non_negative(int), help="recommendations (1-200, default 10)")
    _add_gates(p)
    p.set_defaults(handler=cmd_recommend)

    p = command("estimate", "memory, compute and time for a workload (POST /api/estimate)")
    _add_workload(p)
    p.add_argument("--gpu", help="GPU slug, e.g. h100-sxm")
    p.add_argument("--gpu-count", type=non_negative(int), help="number of GPUs (default 1)")
    _add_fit_on(p)
    _add_gates(p, cost=False)
    p.set_defaults(handler=cmd_estimate)

    p = command("compare", "named instance types or GPUs side by side (POST /api/compare)")
    _add_workload(p)
    _add_constraints(p)
    t = p.add_argument_group("targets (repeat; the answer keeps their order)")
    t.add_argument(
        "--target",
        dest="targets",
        action="append",
        type=compare_target,
        metavar="PROVIDER/INSTANCE_TYPE",
    )
    t.add_argument(
        "--target-gpu", dest="targets", action="append", type=compare_gpu_target, metavar="GPU"
    )
    p.set_defaults(handler=cmd_compare)

    p = command("prices", "current prices (GET /api/prices/), following pages up to --limit")
    p.add_argument("--provider", type=comma_list, action="append")
    p.add_argument("--region", type=comma_list, action="append")
    p.add_argument("--country", type=comma_list, action="append")
    p.add_argument("--gpu", type=comma_list, action="append")
    p.add_argument("--pricing", type=comma_list, action="append", help=", ".join(PRICING_MODELS))
    p.add_argument("--max-usd-per-hour", type=non_negative(float))
    p.add_argument("--max-usd-per-gpu-hour", type=non_negative(float))
    p.add_argument("--min-gpu-memory-gib", type=non_negative(float))
    p.add_argument("--min-gpu-count", type=non_negative(float))
    p.add_argument("--mainland-china", dest="mainland_china", action="store_const", const=True)
    p.add_argument("--no-mainland-china", dest="mainland_china", action="store_const", const=False)
    p.add_argument("--exclude-stale", action="store_true", help="only fresh prices")
    p.add_argument("--ordering", help="e.g. usd_per_gpu_hour, -observed_at")
    p.add_argument(
        "--limit", type=non_negative(int), default=50, help="rows (default 50; 0 for all)"
    )
    p.set_defaults(handler=cmd_prices)

    p = command("gpus", "the GPU catalog (GET /api/gpus/)")
    p.add_argument("--min-memory-gib", type=non_negative(float))
    p.add_argument("--vendor", type=comma_list, action="append", help="e.g. nvidia,amd")
    p.add_argument("--q", help="name or alias contains")
    p.add_argument("--datacenter-only", action="store_true", help="datacenter use allowed")
    p.add_argument("--ordering", help="e.g. -bf16_tflops, memory_gib")
    p.add_argument("--limit", type=non_negative(int), default=0, help="rows (default 0: all)")
    p.set_defaults(handler=cmd_gpus)
    return parser


def _base_url(args: argparse.Namespace) -> str:
    url = (args.url or os.environ.get("GPUATLAS_URL") or DEFAULT_URL).strip()
    parts = urllib.parse.urlsplit(url)
    try:
        parts.port  # noqa: B018 -- raises ValueError for a port that is not a number
    except ValueError:
        parts = parts._replace(netloc="")
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise CliError(EXIT_BAD_INPUT, f"{url!r} is not an http(s) URL (GPUATLAS_URL or --url)")
    return url


DASH_VALUE_OPTIONS = ("--ordering",)  # values such as -bf16_tflops (descending) start with "-"


def _glue_dash_values(argv: list[str]) -> list[str]:
    """``--ordering -x`` as ``--ordering=-x``: argparse would read ``-x`` as an option."""
    glued: list[str] = []
    index = 0
    while index < len(argv):
        token = argv[index]
        if token in DASH_VALUE_OPTIONS and index + 1 < len(argv):
            glued.append(f"{token}={argv[index + 1]}")
            index += 2
        else:
            glued.append(token)
            index += 1
    return glued


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit code (see the module docstring)."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parser.parse_args(_glue_dash_values(argv))
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
        return exc.code if isinstance(exc.code, int) else EXIT_BAD_INPUT
    for name, default in COMMON_DEFAULTS.items():
        if not hasattr(args, name):
            setattr(args, name, default)
    if not getattr(args, "handler", None):
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    try:
        client = Client(
            _base_url(args),
            token=(os.environ.get("GPUATLAS_TOKEN") or "").strip() or None,
            timeout=args.timeout,
            retries=args.retries,
        )
        status: int = args.handler(client, args)
        return status
    except CliError as exc:
        for line in exc.lines:
            if line.startswith(" "):  # continuation: a field error under its heading
                print(line, file=sys.stderr)
            else:
                _err(line)
        return exc.code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
