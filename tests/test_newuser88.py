"""newuser88: a hostile pass over the CPU-only llama.cpp estimate (``--ram-gib`` without ``--gpu``).

Item 1: a server's memory given without its CPU (``--memory-channels 8``, no ``--cpu``) had its RAM capped as the
assumed desktop's: "--ram-gib 2048 is more than the machine assumed without a CPU (like the Intel Core i9-14900K ...
desktop LGA1700) holds: 1 socket(s) x 8 channels x 2 DIMMs a channel x 64 GiB, the largest UDIMM it takes". A desktop
socket has 2 channels and takes unbuffered DIMMs; 8 or 12 channels a socket are a server board's, whose registered
DIMMs go to 256 GiB (an EPYC 7773X with 16 x 128 GB, 2 TB, was refused).

Item 3: ``diff`` refused a spec.json nested too deeply without its line and column, which every other refusal of
a spec.json gives (hostile84): now at the bracket that opens the deepest nesting, its depth said.

Item 2 (a check, no defect): the estimate of a CPU-only machine is the calibration report's prediction for the
calibration rows of CPU-only llama.cpp / ik_llama.cpp decode, given as those rows ran.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.catalog.dimms import RDIMM_SIZES_GIB, UDIMM_SIZES_GIB
from tests.conftest import REPO, calibration_report
from tests.helpers import call_cli, run_estimate

CALIBRATION = REPO / "tests" / "data" / "calibration.json"

MODEL = ("Qwen/Qwen3-30B-A3B", "--precision", "q4_k_m")


#: (channels given over the machine, sockets, RAM GiB, accepted, the DIMM named in the refusal)
#: 8 channels x 2 DIMMs x 256 GiB RDIMM = 4,096 GiB a socket; a desktop's 2 channels x 2 x 64 GiB UDIMM = 256 GiB.
RAM_CASES = [
    (8, 1, 2048, True, ""),
    (8, 1, 2 * 8 * max(RDIMM_SIZES_GIB), True, ""),
    (8, 1, 2 * 8 * max(RDIMM_SIZES_GIB) + 1, False, "RDIMM"),
    (12, 1, 3072, True, ""),
    (24, 2, 6144, True, ""),
    (2, 1, 2 * 2 * max(UDIMM_SIZES_GIB), True, ""),
    (2, 1, 2 * 2 * max(UDIMM_SIZES_GIB) + 1, False, "UDIMM"),  # a desktop's two channels: still its UDIMMs
]


@pytest.mark.parametrize(("channels", "sockets", "ram", "accepted", "dimm"), RAM_CASES)
def test_a_servers_channels_without_its_cpu_take_a_servers_dimms(
    channels: int, sockets: int, ram: int, accepted: bool, dimm: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = (*MODEL, "--ram-gib", str(ram), "--memory-channels", str(channels), "--ddr-mt-per-s", "4800")
    code, text = run_estimate(*args, "--cpu-sockets", str(sockets), "--json")
    if accepted:
        assert code == 0, text
        assert json.loads(text)["cpu_only"]["decode_tokens_per_s"] > 0
    else:
        assert code == 1, text  # an input error, as before
        err = capsys.readouterr().err
        assert f"the largest {dimm} it takes" in err
        assert err.count("\n") == 1 and "Traceback" not in err
        if dimm == "RDIMM":  # the machine said is a server's, not a desktop with 8 channels
            assert "desktop" not in err


def test_a_server_channel_count_with_a_gpu_is_judged_alike() -> None:
    """The same check guards a machine with a GPU: 2 TB over 8 channels beside one RTX 4090 is a workstation's."""
    args = ("--gpu", "rtx-4090-24gb", "--ram-gib", "2048", "--memory-channels", "8", "--ddr-mt-per-s", "3200")
    code, text = run_estimate(*MODEL, *args)
    assert code == 0, text


# --- item 2: the CPU-only estimate is the calibrated model of the CPU-only llama.cpp rows ---------------------------


