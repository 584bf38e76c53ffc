"""Independent cross-check table of key GPU figures, compiled from the vendor publications.

Not generated from fixtures/gpus.yaml: each entry was written from the datasheet text quoted in its
comment. Tensor figures are DENSE: NVIDIA prints "with sparsity" figures (marked *), which are halved
here. Units: memory_gib as marketed, memory_bandwidth_gb_s in GB/s, TFLOPS, watts, NVLink GB/s per GPU
(both directions summed); None where the part lacks the format or the link.
"""

DATASHEET = {
    # NVIDIA T4 datasheet (2019): 16 GB GDDR6, "320+ GB/s", Mixed Precision (FP16/FP32) 65 TFLOPS,
    # no BF16/FP8, 70 W, no NVLink.
    "t4": {
        "memory_gib": 16,
        "memory_bandwidth_gb_s": 320,
        "bf16_tflops": None,
        "fp16_tflops": 65,
        "fp8_tflops": None,
        "nvlink_bandwidth_gb_s": None,
        "tdp_w": 70,
    },
    # NVIDIA V100 datasheet (2020-01, r5), SXM2 column: 32 GB HBM2, 900 GB/s, Tensor 125 TFLOPS,
    # NVLink 300 GB/s, 300 W; Volta has no BF16/FP8.
    "v100-sxm2-32gb": {
        "memory_gib": 32,
        "memory_bandwidth_gb_s": 900,
        "bf16_tflops": None,
        "fp16_tflops": 125,
        "fp8_tflops": None,
        "nvlink_bandwidth_gb_s": 300,
        "tdp_w": 300,
    },
    # NVIDIA/AWS A10G datasheet (2022-02-17) as tabulated: 24 GB, 600 GB/s, FP16 tensor 70 TFLOPS dense.
    # BF16 = FP16 rate on Ampere; 300 W is the G5 power limit (not printed in the PDF read here).
    "a10g": {
        "memory_gib": 24,
        "memory_bandwidth_gb_s": 600,
        "bf16_tflops": 70,
        "fp16_tflops": 70,
        "fp8_tflops": None,
        "nvlink_bandwidth_gb_s": None,
        "tdp_w": 300,
    },
    # NVIDIA L4 datasheet (2023): 24 GB, 300 GB/s, BF16/FP16 242* and FP8 485* TFLOPS (with sparsity), 72 W.
    "l4": {
        "memory_gib": 24,
        "memory_bandwidth_gb_s": 300,
        "bf16_tflops": 121,
        "fp16_tflops": 121,
        "fp8_tflops": 242.5,
        "nvlink_bandwidth_gb_s": None,
        "tdp_w": 72,
    },
    # NVIDIA L40S datasheet (2023): 48 GB GDDR6, 864 GB/s, BF16/FP16 362.05 | 733*, FP8 733 | 1,466*, 350 W.
    "l40s": {
        "memory_gib": 48,
        "memory_bandwidth_gb_s": 864,
        "bf16_tflops": 362.05,
        "fp16_tflops": 362.05,
        "fp8_tflops": 733,
        "nvlink_bandwidth_gb_s": None,
        "tdp_w": 350,
    },
    # NVIDIA A100 datasheet (r4, 2021-06), 80GB SXM column: 2,039 GB/s, BF16/FP16 312 | 624*,
    # NVLink 600 GB/s, 400 W; no FP8.
    "a100-sxm4-80gb": {
        "memory_gib": 80,
        "memory_bandwidth_gb_s": 2039,
        "bf16_tflops": 312,
        "fp16_tflops": 312,
        "fp8_tflops": None,
        "nvlink_bandwidth_gb_s": 600,
        "tdp_w": 400,
    },
    # NVIDIA A100 40GB PCIe product brief PB-10137-001_v03 (2020-09): 40 GB HBM2, 1,555 GB/s, 250 W,
    # BF16/FP16 312 TFLOPS dense, NVLink bridge 600 GB/s for two cards.
    "a100-pcie-40gb": {
        "memory_gib": 40,
        "memory_bandwidth_gb_s": 1555,
        "bf16_tflops": 312,
        "fp16_tflops": 312,
        "fp8_tflops": None,
        "nvlink_bandwidth_gb_s": 600,
        "tdp_w": 250,
    },
    # NVIDIA A800 datasheet (China, 2022), SXM 80GB: A100 80GB SXM figures, NVLink 400 GB/s.
    "a800-sxm4-80gb": {
        "memory_gib": 80,
        "memory_bandwidth_gb_s": 2039,
        "bf16_tflops": 312,
        "fp16_tflops": 312,
        "fp8_tflops": None,
        "nvlink_bandwidth_gb_s": 400,
        "tdp_w": 400,
    },
    # NVIDIA H100 product page, H100 SXM: 80 GB, 3.35 TB/s, BF16/FP16 1,979*, FP8 3,958* TFLOPS,
    # up to 700 W, NVLink 900 GB/s (dense = 989.4 / 1978.9 per the Hopper whitepaper).
    "h100-sxm": {
        "memory_gib": 80,
        "memory_bandwidth_gb_s": 3350,
        "bf16_tflops": 989.4,
        "fp16_tflops": 989.4,
        "fp8_tflops": 1978.9,
        "nvlink_bandwidth_gb_s": 900,
        "tdp_w": 700,
    },
    # NVIDIA H100 product page, H100 NVL (per card): 94 GB, 3.9 TB/s, BF16/FP16 1,671*, FP8 3,341*,
    # 350-400 W configurable, NVLink 600 GB/s.
    "h100-nvl": {
        "memory_gib": 94,
        "memory_bandwidth_gb_s": 3900,
        "bf16_tflops": 835.5,
        "fp16_tflops": 835.5,
        "fp8_tflops": 1670.5,
        "nvlink_bandwidth_gb_s": 600,
        "tdp_w": 400,
    },
    # NVIDIA H800 datasheet (China, 2023): H100 SXM tensor figures and 3.35 TB/s, NVLink 400 GB/s, 700 W.
    "h800-sxm": {
        "memory_gib": 80,
        "memory_bandwidth_gb_s": 3350,
        "bf16_tflops": 989.4,
        "fp16_tflops": 989.4,
        "fp8_tflops": 1978.9,
        "nvlink_bandwidth_gb_s": 400,
        "tdp_w": 700,
    },
    # NVIDIA H200 product page, H200 SXM: 141 GB HBM3e, 4.8 TB/s, BF16/FP16 1,979*, FP8 3,958*,
    # up to 700 W, NVLink 900 GB/s.
    "h200-sxm": {
        "memory_gib": 141,
        "memory_bandwidth_gb_s": 4800,
        "bf16_tflops": 989.4,
        "fp16_tflops": 989.4,
        "fp8_tflops": 1978.9,
        "nvlink_bandwidth_gb_s": 900,
        "tdp_w": 700,
    },
    # NVIDIA HGX page, HGX B200 per GPU (2025): 180 GB HBM3e, 7.7 TB/s, FP16/BF16 4.5 PF*, FP8 9 PF*,
    # up to 1,000 W, fifth-generation NVLink 1.8 TB/s.
    "b200": {
        "memory_gib": 180,
        "memory_bandwidth_gb_s": 7700,
        "bf16_tflops": 2250,
        "fp16_tflops": 2250,
        "fp8_tflops": 4500,
        "nvlink_bandwidth_gb_s": 1800,
        "tdp_w": 1000,
    },
    # NVIDIA Ada GPU Architecture whitepaper v2.1, Appendix A, GeForce RTX 4090: 24 GB GDDR6X, 1,008 GB/s,
    # FP16/BF16 with FP32 accumulate 165.2/330.4, FP8 with FP32 accumulate 330.3/660.6, 450 W, no NVLink.
    "rtx-4090": {
        "memory_gib": 24,
        "memory_bandwidth_gb_s": 1008,
        "bf16_tflops": 165.2,
        "fp16_tflops": 165.2,
        "fp8_tflops": 330.3,
        "nvlink_bandwidth_gb_s": None,
        "tdp_w": 450,
    },
    # AMD Instinct MI300X data sheet (2023-12): 192 GB HBM3, 5.3 TB/s, FP16/BF16 1,307.4 and FP8 2,614.9
    # TFLOPS (dense; sparsity listed separately), 750 W; Infinity Fabric rather than NVLink.
    "mi300x": {
        "memory_gib": 192,
        "memory_bandwidth_gb_s": 5300,
        "bf16_tflops": 1307.4,
        "fp16_tflops": 1307.4,
        "fp8_tflops": 2614.9,
        "nvlink_bandwidth_gb_s": None,
        "tdp_w": 750,
    },
}
