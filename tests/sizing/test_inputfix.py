"""A new user's review: KV heads replicated past TP, contexts past the model's limit, impossible
config.json combinations, tokens 0, unknown countries and the catalog's own GPU aliases; bad
input is a 400 naming the field, in English and Chinese where the messages are translated."""

from __future__ import annotations

import pytest

from catalog.models import GPUAlias
from sizing.api.serializers import ConstraintsSerializer
from sizing.memory import inference_memory, replicated_kv_params
from sizing.presets import load_presets
from sizing.workload import WorkloadError, parse_workload
from tests.factories import GPUFactory

pytestmark = pytest.mark.django_db

PRESETS = load_presets()


def wl(**data):
    return parse_workload(data, PRESETS)


def estimate_errors(api_client, workload, lang=None, **top):
    url = "/api/estimate" + (f"?lang={lang}" if lang else "")
    response = api_client.post(url, {"workload": workload, **top}, format="json")
    assert response.status_code == 400, response.content
    return response.json()


# ---- A: KV heads per GPU under tensor parallelism ---------------------------------------------


def test_past_tp_equal_kv_heads_each_gpu_keeps_one_whole_kv_head():
    """vLLM get_num_kv_heads: max(1, kv_heads // tp). Llama 3.1 70B has 8 KV heads: at TP 16
    each GPU still caches one head (1/8 of the cache), not half a head."""
    w = wl(model="llama-3.1-70b", task="inference", context_len=131072)
    at8 = inference_memory(w, tp=8, explain=False).kv_cache
    at16 = inference_memory(w, tp=16, explain=False).kv_cache
    # 80 layers x 2 x 1 KV head x 128 x 2 B x 131072 tokens
    assert at16 == pytest.approx(80 * 2 * 128 * 2 * 131072, rel=1e-9)
    assert at16 == pytest.approx(at8, rel=1e-9)
    # Below that degree the cache still splits by TP.
    at4 = inference_memory(w, tp=4, explain=False).kv_cache
    assert at4 == pytest.approx(2 * at8, rel=1e-9)


def test_the_reviewers_qwen_case_on_eight_gpus(api_client):
    """Qwen2.5-7B has 28 attention heads and 4 KV heads: vLLM loads it at no TP 8, so 8 GPUs
    serve as 2 replicas of TP 4, each with 8 of the 16 sequences: one KV head per GPU,
    8 x 131072 tokens, 14 GiB (TP 8 would hold one copied head for all 16: 28)."""
    body = {
        "workload": {
            "model": "qwen2.5-7b",
            "task": "inference",
            "context_len": 131072,
            "concurrency": 16,
            "tokens": 1e8,
        },
        "gpu": "h200-sxm",
        "gpu_count": 8,
    }
    response = api_client.post("/api/estimate", body, format="json")
    assert response.status_code == 200, response.content
    answer = response.json()
    assert answer["assumptions"]["tensor_parallel"] == 4
    assert answer["assumptions"]["replicas"] == 2
    # 28 layers x 2 (K, V) x 1 head x 128 x 2 bytes x 131072 tokens x 8 sequences
    assert answer["breakdown"]["kv_cache"] == pytest.approx(14.0, abs=0.01)
    assert any("2 replicas of tensor parallel 4" in note for note in answer["notes"])
    # Every GPU is paid for: GPU-hours are the hours times all 8.
    assert answer["gpu_hours"] == pytest.approx(answer["est_hours"] * 8, rel=1e-3)
    # The same job on one replica (TP 4) decodes each sequence no slower than in the layout,
    # and the layout serves twice the sequences: its hours are at most the replica's.
    four = api_client.post("/api/estimate", {**body, "gpu_count": 4}, format="json").json()
    assert answer["est_hours"] <= four["est_hours"]


def test_replicated_kv_projections_are_counted_in_the_weights():
    """QKVParallelLinear replicates the K/V weights with the heads: at TP 16 a GPU of Llama 3.1
    70B holds 1/8 of them, 2 x 8192 x 128 x 80 parameters, not 1/16."""
    arch = PRESETS["llama-3.1-70b"]
    assert replicated_kv_params(arch, 8) == 0.0
    per_head = 2 * 8192 * 128 * 80 * arch.params / arch.counts.computed_total
    assert replicated_kv_params(arch, 16) == pytest.approx(per_head / 2, rel=1e-9)
    w = wl(model="llama-3.1-70b", task="inference")
    weights16 = inference_memory(w, tp=16, explain=False).weights
    weights8 = inference_memory(w, tp=8, explain=False).weights
    assert weights16 == pytest.approx(weights8 / 2 + per_head / 2 * 2, rel=1e-9)