def _cpu_only_rows() -> list[dict[str, Any]]:
    """The CPU-only decode rows a user can give the estimate as they ran: not a llama.cpp build before its MLA, flash
    attention not turned off, the model file held in RAM (the NVMe row: tests/test_acc132_cpu_only_rows.py)."""
    rows = json.loads(CALIBRATION.read_text())["offload_decode"]
    return [
        row
        for row in rows
        if row["placement"] == "cpu-only"
        and not row.get("pre_mla_build")
        and row.get("flash_attention") is not False
        and "ram_gib" not in row
    ]


def _row_id(row: dict[str, Any]) -> str:
    return f"{row['engine']}-{row['model'].split('/')[1]}-{row['precision']}-ch{row['memory_channels']}-d{row['context_tokens']}"


@pytest.mark.parametrize("row", _cpu_only_rows(), ids=_row_id)
def test_the_cpu_only_estimate_is_the_calibrated_decode_of_the_same_machine(row: dict[str, Any]) -> None:
    """``estimate --ram-gib`` without ``--gpu`` (the row's channels, DDR rate, sockets, engine, cache type; no CPU,
    as the rows' CPUs are not in the catalog) times the decode the calibration report predicts for the row on a CPU
    whose cores keep up (its ``threads`` left out, VNNI assumed, as the estimate says it assumes): the figure a user
    sees is the calibrated model's. The row's own cores and ISA can only slow it (the report's prediction with them)."""
    report = calibration_report()
    context = row["context_tokens"]
    args = [row["model"], "--precision", row["precision"], "--ram-gib", str(128 * row["memory_channels"])]
    args += ["--memory-channels", str(row["memory_channels"]), "--ddr-mt-per-s", str(row["ddr_mt_per_s"])]
    args += ["--cpu-sockets", str(row["sockets"]), "--context", str(max(4096, context + 16))]
    args += ["--input-tokens", str(max(1, context)), "--output-tokens", "1", "--offload-engine", row["engine"]]
    args += ["--kv-precision", "int8"] if row.get("kv_cache_type") == "q8_0" else []
    code, text = run_estimate(*args, "--json")
    assert code == 0, text
    cpu_only = json.loads(text)["cpu_only"]
    assert cpu_only["decode_context_tokens"] == max(1, context)
    unbound = report.predict_offload_decode({**row, "threads": None, "int8_vnni": True})
    assert cpu_only["decode_tokens_per_s"] == pytest.approx(unbound, rel=0.005)
    assert report.predict_offload_decode(row) <= unbound * 1.005


# --- item 3: diff's refusal of a spec.json nested too deeply names its line and column ----------------------------

_PLAN = '{\n  "note": "[[[{{ a text, not nesting",\n  "plan": {\n    "pools": %s\n  }\n}\n'


#: (the text, the line and column of the deepest bracket, the depth said). Every other refusal of a spec.json reads
#: file:line:col (hostile84); this one read "new.json: cannot read spec.json: it is nested too deeply".
DEEP_CASES = [
    pytest.param("[" * 100_000 + "]" * 100_000, 1, 100_000, 100_000, id="top-level"),
    pytest.param("\ufeff" + "[" * 5_000 + "]" * 5_000, 1, 5_001, 5_000, id="bom"),  # the BOM counted on line 1
    pytest.param(_PLAN % ("[" * 50_000 + "]" * 50_000), 4, 14 + 49_999, 50_002, id="in-plan"),
    pytest.param(_PLAN % ("[" * 3_000 + '"]]]"' + "]" * 3_000), 4, 14 + 2_999, 3_002, id="brackets-in-text"),
]


@pytest.mark.parametrize(("text", "line", "column", "depth"), DEEP_CASES)
def test_a_spec_json_nested_too_deeply_is_refused_at_its_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, line: int, column: int, depth: int
) -> None:
    (tmp_path / "old.json").write_text((REPO / "tests" / "golden" / "chat-70b" / "spec.json").read_text())
    (tmp_path / "new.json").write_text(text, encoding="utf-8")
    code = call_cli(tmp_path, ("diff", "old.json", "new.json"))
    err = capsys.readouterr().err
    assert code == 1
    assert err == (
        f"specgen: error: new.json:{line}:{column}: cannot read spec.json: it is nested too deeply "
        f"({depth:,} lists or objects inside each other here; specgen writes a few)\n"
    )
    # the oracle: the character at that line and column opens a bracket
    body = text.lstrip("\ufeff").split("\n")[line - 1]
    assert body[column - 1 - (1 if text.startswith("\ufeff") and line == 1 else 0)] in "[{"


