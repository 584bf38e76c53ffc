"""Model presets: every architecture reproduces its official parameter count, and the file is sound."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from sizing.presets import DEFAULT_PATH, load_presets
from sizing.specs import ModelArch, generic_arch

PRESETS = load_presets()
RAW = {r["slug"]: r for r in yaml.safe_load(Path(DEFAULT_PATH).read_text(encoding="utf-8"))}
REQUIRED = [
    "llama-2-7b", "llama-2-13b", "llama-2-70b", "llama-3-8b", "llama-3-70b", "llama-3.1-8b",
    "llama-3.1-70b", "llama-3.1-405b", "llama-3.2-1b", "llama-3.2-3b", "mistral-7b",
    "mixtral-8x7b", "mixtral-8x22b", "qwen2.5-0.5b", "qwen2.5-1.5b", "qwen2.5-7b", "qwen2.5-14b",
    "qwen2.5-32b", "qwen2.5-72b", "qwen3-8b", "qwen3-32b", "qwen3-30b-a3b", "gemma-2-9b",
    "gemma-2-27b", "deepseek-v3", "gpt2", "gpt2-xl", "bert-base", "bert-large", "t5-base",
    "t5-large", "resnet-50", "vit-l-16", "sdxl-unet",
]  # fmt: skip
TRANSFORMERS = [s for s, a in PRESETS.items() if a.is_transformer]


ADDED = [
    "llama-4-scout", "qwen3-0.6b", "qwen3-14b", "qwen3-235b-a22b", "deepseek-v2", "deepseek-v2-lite",
    "gemma-2-2b", "gemma-3-1b", "gemma-3-27b", "phi-3-mini", "phi-4", "mistral-small-24b",
    "mistral-large-2", "olmo-2-7b", "smollm2-135m", "falcon-7b", "tinyllama-1.1b",
]  # fmt: skip


def test_at_least_sixty_presets_including_the_common_ones():
    assert len(PRESETS) >= 60
    assert set(REQUIRED) <= set(PRESETS)
    assert set(ADDED) <= set(PRESETS)


@pytest.mark.parametrize("slug", TRANSFORMERS)
def test_parameter_count_from_architecture_matches_official(slug):
    arch = PRESETS[slug]
    computed = arch.counts.computed_total / 1e9
    assert computed == pytest.approx(arch.params_b, rel=0.02), (
        f"{slug}: {computed:.3f}B vs {arch.params_b}B"
    )


@pytest.mark.parametrize("slug", [s for s, r in RAW.items() if "active_params_b" in r])
def test_moe_active_parameters_match_published(slug):
    arch = PRESETS[slug]
    assert arch.is_moe
    assert arch.active_params / 1e9 == pytest.approx(RAW[slug]["active_params_b"], rel=0.03)
    assert arch.active_params < arch.params / 3


@pytest.mark.parametrize("slug", list(PRESETS))
def test_every_preset_cites_its_source(slug):
    arch = PRESETS[slug]
    assert arch.source and arch.source_url.startswith("https://")
    assert arch.display_name


@pytest.mark.parametrize("slug", [s for s, a in PRESETS.items() if a.kind in ("cnn", "unet")])
def test_non_transformers_carry_a_per_sample_activation_figure(slug):
    arch = PRESETS[slug]
    assert arch.activation_gib_per_sample and arch.activation_gib_per_sample > 0
    assert arch.reference_input


def test_presets_are_cached_and_returned_as_fresh_dicts():
    a, b = load_presets(), load_presets()
    assert a == b and a is not b
    assert a["llama-3-8b"] is b["llama-3-8b"]


def test_unknown_keys_and_duplicates_are_rejected(tmp_path):
    bad = tmp_path / "models.yaml"
    bad.write_text("- {slug: x, kind: decoder, params_b: 1, layerz: 2, source: s}\n")
    with pytest.raises(ValueError, match="unknown keys"):
        load_presets(bad)
    dup = tmp_path / "dup.yaml"
    dup.write_text(
        "- {slug: x, kind: decoder, params_b: 1}\n- {slug: x, kind: decoder, params_b: 1}\n"
    )
    with pytest.raises(ValueError, match="duplicate"):
        load_presets(dup)


@pytest.mark.parametrize("params_b", [0.1, 1, 7, 13, 70, 405])
def test_generic_architecture_reproduces_the_requested_size(params_b):
    arch = generic_arch(params_b)
    assert isinstance(arch, ModelArch) and arch.is_transformer
    assert arch.counts.computed_total / 1e9 == pytest.approx(params_b, rel=0.05)