def test_latent_attention_is_not_split_by_tp():
    w = wl(model="deepseek-v3", task="inference", context_len=4096)
    one = inference_memory(w, tp=1, explain=False)
    eight = inference_memory(w, tp=8, explain=False)
    assert eight.kv_cache == pytest.approx(one.kv_cache, rel=1e-9)
    assert replicated_kv_params(PRESETS["deepseek-v3"], 8) == 0.0


def test_tp_must_divide_the_kv_heads_or_be_a_multiple_of_them(api_client):
    """Each GPU gets whole KV heads, split or copied: Qwen2.5-7B's 4 KV heads go on 2 or 4 GPUs
    (split) or 28 (copied 7 times) but not on 7 or 14 (its 28 query heads allow those)."""
    workload = {"model": "qwen2.5-7b", "task": "inference", "tensor_parallel": 14}
    answer = estimate_errors(api_client, workload, gpu="h100-sxm", gpu_count=14)
    said = answer["errors"]["workload"]["tensor_parallel"][0]
    assert said.startswith("Must divide the 4 KV heads of qwen2.5-7b or be a multiple of them")
    coded = answer["error_messages"]["workload"]["tensor_parallel"][0]
    assert coded["code"] == "input_tp_kv_heads"
    zh = estimate_errors(api_client, workload, lang="zh-hans", gpu="h100-sxm", gpu_count=14)
    assert "4 个 KV 头" in zh["errors"]["workload"]["tensor_parallel"][0]
    with pytest.raises(WorkloadError):
        wl(model="qwen2.5-7b", tensor_parallel=7)  # training alike
    assert wl(model="qwen2.5-7b", task="inference", tensor_parallel=28).tensor_parallel == 28
    assert wl(model="llama-3.1-70b", tensor_parallel=16).tensor_parallel == 16


def test_training_counts_the_copied_kv_heads_too():
    """Past TP = KV heads the K/V projections (weights, gradients, optimizer states) and the
    K and V each layer saves are copied, one whole head per GPU, in training as in serving."""
    from sizing.memory import training_memory

    base = {"model": "llama-3.1-70b", "method": "full", "sharding": "none"}
    at8 = training_memory(wl(**base, tensor_parallel=8), dp=1, sharding="none")
    at16 = training_memory(wl(**base, tensor_parallel=16), dp=1, sharding="none")
    copies = replicated_kv_params(PRESETS["llama-3.1-70b"], 16)
    assert at16.weights == pytest.approx(at8.weights / 2 + copies * 2, rel=1e-9)
    assert at16.gradients == pytest.approx(at8.gradients / 2 + copies * 4, rel=1e-9)
    assert at16.optimizer == pytest.approx(at8.optimizer / 2 + copies * 12, rel=1e-9)
    assert at16.activations > at8.activations / 2


# ---- B: contexts longer than the model supports -----------------------------------------------


def test_inference_context_past_the_models_limit_is_a_400_with_a_longer_preset(api_client):
    workload = {"model": "llama-3-70b", "task": "inference", "context_len": 131072}
    answer = estimate_errors(api_client, workload)
    said = answer["errors"]["workload"]["context_len"][0]
    assert said.startswith("Must be at most 8192, the longest context llama-3-70b supports")
    assert "llama-3.1-70b" in said and "131,072" in said
    coded = answer["error_messages"]["workload"]["context_len"][0]
    assert coded["code"] == "input_context_over_max_alternative"
    assert coded["params"]["max_position"] == 8192
    zh = estimate_errors(api_client, workload, lang="zh-hans")["errors"]["workload"]
    assert zh["context_len"][0].startswith("不能超过 8192")
    assert "llama-3.1-70b" in zh["context_len"][0]


def test_training_seq_len_past_the_models_limit_is_a_400(api_client):
    answer = estimate_errors(api_client, {"model": "llama-3-8b", "seq_len": 65536})
    said = answer["errors"]["workload"]["seq_len"][0]
    assert "at most 8192" in said and "llama-3.1-8b" in said
    # At the limit it is accepted.
    assert wl(model="llama-3-8b", seq_len=8192).seq_len == 8192


