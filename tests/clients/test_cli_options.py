"""The CLI's workload options agree with the one description in sizing/inputs.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from catalog.pricing import PricingModel
from clients import gpuatlas
from sizing import inputs
from sizing.api.serializers import WorkloadSchemaSerializer

ROOT = Path(__file__).resolve().parent.parent.parent


def test_generated_options_are_current():
    """Adding a workload field to sizing/inputs.py fails here until `make schema` is run."""
    assert [tuple(row) for row in gpuatlas.WORKLOAD_OPTIONS] == inputs.cli_options()


def test_generated_pricing_models_and_objectives_are_current():
    """A pricing model added to catalog/pricing.py fails here until `make schema` is run."""
    assert gpuatlas.PRICING_MODELS == tuple(PricingModel) == inputs.PRICING_MODELS
    assert gpuatlas.OBJECTIVES == inputs.OBJECTIVES


@pytest.mark.parametrize("command", ["recommend", "compare", "prices"])
def test_the_pricing_help_lists_every_pricing_model(command, capsys):
    with pytest.raises(SystemExit):
        gpuatlas.build_parser().parse_args([command, "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert ", ".join(PricingModel) in help_text


def test_every_cli_constraint_is_sent_and_has_a_flag():
    """A constraint added to sizing/inputs.py fails here until `make schema` lists it and the
    CLI has a flag for it (the flags are spelt by hand: --no-multi-node, --exclude-stale)."""
    cli = [f.name for f in inputs.CONSTRAINTS if f.cli]
    assert [
        f.name for f in inputs.CONSTRAINTS if f.cli and f.kind == "list"
    ] == gpuatlas.CONSTRAINT_LISTS
    assert sorted(gpuatlas.CONSTRAINT_LISTS + gpuatlas.CONSTRAINT_VALUES) == sorted(cli)
    parser = gpuatlas.build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    for command in ("recommend", "compare"):
        dests = {action.dest for action in commands[command]._actions}
        assert set(cli) <= dests, (command, sorted(set(cli) - dests))


def test_generated_block_is_delimited_once():
    text = (ROOT / "clients" / "gpuatlas.py").read_text(encoding="utf-8")
    assert text.count(inputs.CLI_BEGIN) == 1 and text.count(inputs.CLI_END) == 1


def test_every_cli_field_is_an_api_workload_field():
    api = set(WorkloadSchemaSerializer().fields)
    assert {row[0] for row in gpuatlas.WORKLOAD_OPTIONS} <= api


def test_every_option_reaches_the_request_body(tmp_path):
    """One value per option, as a user would type it, comes out under the field's own name."""
    typed = {"int": "3", "float": "2.5", "count": "2M", "text": "llama-3-8b"}
    config = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4}
    (tmp_path / "config.json").write_text(json.dumps(config))
    argv = ["estimate"]
    expected = {}
    for field, kind, _help, _bare, flag in gpuatlas.WORKLOAD_OPTIONS:
        if kind == "object":
            argv += [flag, str(tmp_path / "config.json")]
            expected[field] = config
        elif kind == "bool":
            argv.append("--no-" + flag[2:])
            expected[field] = False
        elif kind == "choice":
            value = inputs.WORKLOAD_BY_NAME[field].choices[-1]
            argv += [flag, value]
            expected[field] = value
        else:
            argv += [flag, typed[kind]]
            expected[field] = {"int": 3, "float": 2.5, "count": 2e6}.get(kind, typed[kind])
    args = gpuatlas.build_parser().parse_args(argv)
    assert gpuatlas.workload_of(args) == expected


def test_a_bare_flag_takes_its_described_value():
    args = gpuatlas.build_parser().parse_args(["estimate", "--gradient-checkpointing"])
    assert gpuatlas.workload_of(args) == {"gradient_checkpointing": "full"}


def test_rewriting_keeps_the_rest_of_the_file():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "cli_options", ROOT / "scripts" / "cli_options.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = f"head\n{inputs.CLI_BEGIN}\nOLD = 1\n{inputs.CLI_END}\ntail\n"
    assert module.rewrite(text) == "head\n" + inputs.cli_block() + "tail\n"


def test_config_flag_reads_a_config_json_and_refuses_other_files(tmp_path, capsys):
    good = tmp_path / "config.json"
    good.write_text('{"hidden_size": 4096}')
    args = gpuatlas.build_parser().parse_args(["estimate", "--config", str(good)])
    assert gpuatlas.workload_of(args) == {"architecture": {"hidden_size": 4096}}
    bad = tmp_path / "list.json"
    bad.write_text("[1, 2]")
    with pytest.raises(SystemExit):
        gpuatlas.build_parser().parse_args(["estimate", "--config", str(bad)])
    assert "JSON object" in capsys.readouterr().err
