"""The estimator's ranges: quantiles of its cross-validated errors on bench/calibration.csv.

Run from the repository root after any change to the calibration rows or the model:

    python bench/uncertainty.py            # rewrite sizing/uncertainty.json, print the coverage
    python bench/uncertainty.py --check    # exit 1 when sizing/uncertainty.json is stale

Each calibration row is predicted as bench/sizing_accuracy.py predicts it out of source: with
the estimator's fitted constants fitted again without the row's source (leave_one_source_out).
The row's multiplier is what that estimate would have had to be multiplied by: measured /
estimate. Memory rows give memory multipliers; throughput and decode rows give time multipliers
(estimated / measured tokens/s), GPU-hours rows directly.

What a memory row says about the job's need (docs/sizing.md "Ranges"; ``role``):
- a point: the peak of the training or serving step the estimator models;
- an upper bound: the same setup measured on several cards fitted in the smallest figure, so
  the larger ones (a caching allocator keeping what it reserved on a roomier card) bound the
  need from above and do not set a range's ends;
- another quantity: a peak the source itself says is not the modelled step (set at model
  initialisation, or with states paged out to the host), compared on its own.
Memory groups are split by layout: one GPU, or several (sharded, tensor or pipeline parallel),
whose peaks differ in kind. Inference memory is never given training rows' spread: with too few
inference rows it gets INFERENCE_MEMORY_FALLBACK.

The table holds the 5th and 95th percentile of the points' multipliers per group (framework and
method, method, layout, every row of the kind) with enough rows; sizing/uncertainty.py picks
the narrowest group a workload falls in. The coverage printed is measured leave-one-source-out
too: each source's rows, with their out-of-source estimates, are checked against a table built
without that source's rows (the other rows keep the multipliers computed once, whose constants
were fitted with that source among the others: refitting for every pair of sources would take
minutes for a small difference).
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import hashlib
import json
import statistics
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.sizing_accuracy import (  # noqa: E402
    CSV_PATH,
    leave_one_source_out,
    load_gpus,
    measured,
    method_of,
)
from sizing.presets import load_presets  # noqa: E402
from sizing.uncertainty import (  # noqa: E402
    INFERENCE_MEMORY_MARGIN,
    TABLE_PATH,
    Spread,
    spread_from,
)

COMMAND = "python bench/uncertainty.py"
# The range: from the 5th to the 95th percentile of the comparable rows, a nominal 90%. Checked
# on sources left out it holds less (75% of memory points, 83% of time rows on 2026-12-01: few
# sources, erring in different directions); the 10th-90th held 70% and 74%. docs/sizing.md
# "Ranges" and bench/RESULTS.md "Ranges" have the figures.
QUANTILES = (0.05, 0.95)
# A group gets its own entry only with at least this many rows from at least this many sources;
# a group from one source alone would measure that source's spread, not a new user's.
MIN_ROWS = 6
# Three sources, not two: checked leave-one-source-out, a group of two sources is a group of one
# whenever either is held out, and its range was that one source's spread (LoRA on one GPU from
# torchtune and PEFT alone: 0.90-1.05, where litgpt's rows reach 1.21).
MIN_SOURCES = 3
# The kind of figure each calibration kind says something about.
FIGURE = {"memory": "memory", "throughput": "time", "decode": "time", "gpu_hours": "time"}
# Memory rows whose source says the peak is not the step the estimator models (it models the
# training or serving step with every state on the GPU). Each reason restates the row's own
# note in bench/calibration.csv; they are compared on their own, never used for a range.
OTHER_QUANTITY = {
    "tq1m": (
        "peak set at model initialisation: the source's table gives 9.13 GB reserved after "
        "init (quantising the bf16 checkpoint) against a 9.29 GB peak, so the training step's "
        "own peak is not shown"
    ),
    "t8bm": (
        "optimizer states paged out to host memory (PagedAdamW8bit on a 24 GB card): the GPU "
        "held less than the job's states, which the estimator keeps on the GPU"
    ),
}
# Columns that do not describe the setup: two memory rows equal in every other column are the
# same job measured on different cards.
NOT_SETUP = {
    "id",
    "gpu",
    "gpu_memory_bandwidth_gb_s",
    "measured_value",
    "unit",
    "source",
    "notes",
    "source_key",
}


def framework_of(row: dict) -> str:
    return row.get("framework") or "hf"


def layout_of(row: dict) -> str:
    """``single`` (one GPU) or ``multi`` (sharded, tensor or pipeline parallel over several)."""
    return "multi" if int(row.get("gpu_count") or 1) > 1 else "single"


def roles(rows: list[dict]) -> dict[str, tuple[str, str]]:
    """Each memory row's role (``point``, ``upper_bound`` or ``other_quantity``) and why.

    Where the same setup was measured on several cards, the smallest figure is the job's need
    (it ran in that); the others are upper bounds of it: PyTorch's caching allocator keeps what
    it reserved while the card has room, so a roomier card shows a larger peak for the same job.
    """
    out: dict[str, tuple[str, str]] = {}
    same: dict[tuple, list[dict]] = {}
    for row in rows:
        if row["kind"] != "memory":
            continue
        if row["id"] in OTHER_QUANTITY:
            out[row["id"]] = ("other_quantity", OTHER_QUANTITY[row["id"]])
            continue
        out[row["id"]] = ("point", "")
        key = tuple(sorted((k, v) for k, v in row.items() if k not in NOT_SETUP))
        same.setdefault(key, []).append(row)
    for group in same.values():
        if len({row["gpu"] for row in group}) < 2:
            continue
        need = min(group, key=measured)
        for row in group:
            if row is not need and measured(row) > measured(need):
                out[row["id"]] = (
                    "upper_bound",
                    f"same setup as {need['id']}, which ran in {measured(need):.1f} GiB on "
                    f"{need['gpu']}; {row['gpu']} had room to keep more reserved",
                )
    return out


def multipliers(rows: list[dict], loso: list[float]) -> list[float]:
    """Each row's multiplier of the estimate (memory or time) from its out-of-source error."""
    out = []
    for row, error in zip(rows, loso, strict=True):
        value = 1 / (1 + error)  # measured / estimate, in the row's own measure
        out.append(1 / value if row["kind"] in ("throughput", "decode") else value)
    return out