# --- item 4: the estimate's step with activation offload no longer says its copies are not counted -----------------


def test_activation_offloads_copies_are_said_timed_not_left_out() -> None:
    """acc127 timed activation offload's copies in the step ("activation offload 0.000 s exposed of 0.085 s (2.1 GB
    per GPU to host RAM and back ...)"), but the lines under it still read "not counted: the offloaded activations'
    PCIe copies to host RAM and back": the speed line and the caveat contradicted each other."""
    args: tuple[str, ...] = ("meta-llama/Llama-3.1-8B-Instruct", "--train", "full", "--zero", "3", "--gpu", "h100-sxm5-80gb")
    args += ("--gpus", "8", "--seq-len", "8192", "--micro-batch", "1", "--activation-offload")
    code, text = run_estimate(*args)
    assert code == 0, text
    speed = text[text.index("  speed ") :]
    assert "activation offload 0.000 s exposed of 0.085 s" in speed  # the copies are in the step
    assert "PCIe copies" not in text
    code, text = run_estimate(*args, "--json")
    data = json.loads(text)
    speed_json = data["training_speed"]
    assert not any("activations" in said for said in speed_json["not_counted"])
    assert speed_json["step_time"]["activation_offload_copies_s"] == pytest.approx(0.0852)


# --- item 5: estimate --detect times llama.cpp on the cores it measured, where the CPU is not a catalog one ---------


def _cpuinfo(model: str, sockets: int, cores: int) -> str:
    """/proc/cpuinfo of ``sockets`` x ``cores`` physical cores, two threads each."""
    blocks, n = [], 0
    for socket in range(sockets):
        for core in range(cores):
            for _ in range(2):
                blocks.append(f"processor\t: {n}\nmodel name\t: {model}\nphysical id\t: {socket}\ncore id\t\t: {core}\n")
                n += 1
    return "\n".join(blocks)


#: (CPU model in /proc/cpuinfo, sockets, cores a socket, cores llama.cpp's threads are timed on; 0: the catalog CPU's)
#: Before: every CPU the catalog lacks was timed as the assumed desktop's 8 P-cores: a 2-core VM "decoded" Qwen3-8B
#: q4_k_m at 12.18 tokens/s (DDR-bound), where its 2 cores multiply the weights at 4.66.
DETECTED_CORES = [
    ("AMD EPYC", 1, 2, 2),
    ("AMD EPYC", 1, 4, 4),
    # one socket's, as the decode is bound to one node (a Gold 6148: the 6138 is a catalog CPU since acc132)
    ("Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz", 2, 20, 20),
    ("AMD EPYC", 1, 64, 64),
]


@pytest.mark.parametrize(("model", "sockets", "cores", "timed"), DETECTED_CORES)
def test_estimate_detect_times_the_cores_it_measured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: str, sockets: int, cores: int, timed: int
) -> None:
    from generator.calculator import detect

    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "cpuinfo").write_text(_cpuinfo(model, sockets, cores))
    monkeypatch.setattr(detect, "this_machine", lambda: detect.Sources(str(tmp_path), detect.recorded({})))
    monkeypatch.setattr(detect, "parse_meminfo", lambda text: {"MemTotal": 64 * 2**30, "MemAvailable": 60 * 2**30})
    code, text = run_estimate("Qwen/Qwen3-8B", "--precision", "q4_k_m", "--detect", "--json")
    assert code == 0, text
    data = json.loads(text)
    decode = data["cpu_only"]["decode_tokens_per_s"]
    # the oracle: the calibration report's decode of the same machine run on that many threads (its rows' form)
    row = {
        "model": "Qwen/Qwen3-8B", "precision": "q4_k_m", "memory_channels": 2 * sockets, "ddr_mt_per_s": 5600,
        "sockets": sockets, "threads": timed * sockets, "context_tokens": data["cpu_only"]["decode_context_tokens"] - 1,
        "engine": "llama.cpp", "placement": "cpu-only", "gpu": None, "gpus": 0,
    }  # fmt: skip
    assert decode == pytest.approx(calibration_report().predict_offload_decode(row), rel=0.002)
    machine = json.dumps(data)
    assert f"{timed} cores for llama.cpp's threads (one socket's, as given)" in machine
    assert f"--detect took --cpu-cores {timed}: the cores of one socket /proc/cpuinfo counts" in machine
    assert "8 P-cores" not in machine


