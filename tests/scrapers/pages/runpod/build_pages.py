"""Rebuild the recorded RunPod GraphQL answers (run from the repo root; see README.md).

Built, not downloaded (no internet where it was made): the GraphQL response shape of RunPod's
``gpuTypes`` query, GPU ids and display names from docs.runpod.io/references/gpu-types, on-demand
prices from fixtures/providers/runpod.yaml. Spot prices, vCPU/RAM minimums and the new GPU types
are constructed (see README.md).
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent

# id, displayName, memoryInGb, secureCloud, communityCloud, securePrice, communityPrice,
# secureSpotPrice, communitySpotPrice, maxSecure, maxCommunity, minBid, minVcpu, minMemory
GPU_TYPES = [
    ("NVIDIA H100 80GB HBM3", "H100 SXM", 80, True, True, 3.99, 2.69, 2.49, 1.75, 8, 8, 1.75, 20, 125),
    ("NVIDIA H200", "H200 SXM", 141, True, False, 4.59, None, 3.59, None, 8, 0, 3.59, 24, 276),
    ("NVIDIA B200", "B200", 180, True, True, 6.79, 5.98, 4.99, None, 8, 8, 4.99, 28, 283),
    ("NVIDIA H100 PCIe", "H100 PCIe", 80, True, True, 2.89, 1.99, 1.65, 1.25, 8, 8, 1.25, 16, 80),
    ("NVIDIA H100 NVL", "H100 NVL", 94, True, True, 3.19, 2.59, 2.29, 1.69, 8, 8, 1.69, 16, 94),
    ("NVIDIA A100 80GB PCIe", "A100 PCIe", 80, True, True, 1.79, 1.19, 1.09, 0.79, 8, 8, 0.79, 8, 80),
    ("NVIDIA A100-SXM4-80GB", "A100 SXM", 80, True, True, 1.79, 1.39, 1.19, 0.95, 8, 8, 0.95, 16, 80),
    ("NVIDIA A100-SXM4-40GB", "A100 SXM 40GB", 40, False, True, 0, 1.0, 0, 0.6, 0, 8, 0.6, 8, 40),
    ("NVIDIA A40", "A40", 48, True, False, 0.44, 0, 0.2, 0, 8, 0, 0.2, 9, 48),
    ("NVIDIA GeForce RTX 4090", "RTX 4090", 24, True, True, 0.69, 0.34, 0.35, 0.2, 8, 4, 0.2, 6, 41),
    ("AMD Instinct MI300X OAM", "MI300X", 192, True, False, 2.49, None, 1.49, None, 8, 0, 1.49, 24, 283),
    ("NVIDIA L40S", "L40S", 48, True, True, 0.86, 0.79, 0.53, 0.4, 8, 8, 0.4, 16, 62),
    ("Tesla V100-SXM2-16GB", "V100 SXM2", 16, False, False, 0.24, 0.17, None, None, 0, 0, None, 4, 30),
    ("unknown", "unknown", 0, False, False, None, None, None, None, 0, 0, None, None, None),
]  # fmt: skip


def gpu_types() -> dict:
    rows = []
    for gpu_id, name, mem, secure, community, sp, cp, ssp, csp, ms, mc, bid, vcpu, ram in GPU_TYPES:
        rows.append(
            {
                "id": gpu_id,
                "displayName": name,
                "memoryInGb": mem,
                "secureCloud": secure,
                "communityCloud": community,
                "securePrice": sp,
                "communityPrice": cp,
                "secureSpotPrice": ssp,
                "communitySpotPrice": csp,
                "maxGpuCountSecureCloud": ms,
                "maxGpuCountCommunityCloud": mc,
                "lowestPrice": None
                if bid is None
                else {
                    "minimumBidPrice": bid,
                    "uninterruptablePrice": cp or sp,
                    "minVcpu": vcpu,
                    "minMemory": ram,
                },
            }
        )
    return {"data": {"gpuTypes": rows}}


if __name__ == "__main__":
    (HERE / "gpu-types.json").write_text(json.dumps(gpu_types(), indent=2) + "\n", encoding="utf-8")
    error = {
        "errors": [
            {
                "message": 'Cannot query field "securePrice2" on type "GpuType". Did you mean "securePrice"?',
                "locations": [{"line": 1, "column": 70}],
                "extensions": {"code": "GRAPHQL_VALIDATION_FAILED"},
            }
        ]
    }
    (HERE / "graphql-error.json").write_text(json.dumps(error, indent=2) + "\n", encoding="utf-8")