def test_the_get_form_refuses_it_too(api_client):
    response = api_client.get(
        "/api/recommend", {"model": "llama-3-70b", "task": "inference", "context_len": 131072}
    )
    assert response.status_code == 400
    assert "context_len" in response.json()["errors"]["workload"]


def test_no_longer_preset_of_the_family_says_only_the_limit():
    with pytest.raises(WorkloadError) as exc:
        wl(model="gpt2", seq_len=4096)
    assert exc.value.errors["seq_len"] == [
        "Must be at most 1024, the longest context gpt2 supports."
    ]


def test_the_default_context_fits_a_short_model():
    """GPT-2 serves 1024 tokens at most: the 4096-token default would be a context it cannot
    hold, so its default is its limit."""
    assert wl(model="gpt2", task="inference").context_len == 1024
    assert wl(model="llama-3-8b", task="inference").context_len == 4096


def test_t5_relative_positions_are_not_a_limit():
    assert wl(model="t5-base", seq_len=2048).seq_len == 2048


CONFIG = {
    "model_type": "llama",
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 128256,
    "max_position_embeddings": 4096,
}


def test_a_config_json_limit_is_checked_with_its_rope_scaling():
    with pytest.raises(WorkloadError) as exc:
        wl(architecture=CONFIG, seq_len=8192)
    assert exc.value.errors["seq_len"] == [
        "Must be at most 4096, the longest context the config.json given supports "
        "(max_position_embeddings 4096)."
    ]
    assert "config.json" in exc.value.rendered("zh-hans")["seq_len"][0]
    # YaRN x 4 over the original 4096 (vLLM derives max_model_len so): 16384 is fine.
    yarn = {
        **CONFIG,
        "rope_scaling": {
            "rope_type": "yarn",
            "factor": 4.0,
            "original_max_position_embeddings": 4096,
        },
    }
    assert wl(architecture=yarn, task="inference", context_len=16384).context_len == 16384
    with pytest.raises(WorkloadError) as exc:
        wl(architecture=yarn, task="inference", context_len=16385)
    assert "16,384" in exc.value.errors["context_len"][0]
    # Llama 3.1's rope type keeps max_position_embeddings as the extended length.
    llama3 = {**CONFIG, "rope_scaling": {"rope_type": "llama3", "factor": 8.0}}
    with pytest.raises(WorkloadError):
        wl(architecture=llama3, seq_len=8192)
    # No max_position_embeddings: nothing to check against.
    bare = {k: v for k, v in CONFIG.items() if k != "max_position_embeddings"}
    assert wl(architecture=bare, seq_len=65536).seq_len == 65536


# ---- C: config.json combinations that cannot be -----------------------------------------------

MIXTRAL = {
    "model_type": "mixtral",
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 32000,
    "num_local_experts": 8,
    "num_experts_per_tok": 2,
}


def test_more_active_experts_than_experts_is_a_400(api_client):
    workload = {"architecture": {**MIXTRAL, "num_experts_per_tok": 16}}
    answer = estimate_errors(api_client, workload)
    assert answer["errors"]["workload"]["architecture"] == [
        "num_experts_per_tok (16) must not exceed the 8 experts (num_local_experts)."
    ]
    zh = estimate_errors(api_client, workload, lang="zh-hans")
    assert "专家数 8" in zh["errors"]["workload"]["architecture"][0]
    # The real Mixtral numbers pass, with fewer active parameters than total.
    a = wl(architecture=MIXTRAL).arch
    assert a.active_params < a.params


@pytest.mark.parametrize(
    "change, code",
    [
        ({"num_key_value_heads": 6}, "input_config_kv_heads"),
        ({"num_key_value_heads": 64}, "input_config_kv_heads"),
        ({"first_k_dense_replace": 40}, "input_config_dense_layers"),
        ({"kv_lora_rank": 512}, "input_config_latent_keys"),
    ],
)
def test_impossible_config_combinations_are_named(change, code):
    with pytest.raises(WorkloadError) as exc:
        wl(architecture={**MIXTRAL, **change})
    assert [m.code for m in exc.value.coded["architecture"]] == [code]
    assert exc.value.rendered("zh-hans")["architecture"][0] != exc.value.errors["architecture"][0]


# ---- D: tokens ---------------------------------------------------------------------------------


