"""review101's bugs (fix204): what the plan counts, the hosts are told; site power under ``hardware.fixed``; an
unknown per-site capex; a nested ModelOpt list refused at its own line."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from generator.api import plan_file, render_file
from generator.calculator.model_source import config_architecture
from generator.calculator.report import _sites_lines
from generator.errors import FleetLimitError, InputError, MultipleInputError, SpecgenError
from generator.workload import load_workload
from tests.conftest import REPO


def _mi300x_limited(tmp_path: Path) -> str:
    body = (REPO / "examples" / "colo-mi300x-rocm.yaml").read_text()
    limit = "  gpu_power_limits: [{gpu: mi300x-192gb, watts: 600}]\n"
    body = body.replace("  provider: baremetal\n", "  provider: baremetal\n" + limit, 1)
    path = tmp_path / "mi300x.yaml"
    path.write_text(body)
    return str(path)


def test_an_amd_gpu_limit_is_set_by_ansible_with_the_tool_the_plan_names(tmp_path: Path) -> None:
    """1. The MI300X was counted at 600 W, but no var set it and the note said nvidia-smi."""
    files = render_file(_mi300x_limited(tmp_path))
    limited = [t for n, t in files.items() if n.startswith("ansible/group_vars/") and "specgen_gpu_power_limit" in t]
    assert limited and all("rocm-smi --setpoweroverdrive 600" in t and "at_every_boot: true" in t for t in limited)
    assert not any("nvidia-smi" in t for t in limited)
    spec = files["SPEC.md"]
    assert "specgen_gpu_power_limit sets it (rocm-smi --setpoweroverdrive) at every boot" in spec
    assert "nvidia-smi -pl" not in spec


def test_a_gpu_with_no_sourced_limit_command_is_refused_at_its_field(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(
        "version: 1\nname: lab\ndeployments:\n  - name: chat\n    model: meta-llama/Llama-3.1-8B-Instruct\n"
        "    inference: {precision: bf16, max_context_tokens: 8192, requests_per_second: 2}\nhardware:\n"
        "  provider: baremetal\n  gpus: [gaudi3-128gb]\n  gpu_power_limits:\n    - {gpu: gaudi3-128gb, watts: 500}\n"
    )
    with pytest.raises(SpecgenError) as info:
        load_workload(str(path))
    errors = info.value.errors if isinstance(info.value, MultipleInputError) else [info.value]
    (mine,) = [e for e in errors if e.location is not None and e.location.path == "hardware.gpu_power_limits[0].gpu"]
    assert mine.location is not None and mine.location.line == 11
    assert "no sourced command" in str(mine)


def _home(tmp_path: Path, kw: float) -> str:
    body = (REPO / "examples" / "home-2x3090-moe.yaml").read_text()
    body = body.replace("  provider: baremetal\n", f"  provider: baremetal\n  site_power: {{kw: {kw:g}}}\n", 1)
    path = tmp_path / "home.yaml"
    path.write_text(body)
    return str(path)


def test_a_fixed_machine_over_its_site_power_is_refused_with_the_figures(tmp_path: Path) -> None:
    """2. A 995 W machine under 0.1 kW (80 W usable) planned with no word."""
    path = _home(tmp_path, 0.1)
    with pytest.raises(FleetLimitError) as info:
        plan_file(path)
    where = info.value.location
    assert where is not None and where.path == "hardware.site_power" and where.file == path and where.line == 22
    said = str(info.value)
    assert "the fleet draws 995 W at full load, over the 80 W (0.1 kW x 0.8 continuous) the site may draw by 915 W" in said
    assert "gpu_power_limits" not in said  # refused beside hardware.fixed: not offered


def test_a_fixed_machine_within_its_site_power_gets_the_note(tmp_path: Path) -> None:
    _, plan = plan_file(_home(tmp_path, 2))
    (said,) = [f for f in plan.findings if f.code == "site-power"]
    assert "the fleet draws 995 W of the 1,600 W (2 kW x 0.8 continuous) the site may draw (62%); 605 W are left" in said.message


def test_an_unknown_per_site_capex_is_not_printed_as_zero() -> None:
    """3. SPEC.md prints '-' where the chain's capex is unknown; the headline printed '$0'."""
    totals = {"sites": 3, "gpus": 3, "nodes": 3, "power_w": 1_500, "usd_per_month": None, "capex_usd": None}
    plan = SimpleNamespace(sites=SimpleNamespace(totals=totals, names=("a", "b", "c")))
    (line,) = _sites_lines(plan)  # type: ignore[arg-type]
    assert "(capex not known)" in line and "$0" not in line
    (line,) = _sites_lines(SimpleNamespace(sites=SimpleNamespace(totals={**totals, "capex_usd": 0}, names=("a",))))  # type: ignore[arg-type]
    assert "(capex $0)" in line  # owned hosts: nothing spent is a known $0


def test_a_nested_modelopt_exclude_modules_is_refused_at_its_own_line() -> None:
    """4. It was placed at the quantization_config block's line."""
    config = {
        "model_type": "llama", "hidden_size": 256, "intermediate_size": 512, "num_attention_heads": 4,
        "num_key_value_heads": 2, "num_hidden_layers": 2, "vocab_size": 512, "max_position_embeddings": 4096,
        "quantization_config": {"quantization": {"quant_algo": "FP8", "exclude_modules": [1]}},
    }  # fmt: skip
    text = json.dumps(config, indent=2)
    with pytest.raises(InputError) as err:
        config_architecture(config, text, "config.json", None)
    line = text[: text.index('"exclude_modules"')].count("\n") + 1
    assert str(err.value).startswith(f"config.json:{line}:"), str(err.value)
    assert "'quantization_config.quantization.exclude_modules'" in str(err.value)
