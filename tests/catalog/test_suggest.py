""" "Did you mean" suggestions (catalog.suggest, pure Python): shared parts before spelling."""

from __future__ import annotations

import pytest

from catalog.suggest import close_names, did_you_mean

GPUS = [
    "a10", "a100-pcie-40gb", "a100-pcie-80gb", "a100-sxm4-40gb", "a100-sxm4-80gb", "a10g",
    "h100-nvl", "h100-pcie", "h100-sxm", "h200-sxm", "l4", "l40", "l40s", "p100", "p4",
    "rtx-3090", "rtx-4090", "rtx-5090", "t4", "v100-pcie-32gb", "v100-sxm2-16gb",
]  # fmt: skip
PROVIDERS = ["alibaba", "aws", "autodl", "azure", "coreweave", "gcp", "huawei", "lambda",
             "runpod", "tencent", "vastai"]  # fmt: skip


@pytest.mark.parametrize(
    ("value", "first"),
    [
        ("a100-40gb", {"a100-pcie-40gb", "a100-sxm4-40gb"}),  # the memory size counts
        ("A100_40G", {"a100-pcie-40gb", "a100-sxm4-40gb"}),
        ("h100", {"h100-nvl", "h100-pcie", "h100-sxm"}),  # the family before the spelling
        ("h100-80gb", {"h100-nvl", "h100-pcie", "h100-sxm"}),  # the family before the size
        ("a100", {"a100-pcie-40gb", "a100-pcie-80gb", "a100-sxm4-40gb", "a100-sxm4-80gb"}),
        ("rtx4090", {"rtx-4090"}),
        ("l40", {"l40"}),
    ],
)
def test_gpus_sharing_the_family_and_size_come_first(value, first):
    close = close_names(value, GPUS)
    assert close[0] in first, close
    assert set(close) <= first or len(first) < 3, close


def test_h100_does_not_suggest_p100_first():
    assert "p100" not in close_names("h100", GPUS)
    assert close_names("a100-40gb", GPUS)[:2] == ["a100-pcie-40gb", "a100-sxm4-40gb"]


@pytest.mark.parametrize(
    ("value", "slug"),
    [
        ("aliyun", "alibaba"),
        ("Alibaba-Cloud", "alibaba"),
        ("qcloud", "tencent"),
        ("huaweicloud", "huawei"),
        ("google", "gcp"),
        ("microsoft", "azure"),
        ("amazon", "aws"),
        ("awz", "aws"),
    ],
)
def test_providers_other_names_lead_to_them(value, slug):
    assert close_names(value, PROVIDERS)[0] == slug


def test_other_names_only_suggest_known_names():
    assert close_names("aliyun", ["aws", "gcp"]) == []


def test_nothing_close_is_no_suggestion():
    assert did_you_mean("xyz", GPUS) == ""
    assert did_you_mean("aliyun", PROVIDERS) == "did you mean alibaba?"


def test_a_family_finds_its_names():
    assert close_names("llama", ["llama-3-8b", "llama-2-7b", "mistral-7b"]) == [
        "llama-2-7b",
        "llama-3-8b",
    ]
