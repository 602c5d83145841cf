"""The engine a machine of yours runs: ``hardware.fixed.offload_engine`` and ``specgen estimate --offload-engine``.

The offload model times ik_llama.cpp's CPU attention at its own rate (500 GFLOP/s against llama.cpp's 90, the
2026-12-03 ik attention entry of benchmarks/CALIBRATION.md), but the CLI and workloads always planned and printed
llama.cpp, so a user running ik_llama.cpp was told the wrong engine's figures: at long context 2.8-11 times off in the
CPU's attention. The choice times the whole plan for the engine and plans its own ``llama-server`` line
(https://github.com/ikawrakow/ik_llama.cpp/blob/main/docs/parameters.md: mainline's flags, ``-fa on|off|auto``,
``-mla 0-3``, ``-np`` splitting ``-c`` over the slots and no ``-kvu``; no ``-rtr`` beside a GPU, its README).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from generator.api import plan_file
from generator.catalog import find_model
from generator.cli import main
from generator.errors import InputError, MultipleInputError
from generator.sizing.architecture import parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.offload import Machine, plan_offload, stream_capacity
from generator.sizing.precision import weight_format
from generator.units import GIB
from tests.conftest import REPO
from tests.helpers import ansible_reader, run_estimate

#: Llama 3.3 70B at q4_k_m on a 24 GiB RTX 4090 with 64 GiB of DDR5-5200 (Ryzen 9 7950X), a 16,000-token prompt and
#: 300 tokens of answer: 40 of its 80 layers run on the CPU, their attention over the 16,150 tokens a decode step
#: reads on average (the prompt and half the answer). 300, not 500, since fix135 sized the 4090 at CUDA's 24,210 MiB:
#: at 500 the engines' -ub trades parted (llama.cpp -ub 1024 with 39 CPU layers, ik_llama.cpp -ub 2048 with 40), and
#: the attention difference is compared on one placement.
LONG = (
    "meta-llama/Llama-3.3-70B-Instruct", "--precision", "q4_k_m", "--gpu", "rtx-4090-24gb", "--ram-gib", "64",
    "--cpu", "ryzen-9-7950x", "--input-tokens", "16000", "--output-tokens", "300",
)  # fmt: skip

#: Llama 3.3 70B (config.json: 64 query heads of 128): QK^T and PV, 2 x 64 x 128 FLOPs each a cached token and layer.
LLAMA_70B_FLOPS_PER_CACHED_TOKEN = 4 * 64 * 128

#: DeepSeek-V2-Lite (MLA) at q8_0 on a 12 GiB RTX 3060: the routed experts of 11 layers in RAM, attention on the GPU.
MLA_MOE = (
    "deepseek-ai/DeepSeek-V2-Lite", "--precision", "q8_0", "--gpu", "rtx-3060-12gb", "--ram-gib", "32",
    "--cpu", "ryzen-9-7950x", "--input-tokens", "8000", "--output-tokens", "500", "--context", "32768",
)  # fmt: skip
EXPERTS_ON_CPU = r"-ot 'blk\.(16|17|18|19|20|21|22|23|24|25|26)\.ffn_.*_exps\.=CPU'"

HOME = (REPO / "examples" / "home-70b-offload.yaml").read_text()
#: fix176: each line's model, the q4_k_m / q8_0 GGUF of the Hub id (was: no model word)
LLAMA_70B = "-m Llama-3.3-70B-Instruct-Q4_K_M.gguf"
V2_LITE = "-m DeepSeek-V2-Lite-Q8_0.gguf"


def _estimate(*args: str) -> dict[str, Any]:
    code, text = run_estimate(*args, "--json")
    assert code == 0
    data: dict[str, Any] = json.loads(text)
    return data


def test_the_long_context_estimate_is_faster_under_ik_llama_cpp_by_the_attention_difference() -> None:
    """By hand: 40 CPU layers x 32,768 FLOPs x 16,150 cached tokens = 21,168,128,000 FLOPs a token.

    At llama.cpp's 90 GFLOP/s that is 235.201 ms, at ik_llama.cpp's 500 42.336 ms: the token is 192.865 ms shorter,
    and nothing else of it moves (the weights' 384.247 ms from DDR, the GPU's 32.846, the engine's 2.011, the one
    switch from the CPU's layers to the GPU's at 50 us), so decode goes from 1 / 0.654355 s = 1.528 to 1 / 0.461490 s
    = 2.167 tokens/s, and the TTFT (the prompt, then a token) 193 ms less. (At 500 tokens of answer: 38 CPU layers,
    1.594 and 2.257 tokens/s, until fix135 sized the 4090 at CUDA's 24,210 MiB, not nvidia-smi's 24,564; 40 CPU
    layers, 1.524 and 2.164, until review80 item 2 took the 5% margin from beside the offloaded layers.)
    """
    main_run, ik_run = _estimate(*LONG), _estimate(*LONG, "--offload-engine", "ik_llama.cpp")
    assert (main_run["offload"]["engine"], ik_run["offload"]["engine"]) == ("llama.cpp", "ik_llama.cpp")
    assert main_run["offload"]["layers"] == ik_run["offload"]["layers"]
    assert main_run["offload"]["layers"].count("cpu") == 40
    flops = 40 * LLAMA_70B_FLOPS_PER_CACHED_TOKEN * (16000 + 300 // 2)
    assert flops == 21_168_128_000
    main_s, ik_s = main_run["offload"]["seconds_per_token"], ik_run["offload"]["seconds_per_token"]
    assert main_s["cpu-attention"] == round(flops / 90e9, 6) == 0.235201
    assert main_s["gpu-cpu-switch"] == ik_s["gpu-cpu-switch"] == 50e-6  # llama.cpp's -ngl: one switch a token
    assert ik_s["cpu-attention"] == round(flops / 500e9, 6) == 0.042336
    assert {k: v for k, v in main_s.items() if k != "cpu-attention"} == {k: v for k, v in ik_s.items() if k != "cpu-attention"}
    assert sum(main_s.values()) - sum(ik_s.values()) == pytest.approx(flops / 90e9 - flops / 500e9, abs=2e-6)
    assert main_run["throughput"]["decode_tokens_per_s"] == round(1 / sum(main_s.values()), 3) == 1.528
    assert ik_run["throughput"]["decode_tokens_per_s"] == round(1 / sum(ik_s.values()), 3) == 2.167
    # the prompt passes are one model for both engines (the calibration's prefill rows of both): only the token differs
    assert main_run["throughput"]["prefill_tokens_per_s"] == ik_run["throughput"]["prefill_tokens_per_s"]
    assert main_run["throughput"]["ttft_s"] - ik_run["throughput"]["ttft_s"] == pytest.approx(0.193, abs=0.002)


def test_each_engine_gets_its_own_line() -> None:
    main_run, ik_run = _estimate(*LONG), _estimate(*LONG, "--offload-engine", "ik_llama.cpp")
    assert main_run["runtime_settings"]["llama.cpp"] == f"{LLAMA_70B} -ngl 40 -c 16300 -np 1 -b 2048 -ub 2048 --no-mmap"
    assert "ik_llama.cpp" not in main_run["runtime_settings"]
    ik = ik_run["runtime_settings"]
    assert ik["ik_llama.cpp"] == f"{LLAMA_70B} -ngl 40 -c 16300 -fa on -ctk f16 -ctv f16 -np 1 -b 2048 -ub 2048 --no-mmap"
    assert "llama.cpp" not in ik and "llama.cpp_options" not in ik  # mainline's line is not printed as ik's figures
    assert ik["ik_llama.cpp_options"]["flash_attn"] == "on" and "mla" not in ik["ik_llama.cpp_options"]
    assert ik["ik_llama.cpp_note"].startswith("ik_llama.cpp's llama-server: no -rtr (run-time repack)")


def test_an_mla_model_runs_mla_3_under_ik_llama_cpp_and_its_experts_stay_in_ram() -> None:
    """DeepSeek-V2-Lite's experts in RAM, attention on the GPU: the same figures, and ik_llama.cpp's ``-mla 3``."""
    main_run, ik_run = _estimate(*MLA_MOE), _estimate(*MLA_MOE, "--offload-engine", "ik_llama.cpp")
    main_line = f"{V2_LITE} -ngl 28 -c 32768 {EXPERTS_ON_CPU} -np 1 -b 2048 -ub 2048 --no-mmap"
    assert main_run["runtime_settings"]["llama.cpp"] == main_line
    assert (
        ik_run["runtime_settings"]["ik_llama.cpp"]
        == f"{V2_LITE} -ngl 28 -c 32768 -fa on -ctk f16 -ctv f16 -mla 3 {EXPERTS_ON_CPU} -np 1 -b 2048 -ub 2048 --no-mmap"
    )
    assert "cpu-attention" not in main_run["offload"]["seconds_per_token"]  # no layer's attention on the CPU
    assert main_run["throughput"] == ik_run["throughput"]


def test_the_text_says_the_engine_and_prints_its_line() -> None:
    code, text = run_estimate(*LONG, "--offload-engine", "ik_llama.cpp")
    assert code == 0
    assert "  speed        2.17 tokens/s (ddr-bound, cpu-compute); " in text and "; timed for ik_llama.cpp\n" in text
    assert f"\n  ik_llama.cpp {LLAMA_70B} -ngl 40 -c 16300 -fa on -ctk f16 -ctv f16 -np 1 -b 2048 -ub 2048 --no-mmap\n" in text
    assert "\n  llama.cpp    " not in text
    code, text = run_estimate(*LONG)
    assert "; timed for llama.cpp\n" in text
    assert f"\n  llama.cpp    {LLAMA_70B} -ngl 40 -c 16300 -np 1 -b 2048 -ub 2048 --no-mmap\n" in text


@pytest.mark.parametrize("engine", ["ik_llama.cpp", "llama.cpp"])
def test_the_flag_is_refused_where_no_offload_is_planned(engine: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        run_estimate("meta-llama/Llama-3.3-70B-Instruct", "--gpu", "h100-sxm5-80gb", "--offload-engine", engine)
    assert exited.value.code == 2
    assert "--offload-engine describes an existing machine: add --ram-gib (and --gpu for its GPUs)" in capsys.readouterr().err


def test_ktransformers_is_not_an_engine_a_plan_is_made_for(capsys: pytest.CaptureFixture[str]) -> None:
    """It runs attention on the GPU and its path is not timed end to end: neither the flag nor the planner takes it."""
    with pytest.raises(SystemExit) as exited:
        run_estimate(*LONG, "--offload-engine", "ktransformers")
    assert exited.value.code == 2
    assert "invalid choice: 'ktransformers'" in capsys.readouterr().err
    arch = parse_architecture(find_model("meta-llama/Llama-3.3-70B-Instruct").config)
    machine = Machine(1, 24 * GIB, 1008.0, 82.6, 25.0, 64 * GIB, 8 * GIB, 0, 0, 3.5, 83.2)
    with pytest.raises(ValueError, match=re.escape("offload is planned for llama.cpp or ik_llama.cpp, not 'ktransformers'")):
        plan_offload(arch, [weight_format("q4_k_m")], 16, 8192, None, machine, 1000, Constants(), engine="ktransformers")


def _home(tmp_path: Path, engine: str, rps: float = 0.005) -> Path:
    """The home example on ``engine`` at ``rps``, a batch service: its slots are the rate's tokens' (no wait for one)."""
    text = HOME.replace("    cpu: ryzen-9-7950x\n", f"    cpu: ryzen-9-7950x\n    offload_engine: {engine}\n")
    text = text.replace("    inference:\n", "    inference:\n      service_class: batch\n")
    path = tmp_path / "home.yaml"
    path.write_text(re.sub(r"requests_per_second: [0-9.]+", f"requests_per_second: {rps:g}", text))
    return path


def test_the_schema_refuses_an_unknown_engine_at_its_line(tmp_path: Path) -> None:
    path = _home(tmp_path, "ktransformers")
    line = path.read_text().splitlines().index("    offload_engine: ktransformers") + 1
    with pytest.raises((InputError, MultipleInputError)) as refused:
        plan_file(str(path))
    assert str(refused.value).startswith(
        f"{path}:{line}:21: hardware.fixed.offload_engine: 'ktransformers' is not one of llama.cpp, ik_llama.cpp"
    )


def test_a_workload_on_ik_llama_cpp_plans_its_line_and_says_so(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as exited:
        main(["render", str(_home(tmp_path, "ik_llama.cpp")), "-o", str(out)])
    assert exited.value.code == 0
    details = json.loads((out / "spec.json").read_text())["plan"]["deployments"][0]["details"]
    assert details["offload"]["engine"] == "ik_llama.cpp"
    # timed for it: the same machine and model under llama.cpp decode slower (the 40 CPU layers' attention at 90)
    mainline = plan_file(str(_home(tmp_path, "llama.cpp")))[1].to_dict()["deployments"][0]["details"]
    # (2.851, 2.934 and -ngl 45 at -ub 512 until fix135 sized the 4090 at CUDA's 24,210 MiB, not nvidia-smi's 24,564:
    # a layer fewer, and -ub 1024 then costs none; 2.729, 2.809 and -ngl 43 -b 1024 -ub 1024 until review80 items 1-2)
    assert (mainline["decode_tokens_per_s"], details["decode_tokens_per_s"]) == (2.792, 2.874)
    line = details["runtime_settings"]["ik_llama.cpp"]
    assert line == "-ngl 44 -c 8192 -fa on -ctk f16 -ctv f16 -np 1 -b 1024 -ub 1024 --no-mmap"
    spec = (out / "SPEC.md").read_text()
    assert f"\nik_llama.cpp: {line}\n" in spec
    assert "- Decode (ik_llama.cpp): " in spec
    # review 27 item 7: SPEC.md says why the line has no -rtr / -kvu, as spec.json does, and names the engine that
    # keeps the input embedding in RAM
    note = details["runtime_settings"]["ik_llama.cpp_note"]
    assert "no -rtr (run-time repack)" in note and "no -kvu" in note
    assert "\nNote on the ik_llama.cpp line: ik_llama.cpp's llama-server: no -rtr (run-time repack)" in spec
    assert "where ik_llama.cpp keeps it (a lookup)" in spec and "where llama.cpp keeps it" not in spec
    assert any("where ik_llama.cpp keeps it (a lookup)" in d for d in details["offload"]["decisions"])
    assert any("where llama.cpp keeps it (a lookup)" in d for d in mainline["offload"]["decisions"])
    (group,) = (out / "ansible" / "group_vars").glob("home_70b_*.yml")
    (dep,) = ansible_reader().load(group.read_text())["specgen_deployments"]
    assert dep["engine"]["name"] == "ik_llama.cpp"
    assert dep["engine"]["llama_cpp"] == details["runtime_settings"]["ik_llama.cpp_options"]


def test_ik_llama_cpps_slots_each_hold_the_whole_context(tmp_path: Path) -> None:
    """ik_llama.cpp splits ``-c`` over its ``-np`` slots (no ``-kvu``): 2 slots of 8,192 tokens take ``-c 16384``."""
    plan = plan_file(str(_home(tmp_path, "ik_llama.cpp", 0.01)))[1].to_dict()
    settings = plan["deployments"][0]["details"]["runtime_settings"]
    # -ub 512 since fix135 sized the 4090 at CUDA's 24,210 MiB, not nvidia-smi's 24,564: -ub 1024 no longer pays
    assert settings["ik_llama.cpp"] == "-ngl 42 -c 16384 -fa on -ctk f16 -ctv f16 -np 2 --no-mmap"
    assert "kv_unified" not in settings["ik_llama.cpp_options"]
    (said,) = [f for f in plan["findings"] if f["code"] == "parallel-slots"]
    assert "2 ik_llama.cpp server slots (-np 2, each holding 8,192 of a KV cache of 16,384 tokens)" in said["message"]
    arch = parse_architecture(find_model("meta-llama/Llama-3.1-70B-Instruct").config)
    machine = Machine(1, 24 * GIB, 1008.0, 82.6, 25.0, 128 * GIB, 8 * GIB, 0, 2000 * GIB, 7.0, 80.0)
    for engine in ("llama.cpp", "ik_llama.cpp"):
        got = stream_capacity(arch, weight_format("q4_k_m"), 16, 8192, machine, Constants(), 950, 1100, 9.0, engine)
        # mainline's slots share a unified cache of their requests, ik_llama.cpp's each hold the whole context
        tokens = got.streams * 8192 if engine == "ik_llama.cpp" else max(8192, got.streams * 1100)
        assert got.streams > 1 and got.context_tokens == tokens, engine
