"""Estimator speed: calls per second of sizing.estimator.estimate, with and without the working.

Run from the repository root (pure Python: no database):

    .venv/bin/python bench/estimator.py             # each workload for about a second
    .venv/bin/python bench/estimator.py --seconds 3

The planner calls estimate once per distinct machine shape (GPU, count, links) and node count,
so calls/s bounds how fast a never-seen recommendation on a catalog with many shapes can be.

Memory figures, the sharding choice and min_gpus are remembered per workload (less its token
count), so repeated calls measure the time model; the "new workload" column parses a workload
with a sequence (serving: context) length never used before on every call, so nothing is
remembered and each call also searches min_gpus.
"""

from __future__ import annotations

import argparse
import time

from common import ROOT, print_machine  # noqa: F401 - ROOT puts the repository on sys.path

from sizing.estimator import Topology, estimate, parse_workload
from sizing.presets import load_presets

GPUS = {
    "a100-sxm4-80gb": dict(memory_gib=80, memory_bandwidth_gb_s=2039, fp32_tflops=19.5,
                           tf32_tflops=156, bf16_tflops=312, fp16_tflops=312, int8_tops=624,
                           architecture="Ampere", vendor="nvidia", nvlink_bandwidth_gb_s=600),
    "h100-sxm": dict(memory_gib=80, memory_bandwidth_gb_s=3350, fp32_tflops=67, tf32_tflops=494.7,
                     bf16_tflops=989.4, fp16_tflops=989.4, fp8_tflops=1978.9, int8_tops=1978.9,
                     architecture="Hopper", vendor="nvidia", nvlink_bandwidth_gb_s=900),
    "t4": dict(memory_gib=16, memory_bandwidth_gb_s=320, fp32_tflops=8.1, fp16_tflops=65,
               int8_tops=130, architecture="Turing", vendor="nvidia"),
}  # fmt: skip
CASES = [
    ("llama-3-8b LoRA, 1 x A100 80GB", {"model": "llama-3-8b", "method": "lora",
     "gradient_checkpointing": "full", "tokens": 2e8}, "a100-sxm4-80gb", 1, None),
    ("llama-2-7b QLoRA, 1 x T4", {"model": "llama-2-7b", "method": "qlora"}, "t4", 1, None),
    ("llama-3-70b full, 64 x H100 (8 nodes)", {"model": "llama-3-70b", "method": "full",
     "gradient_checkpointing": "full", "tokens": 1e9}, "h100-sxm", 64,
     Topology(gpu_count=64, gpus_per_node=8, intra_node="nvswitch", intra_bandwidth_gb_s=900,
              inter_node_rdma=True, inter_node_gbps=3200)),
    ("llama-3-8b inference, 1 x H100", {"model": "llama-3-8b", "task": "inference",
     "context_len": 8192, "concurrency": 16}, "h100-sxm", 1, None),
    ("mixtral-8x7b full fp8, 16 x H100", {"model": "mixtral-8x7b", "method": "full",
     "precision": "fp8", "tokens": 5e9}, "h100-sxm", 16, None),
]  # fmt: skip


def fresh_shape(data: dict, n: int) -> dict:
    """The workload with a length no earlier call used (n < 60,000)."""
    if data.get("task") == "inference":
        return {**data, "context_len": 1024 + n}
    return {**data, "seq_len": 256 + n}


def rate(call, seconds: float) -> float:
    calls, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        for _ in range(20):
            call()
        calls += 20
    return calls / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="per case and mode")
    args = parser.parse_args()
    from sizing.specs import GPUSpec

    print_machine("Estimator: sizing.estimator.estimate calls per second")
    presets = load_presets()
    print(f"{'workload':<40} {'explain=True':>13} {'explain=False':>14} {'new workload':>13}")
    for label, data, gpu_slug, count, topology in CASES:
        workload = parse_workload(data, presets)
        gpu = GPUSpec(slug=gpu_slug, **GPUS[gpu_slug])
        figures = []
        for explain in (True, False):
            figures.append(
                rate(
                    lambda w=workload, g=gpu, n=count, t=topology, e=explain: estimate(
                        w, gpu=g, gpu_count=n, topology=t, explain=e
                    ),
                    args.seconds,
                )
            )
        fresh = iter(range(1, 10**9))
        figures.append(
            rate(
                lambda d=data, g=gpu, n=count, t=topology, f=fresh: estimate(
                    parse_workload(fresh_shape(d, next(f)), presets),
                    gpu=g, gpu_count=n, topology=t, explain=False,
                ),
                args.seconds,
            )
        )  # fmt: skip
        print(f"{label:<40} {figures[0]:>11,.0f}/s {figures[1]:>12,.0f}/s {figures[2]:>11,.0f}/s")


if __name__ == "__main__":
    main()