def quantile(values: list[float], q: float) -> float:
    """The ``q`` quantile, linear between order statistics (numpy's default, statistics'
    "inclusive" method): position q x (n - 1) in the sorted values."""
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    below = int(pos)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (pos - below)


def _quantiles(values: list[float]) -> tuple[float, float]:
    return quantile(values, QUANTILES[0]), quantile(values, QUANTILES[1])


def _entry(members: list[tuple[dict, float]]) -> dict:
    values = [value for _, value in members]
    low, high = _quantiles(values)
    return {
        "low": round(low, 3),
        "high": round(high, 3),
        "median": round(statistics.median(values), 3),
        "rows": len(values),
        "sources": len({row["source_key"] for row, _ in members}),
    }


def group_keys(row: dict) -> list[tuple[str, str]]:
    """The (level, key) groups a row belongs to, as sizing/uncertainty.py spread_from looks
    them up. Memory: training rows by layout (``lora/single``), inference rows on their own and
    never in ``layout`` or ``all``; time: by framework and method, as before."""
    method, framework = method_of(row), framework_of(row)
    if FIGURE[row["kind"]] != "memory":
        return [("method", method), ("framework_method", f"{framework}/{method}"), ("all", "")]
    if method == "inference":
        return [("method", method), ("framework_method", f"{framework}/{method}")]
    layout = layout_of(row)
    return [
        ("method", f"{method}/{layout}"),
        ("framework_method", f"{framework}/{method}/{layout}"),
        ("layout", layout),
        ("all", ""),
    ]


