"""Sizing accuracy: the estimator against published measurements (bench/calibration.csv).

Run from the repository root:

    python bench/sizing_accuracy.py            # every row, then the median |error| per kind
    python bench/sizing_accuracy.py --kind memory --notes   # one kind, with the estimator's working
    python bench/sizing_accuracy.py --check    # exit 1 when a target is missed

Each row is a workload in the estimator's own field names plus what was measured and how:
- memory: `max_allocated` (torch.cuda.max_memory_allocated: no CUDA context, no allocator slack),
  `nvidia_smi` (everything the process holds) or `reported` (method not stated: compared without
  the CUDA context); unit GB (1e9 B), GiB or MiB.
- throughput: training tokens/s per GPU; decode: generated tokens/s of the whole job;
  gpu_hours: GPU-hours of a published training run.
Models that are not presets carry their architecture in the `arch` column.
GPU figures come from fixtures/gpus.yaml.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

from sizing.estimator import GPUSpec, ModelArch, Topology, estimate, parse_workload  # noqa: E402
from sizing.presets import load_presets  # noqa: E402

CSV_PATH = ROOT / "bench" / "calibration.csv"
GPUS_PATH = ROOT / "fixtures" / "gpus.yaml"
# Targets from the issue: median absolute error.
TARGETS = {"memory": 0.10, "gpu_hours": 0.20, "throughput": 0.20, "decode": 0.20}
UNITS_GIB = {"GB": 1e9 / 2**30, "GiB": 1.0, "MiB": 1 / 1024}
WORKLOAD_FIELDS = (
    "model",
    "params_b",
    "task",
    "method",
    "precision",
    "mixed_precision",
    "optimizer",
    "batch_size",
    "seq_len",
    "gradient_checkpointing",
    "sharding",
    "tensor_parallel",
    "pipeline_parallel",
    "gradient_accumulation",
    "attention",
    "lora_rank",
    "lora_targets",
    "tokens",
    "context_len",
    "concurrency",
)
ARCH_KEYS = {
    "kind": ("kind", str),
    "layers": ("layers", int),
    "decoder_layers": ("decoder_layers", int),
    "hidden": ("hidden_size", int),
    "heads": ("heads", int),
    "kv_heads": ("kv_heads", int),
    "head_dim": ("head_dim", int),
    "intermediate": ("intermediate_size", int),
    "moe_intermediate": ("moe_intermediate_size", int),
    "experts": ("experts", int),
    "active_experts": ("active_experts", int),
    "vocab": ("vocab_size", int),
    "gated": ("gated_mlp", lambda v: v == "1"),
    "norm": ("norm", str),
    "tied": ("tied_embeddings", lambda v: v == "1"),
    "bias": ("bias", lambda v: v == "1"),
    "dropout": ("dropout", lambda v: v == "1"),
}


def arch_from_row(row: dict) -> ModelArch:
    """ModelArch for a calibration model given inline as `key=value;...`."""
    kwargs: dict = {"name": f"calib-{row['id']}", "family": "calibration", "kind": "decoder"}
    for part in row["arch"].split(";"):
        key, _, value = part.partition("=")
        field, conv = ARCH_KEYS[key.strip()]
        kwargs[field] = conv(value.strip())
    return ModelArch(params_b=float(row["params_b"]), source=row["source"], **kwargs)


def predict(row: dict, presets: dict, gpus: dict) -> tuple[float, object]:
    """Estimator's figure for the row, in the row's own measure, and the Estimate."""
    data = {k: row[k] for k in WORKLOAD_FIELDS if row.get(k, "") != ""}
    table = presets
    if row.get("arch"):
        arch = arch_from_row(row)
        table = {**presets, arch.name: arch}
        data.pop("params_b", None)
        data["model"] = arch.name
    w = parse_workload(data, table)
    gpu = gpus[row["gpu"]]
    n = int(row["gpu_count"] or 1)
    topo = Topology(
        gpu_count=n,
        gpus_per_node=int(row["gpus_per_node"] or 8),
        intra_node="nvlink" if gpu.nvlink_bandwidth_gb_s else "pcie",
        inter_node_rdma=row.get("inter_node_rdma", "true") != "false",
        inter_node_gbps=float(row["inter_node_gbps"]) if row.get("inter_node_gbps") else None,
    )
    est = estimate(w, gpu=gpu, gpu_count=n, topology=topo)
    kind, measure = row["kind"], row["measure"]
    if kind == "memory":
        value = est.memory_per_gpu_gib
        if measure == "max_allocated":
            value -= est.breakdown["overhead"]
        elif measure == "reported":
            value -= est.overhead_breakdown["cuda_context"]
        return value, est
    if kind == "throughput":
        return est.tokens_per_second or 0.0, est
    if kind == "decode":
        return est.tokens_per_second_total or 0.0, est
    if kind == "gpu_hours":
        return est.gpu_hours or 0.0, est
    raise ValueError(f"row {row['id']}: unknown kind {kind!r}")


def measured(row: dict) -> float:
    """The published figure, converted to GiB for memory rows."""
    value = float(row["measured_value"])
    if row["kind"] == "memory":
        value *= UNITS_GIB[row["unit"]]
    return value


def load_gpus() -> dict[str, GPUSpec]:
    with open(GPUS_PATH, encoding="utf-8") as fh:
        return {g["slug"]: GPUSpec.from_mapping(g) for g in yaml.safe_load(fh)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--csv", default=str(CSV_PATH))
    ap.add_argument("--kind", choices=sorted(TARGETS))
    ap.add_argument("--notes", action="store_true", help="print the estimator's working per row")
    ap.add_argument("--check", action="store_true", help="exit 1 if a median misses its target")
    args = ap.parse_args(argv)

    presets = load_presets()
    gpus = load_gpus()
    with open(args.csv, encoding="utf-8", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if not args.kind or r["kind"] == args.kind]

    errors: dict[str, list[float]] = {}
    print(
        f"{'id':4} {'kind':10} {'model':16} {'measured':>12} {'predicted':>12} {'error':>8}  source"
    )
    for row in rows:
        pred, est = predict(row, presets, gpus)
        meas = measured(row)
        err = pred / meas - 1
        errors.setdefault(row["kind"], []).append(err)
        unit = "GiB" if row["kind"] == "memory" else row["unit"]
        model = row["model"] or f"{float(row['params_b']):g}B"
        print(
            f"{row['id']:4} {row['kind']:10} {model:16} {meas:12,.2f} {pred:12,.2f} {err:+8.1%}  "
            f"{unit}; {row['source'][:70]}"
        )
        if args.notes:
            for line in est.notes:
                print(f"       {line}")
    print()
    print(
        f"{'kind':10} {'rows':>4} {'median |err|':>13} {'mean |err|':>11} {'within 20%':>11} {'target':>7}"
    )
    ok = True
    for kind, errs in errors.items():
        abs_errs = [abs(e) for e in errs]
        med = statistics.median(abs_errs)
        within = sum(e <= 0.2 for e in abs_errs) / len(abs_errs)
        target = TARGETS[kind]
        ok &= med <= target
        flag = "ok" if med <= target else "MISSED"
        print(
            f"{kind:10} {len(errs):4d} {med:13.1%} {statistics.fmean(abs_errs):11.1%} {within:11.0%} "
            f"{target:6.0%} {flag}"
        )
    return 0 if ok or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
