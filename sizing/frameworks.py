"""What each training or serving framework does to memory by default, with where it is written.

Only behaviour the estimator models is listed: how the loss head is computed (`loss`), whether
saved activations go to host memory, whether the optimizer step runs inside backward (so
only one parameter's gradient is alive at a time), whether QLoRA keeps the parameters it
does not quantise in fp32, and whether the training step runs under torch.compile. A workload
field given explicitly wins.

LoRA dropout (`lora_dropout`): PEFT's `LoraConfig` defaults to 0 (huggingface/peft
src/peft/tuners/lora/config.py @00a4d080; nn.Identity, nothing saved),
as do torchtune's `LoRALinear` (torchtune/modules/peft/lora.py @031d89b8, `dropout=0.0`; its
recipe configs set `lora_dropout: 0.0`, e.g. recipes/configs/llama2/7B_qlora_single_device.yaml
@0031bfb0) and LLaMA-Factory (src/llamafactory/hparams/finetuning_args.py @00577a85,
`lora_dropout` 0.0); litgpt's `finetune/lora.py` defaults to 0.05 (@01fe959c). Frameworks
built on PEFT whose own default was not checked (axolotl, unsloth, DeepSpeed) take PEFT's 0.

torch.compile is off by default in every framework listed: HF TrainingArguments
`torch_compile=False`; torchtune's recipe configs `compile: False` ("True increases speed +
decreases memory"; its README's published tables were run with it on); torchtitan's
torchtitan/config/job_config.py `Compile.enable = False` (its benchmark tables say when they
turned it on). Calibration rows
set `compile` from what their source says.

QLoRA under litgpt (Lightning Fabric's `BitsandbytesPrecision`, which litgpt's
`finetune/lora.py --quantize bnb.nf4` sets up: Lightning-AI/pytorch-lightning
src/lightning/fabric/plugins/precision/bitsandbytes.py @003e3070, the same in the Lightning 2.1
and 2.3 builds the litgpt tables ran): `_convert_layers` and the init-time class replacement
turn every `nn.Linear` into a 4-bit one, the output head included (litgpt passes no
`ignore_modules`), whereas transformers keeps the head in 16 bits; `_Linear4bit._quantize_weight`
quantises `weight.contiguous().to(device="cuda", dtype=torch.half)`, so the quant state's dtype
is fp16 and bitsandbytes' `MatMul4Bit` (`dequantize_4bit(B, quant_state).to(A.dtype)`, 0.41.0
to 0.43.x bitsandbytes/autograd/_functions.py) makes an fp16 copy and then a bf16 copy of the
matrix at every use. litgpt's fit loop (litgpt/finetune/lora.py @5895df10, lit-gpt @8641822)
runs `logits = model(input_ids, lm_head_chunk_size=128)` while the previous step's `logits`
(and, in the 2023 loop, `loss`) still reference that step's graph; backward frees the tensors a
node saved with `save_for_backward`, but bitsandbytes before 0.43.2 kept each 4-bit matmul's
input as `ctx.tensors = (A, B)`, a plain attribute that lives as long as the node, so the
previous step's 4-bit matmul inputs stay on the GPU through the next forward
(bitsandbytes-foundation/bitsandbytes #1270, 9e753741, 2024-07: "the bug that caused a lot of
memory issues with QLoRA"). litgpt still names 0.42.0 as the version it supports
(`finetune/lora.py` @26857050 warns "LitGPT only supports bitsandbytes v0.42.0" on any other),
refuses mixed precision with `--quantize`, and its single-device `finetune/lora.py` has no
activation checkpointing: a litgpt QLoRA workload defaults to `mixed_precision` false and
`gradient_checkpointing` none. Its `--quantize bnb.nf4` has no double quantisation (`bnb.nf4-dq`
is the opt-in: `_NF4Linear` sets `compress_statistics=False`, `_NF4DQLinear` True).

Double quantisation (`double_quant`, QLoRA only): transformers' `BitsAndBytesConfig` defaults
`bnb_4bit_use_double_quant` to False (src/transformers/utils/quantization_config.py), so `hf`
and the frameworks built on it whose own default was not checked (axolotl, unsloth, DeepSpeed)
default to False; LLaMA-Factory sets `double_quantization=True` (src/llamafactory/hparams/
model_args.py @cc22c045); torchtune's torchao NF4 always quantises its scalers.

GPU count of quantised training (`quantised_max_gpus`): litgpt trains a bitsandbytes-quantised
base (`--quantize bnb.*`, i.e. QLoRA) on one GPU only: `setup` in litgpt/finetune/lora.py (and
lora_legacy.py, adapter.py, adapter_v2.py) raises NotImplementedError("Quantization is currently
not supported for multi-GPU training. Please set devices=1 and num_nodes=1 ...") whenever
`devices * num_nodes > 1` and `quantize` is set (Lightning-AI/litgpt @26857050, 2026-06-29).
The planner offers such a workload no plan on more GPUs (rejection
`framework_gpu_limit`). The others run QLoRA across GPUs: transformers + PEFT under FSDP
(huggingface/peft docs/source/accelerate/fsdp.md @018ca9d6, "Use PEFT QLoRA and FSDP ...": a
70B model on 2 x 24 GB GPUs), torchtune's `lora_finetune_distributed` (recipes/configs/llama3_1/
405B_qlora.yaml @31d723c2, "multi-device QLoRA", 8 GPUs); unsloth's own code has no such
check (unslothai/unsloth @015bdef0), and none of the rest publishes one.

For serving, `int4_kernel` names the weight-only 4-bit matmul the engine decodes with: the
kernels stream weights at very different fractions of the memory bandwidth (sizing/compute.py
DECODE_INT4_KERNEL_EFFICIENCY). An engine without one listed (vLLM and SGLang pick among several
kernels by GPU and checkpoint format) gets the figure fitted over every 4-bit decode row.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Framework:
    """Defaults a framework applies when the workload does not say."""

    loss: str  # standard: fp32 logits + log-softmax + fp32 grad; chunked; fused (never full logits)
    activation_offloading: bool = False
    optimizer_in_backward: bool = False
    # QLoRA: embeddings, head and norms (everything not stored in 4 bits) held in fp32.
    qlora_fp32_unquantised: bool = False
    compile: bool = False  # torch.compile on the training step
    int4_kernel: str = ""  # serving: the weight-only 4-bit decode kernel (sizing/compute.py)
    lora_dropout: float = 0.0  # LoRA: dropout on each adapter's input (sizing/memory.py)
    lora_fused_qkv: bool = False  # LoRA: q, k and v adapters share one input and one dropout
    # QLoRA through Lightning Fabric's BitsandbytesPrecision (litgpt's --quantize bnb.*):
    # every nn.Linear, the output head included, is stored in 4 bits; each weight is quantised
    # from an fp16 copy, so dequantising it gives fp16, which the bf16 matmul then casts (two
    # copies of the matrix alive at once); and the training loop's `logits` still holds the
    # previous step's autograd graph while the next forward runs (sizing/memory.py).
    # QLoRA defaults: mixed precision (autocast over bf16 compute) and the checkpointing a
    # QLoRA run gets when the workload does not say.
    qlora_mixed_precision: bool = True
    qlora_checkpointing: str = "full"
    # QLoRA: block constants stored in 8 bits with an fp32 constant per 256 blocks (double
    # quantisation, 0.516 B per weight) rather than one fp32 absmax per 64 weights (0.5625 B).
    qlora_double_quant: bool = False
    qlora_quantises_head: bool = False
    qlora_dequant_via_fp16: bool = False
    keeps_previous_step_graph: bool = False
    # Training with a quantised base (QLoRA) on more GPUs than this (all nodes together) is
    # refused by the framework itself; None: no such limit.
    quantised_max_gpus: int | None = None
    source: str = ""


FRAMEWORKS: dict[str, Framework] = {
    "hf": Framework(
        "standard",
        qlora_fp32_unquantised=True,
        source="transformers LlamaForCausalLM.forward: logits.float() before CrossEntropyLoss; "
        "BitsAndBytesConfig(bnb_4bit_use_double_quant=False) by default "
        "(src/transformers/utils/quantization_config.py); "
        "huggingface/peft src/peft/utils/other.py @012c0d5a prepare_model_for_kbit_training "
        "casts every fp16/bf16 parameter of a k-bit model to fp32",
    ),
    "torchtune": Framework(
        "chunked",
        qlora_double_quant=True,
        source="pytorch/torchtune README 'Optimization flags' and recipes/configs/*: "
        "CEWithChunkedOutputLoss (8 chunks, fp32 upcast per chunk); QLoRA bases are torchao "
        "NF4Tensors, whose per-64 scalers are themselves quantised to int8 in blocks of 256 "
        "(pytorch/ao torchao/dtypes/nf4tensor.py @0598012907d6)",
    ),
    "litgpt": Framework(
        "chunked",
        lora_dropout=0.05,
        lora_fused_qkv=True,
        qlora_mixed_precision=False,
        qlora_checkpointing="none",
        qlora_quantises_head=True,
        qlora_dequant_via_fp16=True,
        keeps_previous_step_graph=True,
        quantised_max_gpus=1,
        source="Lightning-AI/litgpt litgpt/utils.py chunked_cross_entropy (chunk_size 128); "
        "litgpt/finetune/lora.py @01fe959c setup(lora_dropout=0.05); litgpt/lora.py @01e39f50 "
        "LoRAQKVLinear: one dropout on the fused q/k/v input; QLoRA (finetune/lora.py "
        "@5895df10 --quantize bnb.*): Lightning-AI/pytorch-lightning "
        "src/lightning/fabric/plugins/precision/bitsandbytes.py @003e3070 replaces every "
        "nn.Linear (lm_head too, no ignore_modules) and _Linear4bit._quantize_weight quantises "
        "weight.to(torch.half); the fit loop rebinds `logits = model(...)` only after the next "
        "forward has run; --quantize refuses mixed precision ('Quantization and mixed precision "
        "is not supported') and single-device lora.py has no activation checkpointing "
        "(litgpt/finetune/lora.py @26857050); setup() raises NotImplementedError 'Quantization "
        "is currently not supported for multi-GPU training' when devices * num_nodes > 1 and "
        "--quantize is set (litgpt/finetune/lora.py @26857050, 2026-06-29)",
    ),
    "axolotl": Framework("standard", source="axolotl: HF Trainer unless a Liger plugin is set"),
    "unsloth": Framework(
        "fused",
        source="unslothai/unsloth README: fused cross-entropy, logits never materialised",
    ),
    "llama_factory": Framework(
        "standard",
        qlora_double_quant=True,
        source="LLaMA-Factory: HF Trainer underneath; hiyouga/LLaMA-Factory "
        "src/llamafactory/hparams/model_args.py @cc22c045 double_quantization=True",
    ),
    "deepspeed": Framework("standard", source="DeepSpeed runs the HF/PyTorch model's own loss"),
    "megatron": Framework(
        "chunked",
        source="Megatron-LM vocab_parallel_cross_entropy: fp32 upcast of each TP shard in place",
    ),
    "torchtitan": Framework(
        "standard",
        source="pytorch/torchtitan torchtitan/components/loss.py: pred.float() then cross_entropy",
    ),
    "vllm": Framework("standard", source="serving: no loss"),
    "sglang": Framework("standard", source="serving: no loss"),
    # Batch-1 decode engines (serving: no loss).
    "gpt_fast": Framework(
        "standard",
        int4_kernel="tinygemm",
        source="pytorch-labs/gpt-fast quantize.py WeightOnlyInt4Linear: "
        "torch.ops.aten._weight_int4pack_mm (tinygemm)",
    ),
    "torchao": Framework(
        "standard",
        int4_kernel="tinygemm",
        source="pytorch/ao torchao/quantization/README.md @03d01adc: int4 weight-only runs "
        "tinygemm (aten._weight_int4pack_mm), gpt-fast's kernel",
    ),
    "exllamav2": Framework(
        "standard",
        int4_kernel="exllamav2",
        source="turboderp/exllamav2: its own GPTQ/EXL2 CUDA matmul kernels",
    ),
    "mlc_llm": Framework(
        "standard",
        int4_kernel="mlc",
        source="mlc-ai/mlc-llm: TVM-compiled q4f16_1 kernels (4-bit, group 32)",
    ),
    "llama_cpp": Framework(
        "standard",
        int4_kernel="ggml",
        source="ggerganov/llama.cpp: ggml CUDA kernels for GGUF Q4_0 blocks",
    ),
}


def quantised_gpu_limit(framework: str, method: str | None, task: str) -> int | None:
    """The most GPUs (all nodes together) ``framework`` trains a quantised base on, for a
    QLoRA fine-tune; None when it sets no limit or the job is not quantised training."""
    if task == "inference" or method != "qlora":
        return None
    entry = FRAMEWORKS.get(framework)
    return entry.quantised_max_gpus if entry else None