def build_kinds(rows: list[dict], values: list[float], role: dict | None = None) -> dict:
    """The table's ``kinds``: per figure, the groups with enough rows and sources, from the
    rows that are points (``role``: from ``roles``; every row when None)."""
    kinds: dict = {}
    for kind in ("memory", "time"):
        members = [
            (row, v)
            for row, v in zip(rows, values, strict=True)
            if FIGURE[row["kind"]] == kind and (role is None or _role(role, row) == "point")
        ]
        if not members:
            continue
        groups: dict = {"all": None, "method": {}, "framework_method": {}}
        if kind == "memory":
            groups["layout"] = {}
        by: dict[tuple[str, str], list] = {}
        for row, v in members:
            for level_key in group_keys(row):
                by.setdefault(level_key, []).append((row, v))
        for (level, key), group in sorted(by.items()):
            sources = {row["source_key"] for row, _ in group}
            if level == "all":
                groups["all"] = _entry(group)
            elif len(group) >= MIN_ROWS and len(sources) >= MIN_SOURCES:
                groups[level][key] = _entry(group)
        if kind == "memory":
            groups["inference_fallback"] = _inference_fallback(
                [(row, v) for row, v in members if method_of(row) == "inference"]
            )
        kinds[kind] = groups
    return kinds


def _inference_fallback(members: list[tuple[dict, float]]) -> dict:
    """Serving memory's range when no inference group has enough rows: the stated margin either
    side of the estimate, widened to hold every inference row there is (however few)."""
    values = [v for _, v in members]
    m = INFERENCE_MEMORY_MARGIN
    return {
        "low": round(min([1 - m, *values]), 3),
        "high": round(max([1 + m, *values]), 3),
        "margin": m,
        "rows": len(values),
        "sources": len({row["source_key"] for row, _ in members}),
    }


def _role(role: dict, row: dict) -> str:
    return role.get(row["id"], ("point", ""))[0]


def spread_of(row: dict, kinds: dict) -> Spread:
    """The range a table gives the row's group (the lookup a workload like it gets)."""
    layout = layout_of(row)
    return spread_from(kinds, FIGURE[row["kind"]], framework_of(row), method_of(row), layout)


def inside(row: dict, value: float, kinds: dict) -> bool:
    """Whether a row's multiplier (its measured figure over its out-of-source estimate) lies in
    the range a table gives its group."""
    s = spread_of(row, kinds)
    return s.low - 1e-9 <= value <= s.high + 1e-9


def _held_out(
    rows: list[dict], values: list[float], role: dict | None
) -> Iterator[tuple[int, dict, Spread]]:
    """Each row with the table built without its source's rows: (index, row, Spread)."""
    for source in sorted({row["source_key"] for row in rows}):
        keep = [i for i, row in enumerate(rows) if row["source_key"] != source]
        kinds = build_kinds([rows[i] for i in keep], [values[i] for i in keep], role)
        for i, row in enumerate(rows):
            if row["source_key"] == source:
                yield i, row, spread_of(row, kinds)


def coverage(rows: list[dict], values: list[float], role: dict | None = None) -> dict:
    """Share of point rows inside their range when the table is built without the row's source,
    each row judged on its out-of-source estimate (the shipped constants saw its source). Upper
    bounds count as consistent when the bound is not below the range's low end (the need may be
    anywhere under it); ``memory/every_row`` counts every memory row as if it were a point."""
    hits: dict[str, list[bool]] = {}
    for i, row, s in _held_out(rows, values, role):
        figure = FIGURE[row["kind"]]
        kind_role = "point" if role is None else _role(role, row)
        if kind_role == "point":
            hit = s.low - 1e-9 <= values[i] <= s.high + 1e-9
            keys = [figure, f"{figure}/{method_of(row)}"]
            if figure == "memory":
                keys.append(f"memory/{layout_of(row)}")
            for key in keys:
                hits.setdefault(key, []).append(hit)
        elif kind_role == "upper_bound":
            hits.setdefault("memory_upper_bounds_consistent", []).append(values[i] >= s.low)
        if figure == "memory" and role is not None:
            strict = s.low - 1e-9 <= values[i] <= s.high + 1e-9
            hits.setdefault("memory/every_row", []).append(strict)
    return {key: round(sum(v) / len(v), 3) for key, v in sorted(hits.items())}