def test_zero_tokens_is_a_400_and_null_is_no_run_length(api_client):
    answer = estimate_errors(api_client, {"model": "llama-3-8b", "tokens": 0})
    assert answer["errors"]["workload"]["tokens"] == [
        "Must be between 1 and 1,000,000,000,000,000."
    ]
    zh = estimate_errors(api_client, {"model": "llama-3-8b", "tokens": 0}, lang="zh-hans")
    assert zh["errors"]["workload"]["tokens"][0].startswith("必须介于 1 与")
    assert wl(model="llama-3-8b", tokens=None).tokens is None
    assert wl(model="llama-3-8b").tokens is None
    assert wl(model="llama-3-8b", tokens=1).tokens == 1


# ---- E: countries ------------------------------------------------------------------------------


def constraints(**data):
    form = ConstraintsSerializer(data=data)
    valid = form.is_valid()
    return form.validated_data if valid else form.errors


def test_an_unknown_country_is_a_400_naming_the_field(api_client):
    body = {"workload": {"model": "llama-3-8b"}, "constraints": {"countries": ["XX"]}}
    response = api_client.post("/api/recommend", body, format="json")
    assert response.status_code == 400
    said = response.json()["errors"]["constraints"]["countries"]
    assert len(said) == 1
    assert said[0].startswith("unknown country 'XX' (no region of the catalog is in it")
    get = api_client.get("/api/recommend", {"model": "llama-3-8b", "countries": "us,XX"})
    assert get.status_code == 400
    assert "unknown country 'XX'" in get.json()["errors"]["constraints"]["countries"][0]


def test_country_codes_are_those_of_the_regions():
    assert constraints(countries=["us", "De"])["countries"] == ["US", "DE"]
    # A marketplace's worldwide region is in ZZ (no one country).
    assert constraints(countries=["ZZ"])["countries"] == ["ZZ"]
    errors = constraints(countries=["UK"])["countries"]
    assert errors[0].startswith("unknown country 'UK' (no region of the catalog is in it; did ")
    assert "did you mean GB" in errors[0]


# ---- F: the catalog's own GPU names ------------------------------------------------------------


def test_constraint_gpus_take_aliases_and_any_case_as_slugs():
    named = ["T4", "Tesla T4", "RTX 4090", "4090", "H100-SXM", "nvidia-tesla-t4"]
    assert constraints(gpus=named)["gpus"] == ["t4", "rtx-4090", "h100-sxm"]
    assert constraints(gpus=["h100"])["gpus"] == ["h100-sxm"]  # the alias "H100"
    errors = constraints(gpus=["a100-48gb"])["gpus"]
    assert errors[0].startswith("unknown GPU 'a100-48gb' (did you mean a100-")


def test_recommend_over_an_alias(api_client):
    body = {
        "workload": {"model": "llama-3-8b", "method": "qlora", "tokens": 1e7},
        "constraints": {"gpus": ["RTX 4090"], "include_stale": True},
        "limit": 3,
    }
    response = api_client.post("/api/recommend", body, format="json")
    assert response.status_code == 200, response.content
    plans = response.json()["recommendations"]
    assert plans and {plan["gpu"] for plan in plans} == {"rtx-4090"}


def test_compare_targets_take_aliases_and_answer_the_slug(api_client):
    body = {
        "workload": {"model": "llama-3-8b", "method": "qlora", "tokens": 1e7},
        "targets": [{"gpu": "Tesla T4"}, {"gpu": "4090"}],
    }
    response = api_client.post("/api/compare", body, format="json")
    assert response.status_code == 200, response.content
    assert [row["target"] for row in response.json()["rows"]] == ["t4", "rtx-4090"]


def test_an_ambiguous_gpu_name_lists_the_candidates(api_client):
    other = GPUFactory(slug="zz-9000")
    GPUAlias.objects.create(
        gpu=GPUFactory(slug="zz-9000-pro"), name="ZZ 9000", normalised="zz 9000"
    )
    errors = constraints(gpus=["ZZ 9000"])
    assert errors["gpus"] == [
        "ambiguous GPU 'ZZ 9000': it names zz-9000, zz-9000-pro; give one slug"
    ]
    # Its slug, in any case, is not ambiguous.
    assert constraints(gpus=["ZZ-9000"])["gpus"] == [other.slug]
    body = {"workload": {"model": "llama-3-8b"}, "targets": [{"gpu": "zz 9000"}]}
    response = api_client.post("/api/compare", body, format="json")
    assert response.status_code == 400
    said = response.json()["errors"]["targets"]["0"]["gpu"][0]
    assert said.startswith("ambiguous GPU 'zz 9000': it names zz-9000, zz-9000-pro")
