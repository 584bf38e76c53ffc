"""How a multi-node plan's nodes are joined: a bandwidth no one published is unknown, never 0;
the RDMA warning is for fabrics without RDMA; an instance with no fabric is rejected as such."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sizing.messages import MessageCode as C
from sizing.planner.explain import _inter_node_messages
from sizing.planner.steps import _inter_node_gbps
from sizing.selectors import offer_list

pytestmark = pytest.mark.django_db

GB200_PRETRAIN = {
    "workload": {
        "model": "llama-3-70b",
        "task": "pretrain",
        "gradient_checkpointing": "full",
        "tokens": 1e10,
    },
    "constraints": {"gpus": ["gb200"], "pricing": ["on_demand"], "include_stale": True},
}


def recommend(api_client, body):
    response = api_client.post("/api/recommend", body, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def codes(messages):
    return [m["code"] for m in messages]


def test_an_infiniband_cluster_without_a_network_figure_is_not_warned_of_missing_rdma(
    api_client,
):
    plans = recommend(api_client, GB200_PRETRAIN)["recommendations"]
    multi = [p for p in plans if p["nodes"] > 1 and p["interconnect"]["inter_node_rdma"]]
    assert multi
    for p in multi:
        assert "MULTI-NODE WITHOUT RDMA" not in " ".join(p["warnings"])
        assert C.MULTI_NODE_WITHOUT_RDMA not in codes(p["warning_messages"])
    unpublished = [p for p in multi if p["interconnect"]["network_gbps"] is None]
    assert unpublished
    for p in unpublished:
        # InfiniBand's catalog figure is one port's: said per port, never as the node's.
        assert C.NODES_JOINED_RDMA_FABRIC not in codes(p["reason_messages"])
        joined = [m for m in p["reason_messages"] if m["code"] == C.NODES_JOINED_RDMA_PORT]
        assert joined and joined[0]["params"]["port_gbps"] > 0
        assert "per port" in joined[0]["text"]
        # The node's bandwidth is unknown: the time leaves that collective out, and says so.
        assert C.INTER_NODE_UNTIMED in codes(p["warning_messages"])


def _multi_node_offer(**over):
    offer = next(o for o in offer_list() if o.inter_slug and o.inter_rdma and o.gpu_count >= 8)
    return replace(offer, **over)


def _said(offer, nodes=4):
    reasons, warnings = [], []
    _inter_node_messages(offer, nodes, reasons, warnings)
    return [m.code for m in reasons], [m.code for m in warnings], reasons + warnings


def test_no_bandwidth_anywhere_is_said_to_be_unpublished_never_zero():
    offer = _multi_node_offer(network_gbps=None, inter_bandwidth_gbps=None)
    reasons, warnings, said = _said(offer)
    assert reasons == [C.NODES_JOINED_RDMA_UNPUBLISHED] and warnings == []
    assert "not published" in said[0].text
    plain = replace(offer, inter_rdma=False)
    _, warnings, said = _said(plain)
    assert warnings == [C.MULTI_NODE_WITHOUT_RDMA_UNPUBLISHED]
    assert "(0 Gbit/s)" not in said[0].text and "not published" in said[0].text


def test_the_rdma_warning_is_for_fabrics_without_rdma_and_slow_rdma_is_its_own_warning():
    published = _multi_node_offer(network_gbps=3200.0)
    assert _said(published)[:2] == ([C.NODES_JOINED_RDMA], [])
    plain = replace(published, inter_rdma=False, network_gbps=None, inter_bandwidth_gbps=100.0)
    assert _said(plain)[1] == [C.MULTI_NODE_WITHOUT_RDMA]
    slow = replace(published, network_gbps=50.0)
    assert _said(slow)[1] == [C.MULTI_NODE_RDMA_SLOW]


def test_the_time_model_takes_a_plain_fabrics_own_figure_not_ten_gbit():
    offer = _multi_node_offer(inter_rdma=False, network_gbps=None, inter_bandwidth_gbps=100.0)
    assert _inter_node_gbps(offer) == 100.0
    assert _inter_node_gbps(replace(offer, inter_bandwidth_gbps=None)) == 10.0
    assert _inter_node_gbps(replace(offer, network_gbps=200.0)) == 200.0
    rdma = replace(offer, inter_rdma=True)
    assert _inter_node_gbps(rdma) is None  # the time model's default cluster fabric


CHINA_70B = {
    "workload": {
        "model": "llama-3-70b",
        "method": "full",
        "gradient_checkpointing": "full",
        "tokens": 1e9,
    },
    "constraints": {"mainland_china": True, "datacenter_only": True},
}


def test_an_instance_without_a_fabric_is_rejected_for_it_and_the_advice_names_it(api_client):
    answer = recommend(api_client, CHINA_70B)
    rejected = answer["rejected"]
    assert "no_inter_node_fabric" in rejected, rejected.keys()
    entry = rejected["no_inter_node_fabric"]
    assert entry["count"] > 0 and entry["examples"]
    assert "no inter-node fabric" in entry["examples"][0]
    example = entry["example_messages"][0]
    assert example["code"] == C.EXAMPLE_NO_FABRIC and example["params"]["nodes"] >= 2
    advice = [m for m in answer["advice_messages"] if m["code"] == C.MULTI_NODE_NEEDS_FABRIC]
    assert advice and advice[0]["params"]["nodes"] >= 2
    assert "gn7e" in advice[0]["params"]["instance_types"]
    chinese = api_client.post("/api/recommend?lang=zh-hans", CHINA_70B, format="json").json()
    text = [m["text"] for m in chinese["advice_messages"] if m["code"] == C.MULTI_NODE_NEEDS_FABRIC]
    assert text and "节点间互联网络" in text[0]


def test_a_job_one_node_holds_is_not_rejected_for_the_missing_fabric(api_client):
    small = {**CHINA_70B, "workload": {"model": "llama-3-8b", "method": "lora", "tokens": 1e8}}
    answer = recommend(api_client, small)
    assert answer["recommendations"]
    assert "no_inter_node_fabric" not in answer["rejected"]


def test_a_per_port_fabric_figure_is_not_the_nodes_and_a_per_node_one_is():
    ib = _multi_node_offer(network_gbps=None, inter_bandwidth_gbps=400.0, inter_kind="infiniband")
    reasons, warnings, said = _said(ib)
    assert reasons == [C.NODES_JOINED_RDMA_PORT] and warnings == []
    assert said[0].params["port_gbps"] == 400.0
    # A slow port is not a slow node: the node's total is unknown.
    edr = replace(ib, inter_bandwidth_gbps=50.0)
    assert _said(edr)[:2] == ([C.NODES_JOINED_RDMA_PORT], [])
    # EFAv2's figure is the instance's (fixtures/interconnects.yaml): the node's bandwidth.
    efa2 = replace(ib, inter_kind="efa", inter_slug="efa-v2", inter_bandwidth_gbps=3200.0)
    assert _said(efa2)[0] == [C.NODES_JOINED_RDMA_FABRIC]


def test_the_time_model_invents_no_bandwidth_between_nodes():
    """Unknown stays unknown: no default fabric speed; the collective between nodes is left
    out of the time (a lower bound) and the estimate says so. A known figure is used as is."""
    from catalog.models import GPU
    from sizing.estimator import estimate, parse_workload
    from sizing.presets import load_presets
    from sizing.selectors import gpu_spec
    from sizing.specs import Topology

    gpu = gpu_spec(GPU.objects.get(slug="h100-sxm"))
    # Short micro-batches: ZeRO-3's gathers outlast the compute even at 1,600 Gbit/s.
    w = parse_workload(
        {"model": "llama-3-70b", "task": "pretrain", "sharding": "zero3", "tokens": 1e10,
         "gradient_checkpointing": "full", "batch_size": 1, "seq_len": 512},
        load_presets(),
    )  # fmt: skip

    def hours(**topology):
        topo = Topology(gpu_count=64, gpus_per_node=8, intra_node="nvswitch", **topology)
        return estimate(w, gpu=gpu, gpu_count=64, topology=topo)

    unknown, zero = hours(inter_node_gbps=None), hours(inter_node_gbps=0.0)
    slow, fast = hours(inter_node_gbps=100.0), hours(inter_node_gbps=1600.0)
    assert unknown.inter_node_untimed and zero.inter_node_untimed  # 0 is unknown, not 0 Gbit/s
    assert not slow.inter_node_untimed and not fast.inter_node_untimed
    assert unknown.est_hours == zero.est_hours
    # Left out, not assumed: no known fabric is faster than leaving its collective out, and
    # the unknown fabric is not timed as the old 1,600 Gbit/s default.
    assert unknown.est_hours < fast.est_hours < slow.est_hours
    assert any("bandwidth not known" in note for note in unknown.notes)
    one_node = Topology(gpu_count=8, gpus_per_node=8, intra_node="nvswitch")
    assert not estimate(w, gpu=gpu, gpu_count=8, topology=one_node).inter_node_untimed


def test_a_network_figure_under_one_infiniband_port_is_the_front_end_networks():
    """Azure's ND series publish 24-80 Gbit/s (the front-end Ethernet) beside 8 x 200-400
    Gbit/s InfiniBand: a node has at least one port of its fabric, so that figure is not the
    fabric's; the bandwidth between nodes stays unknown. EFA runs over the instance's own
    network, so its instance figure stands even under the adapter's."""
    ib = _multi_node_offer(
        inter_kind="infiniband", inter_slug="infiniband-ndr", inter_bandwidth_gbps=400.0,
        network_gbps=80.0,
    )  # fmt: skip
    assert _inter_node_gbps(ib) is None
    reasons, warnings, said = _said(ib)
    assert reasons == [C.NODES_JOINED_RDMA_FRONT_END] and warnings == []  # not "slow RDMA"
    assert said[0].params == {"interconnect": "infiniband-ndr", "port_gbps": 400.0,
                              "network_gbps": 80.0}  # fmt: skip
    assert _inter_node_gbps(replace(ib, network_gbps=3200.0)) == 3200.0
    efa = replace(ib, inter_kind="efa", inter_slug="efa", inter_bandwidth_gbps=100.0)
    assert _inter_node_gbps(replace(efa, network_gbps=50.0)) == 50.0
    assert _inter_node_gbps(replace(ib, inter_rdma=False, network_gbps=0.0)) == 400.0  # never 0