def apart(rows: list[dict], values: list[float], role: dict) -> list[dict]:
    """The memory rows that set no range (upper bounds, other quantities): each with its
    multiplier, its role and why, and the range its group gets without its source."""
    out = []
    for i, row, s in _held_out(rows, values, role):
        kind_role, why = role.get(row["id"], ("point", ""))
        if kind_role != "point":
            out.append(
                {
                    "id": row["id"],
                    "role": kind_role,
                    "multiplier": round(values[i], 3),
                    "range": [round(s.low, 3), round(s.high, 3)],
                    "basis": s.basis,
                    "why": why,
                }
            )
    return sorted(out, key=lambda e: e["id"])


def load(csv_path: Path = CSV_PATH) -> tuple[list[dict], list[float], str]:
    """The calibration rows, their out-of-source errors and the file's sha256."""
    raw = Path(csv_path).read_bytes()
    with open(csv_path, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    meas = [measured(row) for row in rows]
    loso, _ = leave_one_source_out(rows, load_presets(), load_gpus(), meas)
    return rows, loso, hashlib.sha256(raw).hexdigest()


def build(csv_path: Path = CSV_PATH, today: dt.date | None = None) -> dict:
    """The whole table, as sizing/uncertainty.json holds it."""
    rows, loso, digest = load(csv_path)
    values = multipliers(rows, loso)
    role = roles(rows)
    return {
        "generated": (today or dt.date.today()).isoformat(),
        "command": COMMAND,
        "calibration_csv_sha256": digest,
        "calibration_rows": len(rows),
        "sources": len({row["source_key"] for row in rows}),
        "quantiles": list(QUANTILES),
        "min_rows": MIN_ROWS,
        "min_sources": MIN_SOURCES,
        "kinds": build_kinds(rows, values, role),
        "coverage_leave_one_source_out": coverage(rows, values, role),
        # The memory rows that set no range, and the range their group gets without them.
        "memory_rows_apart": apart(rows, values, role),
    }


def same(a: dict, b: dict) -> bool:
    """Tables equal but for the date they were made."""
    return {**a, "generated": None} == {**b, "generated": None}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the committed table is stale")
    args = ap.parse_args(argv)
    fresh = build()
    if args.check:
        committed = json.loads(TABLE_PATH.read_text(encoding="utf-8"))
        if not same(committed, fresh):
            print(f"{TABLE_PATH.relative_to(ROOT)} is stale: run {COMMAND}")
            return 1
        print(f"{TABLE_PATH.relative_to(ROOT)} is current")
        return 0
    TABLE_PATH.write_text(json.dumps(fresh, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {TABLE_PATH.relative_to(ROOT)}")
    for kind, groups in fresh["kinds"].items():
        print(f"\n{kind:28} {'rows':>4} {'src':>3} {'low':>6} {'median':>6} {'high':>6}")
        listed = [("all", groups["all"])]
        for level in ("layout", "method", "framework_method"):
            listed += [(f"{level}:{k}", e) for k, e in groups.get(level, {}).items()]
        for name, e in listed:
            print(
                f"{name:28} {e['rows']:4d} {e['sources']:3d} {e['low']:6.3f} "
                f"{e['median']:6.3f} {e['high']:6.3f}"
            )
    print(f"\nCoverage, leave-one-source-out (nominal {QUANTILES[1] - QUANTILES[0]:.0%}):")
    for key, share in fresh["coverage_leave_one_source_out"].items():
        print(f"  {key:32} {share:6.1%}")
    print(
        "\nMemory rows that set no range (multiplier; range of their group without their source):"
    )
    for e in fresh["memory_rows_apart"]:
        low, high = e["range"]
        print(
            f"  {e['id']:6} {e['role']:14} x{e['multiplier']:.3f} [{low:.3f}, {high:.3f}] "
            f"{e['basis']}: {e['why']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
