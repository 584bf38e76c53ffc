"""Leave-one-source-out in bench/sizing_accuracy.py: a held-out source never reaches the fit."""

from __future__ import annotations

import csv

import pytest

from bench import sizing_accuracy as sa
from sizing import compute
from sizing.presets import load_presets


def _rows() -> list[dict]:
    with open(sa.CSV_PATH, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def test_a_held_out_source_fits_as_if_its_rows_were_not_there():
    """Fitting without llm-foundry gives the same constants as fitting on a table that never
    had its rows, and differs from the fit on every source (those rows carry weight)."""
    presets, gpus = load_presets(), sa.load_gpus()
    rows = _rows()
    facts = [sa.facts(r, presets, gpus) for r in rows]
    without = [(r, f) for r, f in zip(rows, facts, strict=True) if r["source_key"] != "llm-foundry"]
    with sa.shipped_constants():
        held_out = sa.fit_constants(rows, facts, "llm-foundry", presets, gpus)
        absent = sa.fit_constants(
            [r for r, _ in without], [f for _, f in without], None, presets, gpus
        )
        everyone = sa.fit_constants(rows, facts, None, presets, gpus)
    assert held_out == absent
    assert held_out["HFU_REFERENCE"] != everyone["HFU_REFERENCE"]


def test_the_shipped_constants_are_back_after_leave_one_source_out():
    presets, gpus = load_presets(), sa.load_gpus()
    rows = [r for r in _rows() if r["kind"] == "decode"]
    before = {c.label: c.get() for c in sa.FITTED}
    pcie = compute.ALLREDUCE_LATENCY_S["pcie"]
    errors, fits = sa.leave_one_source_out(rows, presets, gpus, [sa.measured(r) for r in rows])
    assert {c.label: c.get() for c in sa.FITTED} == before
    assert compute.ALLREDUCE_LATENCY_S["pcie"] == pcie
    # Held out, llm-perf-bench takes with it the only MLC LLM and llama.cpp rows: their kernels
    # get no figure (0: the 4-bit one); ExLlamaV2's kernel is then fitted on its own README.
    perf = fits["llm-perf-bench"]
    assert perf["DECODE_INT4_KERNEL_EFFICIENCY[mlc]"] == 0.0
    assert perf["DECODE_INT4_KERNEL_EFFICIENCY[ggml]"] == 0.0
    assert perf["DECODE_INT4_KERNEL_EFFICIENCY[exllamav2]"] > 0.0
    # gpt-fast's int4 kernel is supported by torchao's rows, so it keeps a figure held out.
    assert fits["gpt-fast"]["DECODE_INT4_KERNEL_EFFICIENCY[tinygemm]"] > 0.0
    assert len(errors) == len(rows)


def test_the_shipped_constants_are_the_all_source_fit():
    """sizing/compute.py ships what the fitting method gives on every source (rounded to within
    1%), so the constants cannot drift from the calibration that LOSO judges."""
    presets, gpus = load_presets(), sa.load_gpus()
    rows = _rows()
    facts = [sa.facts(r, presets, gpus) for r in rows]
    with sa.shipped_constants():
        shipped = {c.label: c.get() for c in sa.FITTED}
        everyone = sa.fit_constants(rows, facts, None, presets, gpus)
    off = {
        label: (shipped[label], fit)
        for label, fit in everyone.items()
        if abs(shipped[label] - fit) > 0.01 * abs(fit) + 1e-12
    }
    assert not off, f"shipped vs all-source fit: {off}"
    # the entries tied to a fitted one follow it
    assert (
        compute.DECODE_BANDWIDTH_EFFICIENCY["fp16"] == compute.DECODE_BANDWIDTH_EFFICIENCY["bf16"]
    )
    assert compute.ALLREDUCE_LATENCY_S["pcie"] == 2 * compute.ALLREDUCE_LATENCY_S["nvlink"]


def test_the_4bit_figure_is_fitted_as_if_no_engine_were_named():
    """DECODE_BANDWIDTH_EFFICIENCY[int4] is for engines without a kernel figure: fitting with
    every engine named gives the same value as fitting the same rows with no engine named."""
    presets, gpus = load_presets(), sa.load_gpus()
    rows = [r for r in _rows() if r["kind"] == "decode"]
    anonymous = [{**r, "framework": ""} for r in rows]
    with sa.shipped_constants():
        named = sa.fit_constants(
            rows, [sa.facts(r, presets, gpus) for r in rows], None, presets, gpus
        )
        blind = sa.fit_constants(
            anonymous, [sa.facts(r, presets, gpus) for r in anonymous], None, presets, gpus
        )
    label = "DECODE_BANDWIDTH_EFFICIENCY[int4]"
    assert named[label] == pytest.approx(blind[label], rel=1e-3)
    kernels = [v for k, v in named.items() if k.startswith("DECODE_INT4_KERNEL_EFFICIENCY")]
    assert min(kernels) < named[label] < max(kernels)
    assert all(v == 0.0 for k, v in blind.items() if k.startswith("DECODE_INT4_KERNEL"))


def test_a_constant_is_not_fitted_on_a_single_row():
    """With gpt-fast held out, the tensor-parallel all-reduce latency is fitted on the other
    sources' TP rows: one such row is not enough (the latency takes its bound, 0), two are."""
    presets, gpus = load_presets(), sa.load_gpus()
    decode = [r for r in _rows() if r["kind"] == "decode"]
    gpt_fast = [r for r in decode if r["source_key"] == "gpt-fast"]
    mlc_tp = [r for r in decode if r["framework"] == "mlc_llm" and int(r["gpu_count"]) > 1]
    label = "ALLREDUCE_LATENCY_S[nvlink]"
    with sa.shipped_constants():
        fits = {}
        for k in (1, 2):
            rows = gpt_fast + mlc_tp[:k]
            facts = [sa.facts(r, presets, gpus) for r in rows]
            fits[k] = sa.fit_constants(rows, facts, "gpt-fast", presets, gpus)[label]
    assert fits[1] == 0.0
    assert fits[2] > 0.0