def test_estimate_detect_keeps_a_catalog_cpus_own_cores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A CPU the catalog knows (its model name matched) keeps its record's cores and ISA: nothing measured replaces it."""
    from generator.calculator import detect

    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "cpuinfo").write_text(_cpuinfo("AMD Ryzen 9 7950X 16-Core Processor", 1, 16))
    monkeypatch.setattr(detect, "this_machine", lambda: detect.Sources(str(tmp_path), detect.recorded({})))
    monkeypatch.setattr(detect, "parse_meminfo", lambda text: {"MemTotal": 64 * 2**30, "MemAvailable": 60 * 2**30})
    code, text = run_estimate("Qwen/Qwen3-8B", "--precision", "q4_k_m", "--detect")
    assert code == 0, text
    assert "(one socket's, as given)" not in text and "--cpu-cores" not in text
    assert "16 cores for llama.cpp's threads" in text


#: (options beside the 2-channel DDR5-5600 machine, tokens/s the calibration report's decode gives on those threads)
CPU_CORES_CASES = [
    pytest.param(("--cpu-cores", "2"), 2, id="2-cores"),
    pytest.param(("--cpu-cores", "6"), 6, id="6-cores"),
    pytest.param((), None, id="memory-alone"),  # channels and rate given, no CPU: no core counted, as before
]


@pytest.mark.parametrize(("extra", "threads"), CPU_CORES_CASES)
def test_cpu_cores_gives_an_uncatalogued_cpus_cores(extra: tuple[str, ...], threads: int | None) -> None:
    """``--cpu-cores``: the cores of a CPU the catalog lacks (every calibration row's server CPU), which the decode was
    timed without (its memory alone) or at the assumed desktop's 8."""
    args = ("Qwen/Qwen3-8B", "--precision", "q4_k_m", "--ram-gib", "64", "--memory-channels", "2", "--ddr-mt-per-s", "5600")
    code, text = run_estimate(*args, "--input-tokens", "1", "--output-tokens", "1", *extra, "--json")
    assert code == 0, text
    row = {
        "model": "Qwen/Qwen3-8B", "precision": "q4_k_m", "memory_channels": 2, "ddr_mt_per_s": 5600, "sockets": 1,
        "threads": threads, "context_tokens": 0, "engine": "llama.cpp", "placement": "cpu-only", "gpu": None, "gpus": 0,
    }  # fmt: skip
    decode = json.loads(text)["cpu_only"]["decode_tokens_per_s"]
    assert decode == pytest.approx(calibration_report().predict_offload_decode(row), rel=0.002)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--cpu", "ryzen-9-7950x", "--cpu-cores", "8"), "--cpu-cores is for a CPU the catalog lacks: --cpu ryzen-9-7950x"),
        (("--cpu-cores", "513"), "--cpu-cores must be a whole number from 1 to 512, got 513"),
    ],
)
def test_cpu_cores_refusals(extra: tuple[str, ...], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = run_estimate("Qwen/Qwen3-8B", "--precision", "q4_k_m", "--ram-gib", "64", *extra)
    assert code == 2
    assert message in capsys.readouterr().err


def test_cpu_cores_needs_a_machine(capsys: pytest.CaptureFixture[str]) -> None:
    """A machine option: without --ram-gib it is a usage error, as --cpu-sockets is."""
    with pytest.raises(SystemExit) as raised:  # parser.error, as every machine option without --ram-gib
        run_estimate("Qwen/Qwen3-8B", "--precision", "q4_k_m", "--gpu", "rtx-4090-24gb", "--cpu-cores", "8")
    assert raised.value.code == 2
    assert "--cpu-cores describes an existing machine: add --ram-gib" in capsys.readouterr().err
