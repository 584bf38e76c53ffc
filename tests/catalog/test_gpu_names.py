"""The names a GPU goes by: slug in any case, or an alias folded as the ingest service folds
providers' names; ambiguous when a key names two GPUs."""

from __future__ import annotations

from catalog.gpu_names import gpu_name_keys, gpu_slugs_named
from catalog.suggest import COUNTRY_OTHER_CODES, did_you_mean

SLUGS = ["t4", "rtx-4090", "a100-sxm4-40gb", "a100-pcie-40gb"]
ALIASES = [("t4", "t4"), ("tesla t4", "t4"), ("rtx 4090", "rtx-4090"), ("4090", "rtx-4090"),
           ("a100 40gb", "a100-sxm4-40gb")]  # fmt: skip
KEYS = gpu_name_keys(SLUGS, ALIASES)


def test_slugs_in_any_case_and_aliases_name_one_gpu():
    for name, slug in [("T4", "t4"), ("Tesla T4", "t4"), ("NVIDIA Tesla T4", "t4"),
                       ("RTX 4090", "rtx-4090"), ("4090", "rtx-4090"), ("RTX-4090", "rtx-4090"),
                       ("A100-PCIE-40GB", "a100-pcie-40gb")]:  # fmt: skip
        assert gpu_slugs_named(name, SLUGS, KEYS) == [slug], name


def test_an_unknown_name_names_none_and_a_shared_key_names_all():
    assert gpu_slugs_named("a100", SLUGS, KEYS) == []
    keys = gpu_name_keys([*SLUGS, "t4-x"], [*ALIASES, ("t4 x", "t4")])
    assert gpu_slugs_named("T4 X", [*SLUGS, "t4-x"], keys) == ["t4", "t4-x"]
    assert gpu_slugs_named("T4-X", [*SLUGS, "t4-x"], keys) == ["t4-x"]  # the slug itself


def test_uk_suggests_gb():
    assert did_you_mean("UK", ["US", "GB", "KR"], other_names=COUNTRY_OTHER_CODES).startswith(
        "did you mean GB"
    )
    # The providers' other names stay the default.
    assert did_you_mean("aliyun", ["alibaba", "aws"]) == "did you mean alibaba?"