def test_azure_infiniband_plans_are_timed_on_their_infiniband_backend(api_client):
    # fixtures/providers/azure.yaml: ND H100 v5's network figure is its 8x 400 Gbit/s NDR
    # backend (3.2 Tbit/s per VM), not the 80 Gbit/s Ethernet front end that timed a 64-GPU run
    # at 135 h against p5's 6 h.
    body = {
        "workload": {"model": "llama-3-70b", "task": "pretrain", "tokens": 1e10,
                     "gradient_checkpointing": "full"},
        "constraints": {"providers": ["azure"], "gpus": ["h100-sxm"], "include_stale": True},
        "objective": "fastest",
        "limit": 3,
    }  # fmt: skip
    plans = recommend(api_client, body)["recommendations"]
    multi = [p for p in plans if p["nodes"] > 1]
    assert multi
    for p in multi:
        assert p["interconnect"]["inter_node"].startswith("infiniband")
        assert p["interconnect"]["network_gbps"] == 3200
        assert C.MULTI_NODE_RDMA_SLOW not in codes(p["warning_messages"])
        assert C.INTER_NODE_UNTIMED not in codes(p["warning_messages"])
        assert C.NODES_JOINED_RDMA_FRONT_END not in codes(p["reason_messages"])
    aws = {**body, "constraints": {**body["constraints"], "providers": ["aws"]}}
    fastest_aws = recommend(api_client, aws)["recommendations"][0]
    # The same GPUs on the same 3.2 Tbit/s per node: the same hours at the same size.
    twin = next(p for p in multi if p["gpu_count"] == fastest_aws["gpu_count"])
    assert twin["est_hours"] == pytest.approx(fastest_aws["est_hours"], rel=0.02)
