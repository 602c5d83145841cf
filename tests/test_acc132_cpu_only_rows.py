"""acc132: the CPU-only estimate (``estimate --ram-gib`` without ``--gpu``) on the calibration rows' machines.

Item 1: a model larger than the RAM was refused on a machine without a GPU ("a model paged from NVMe every token is
not planned without a GPU") while the calibration report predicts such a row: DeepSeek-R1 q2_k on a Ryzen 9 9950X
with 96 GiB and a Crucial T700, memory-mapped (measured 2.13 tokens/s). With ``--nvme-gib`` holding the model file,
``place_on_host`` keeps the last layers in the file on NVMe (``spill_to_nvme``, as an offload's placement and the
report's ``_memory_mapped`` do), and the estimate is the report's figure for the row.

Item 2: the catalog had none of the rows' server and workstation CPUs, so an estimate of them counted VNNI's int8 rate
on Zen 3 and Skylake-SP cores that lack it. With their records, ``--cpu <id>`` gives the report's prediction for the
row run on every core of the part (the catalog's cores; the report's with the row's own thread count can differ).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from generator import catalog
from tests.conftest import REPO, calibration_report
from tests.helpers import run_estimate

CALIBRATION = REPO / "tests" / "data" / "calibration.json"

#: the CPU a row names (``cpu_as_reported``) -> its catalog record
CPU_IDS = {
    "EPYC 7773X": "epyc-7773x",
    "Threadripper PRO 5975WX": "threadripper-pro-5975wx",
    "Threadripper PRO 7965WX": "threadripper-pro-7965wx",
    "Xeon Gold 6138": "xeon-gold-6138",
    "Xeon Gold 6454S": "xeon-gold-6454s",
    "Xeon 6980P": "xeon-6-6980p",
}


def _rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(CALIBRATION.read_text())["offload_decode"]
    return [row for row in rows if row["placement"] == "cpu-only"]


def _cpu_id(row: dict[str, Any]) -> str | None:
    return next((cpu for name, cpu in CPU_IDS.items() if name in row["cpu_as_reported"]), None)


def _row_id(row: dict[str, Any]) -> str:
    return f"{_cpu_id(row)}-{row['engine']}-{row['model'].split('/')[1]}-{row['precision']}-d{row['context_tokens']}"


# --- item 1: larger than the RAM, the rest read from the memory-mapped file on NVMe --------------------------------


def _nvme_row() -> dict[str, Any]:
    return next(row for row in _rows() if "ram_gib" in row)


def _nvme_args(row: dict[str, Any], *nvme: str) -> list[str]:
    args = [row["model"], "--precision", row["precision"], "--ram-gib", str(row["ram_gib"]), "--cpu", row["cpu"]]
    args += ["--ddr-mt-per-s", str(row["ddr_mt_per_s"]), "--context", "2048", *nvme]
    return [*args, "--input-tokens", str(row["context_tokens"]), "--output-tokens", "1", "--offload-engine", row["engine"]]


def test_a_model_past_the_ram_is_read_from_nvme_as_the_report_predicts_the_row() -> None:
    """The 9950X row (96 GiB, the T700's 12.4 GB/s, --nvme-gib of the 2 TB drive): the estimate is the report's
    prediction of the row as current llama.cpp runs it (MLA's cache; the row's January 2025 build cached the
    uncompressed keys, which the report times apart, ``pre_mla_build``). Within 0.5%: the estimate's RAM also holds
    llama.cpp's compute buffer (0.33 GiB at -ub 512), which the report's placement leaves out, so a few MiB more of
    the last layer stay on NVMe."""
    row = _nvme_row()
    nvme = ("--nvme-gib", "1863", "--nvme-read-gb-per-s", str(row["nvme_read_gb_per_s"]))
    code, text = run_estimate(*_nvme_args(row, *nvme), "--json")
    assert code == 0, text
    cpu_only = json.loads(text)["cpu_only"]
    predicted = calibration_report().predict_offload_decode({**row, "pre_mla_build": False})
    assert cpu_only["decode_tokens_per_s"] == pytest.approx(predicted, rel=0.005)
    assert cpu_only["bound"] == "nvme"
    # the layers past the RAM: the file's 227 GiB less what 96 GiB holds beside the reserve, runtime, cache, buffer
    assert 140 * 2**30 < cpu_only["nvme_paged_bytes"] < 160 * 2**30
    assert cpu_only["ram_free_after_reserve_bytes"] >= 0
    code, text = run_estimate(*_nvme_args(row, *nvme))
    assert "of the layers read from the model file on NVMe every token" in text


@pytest.mark.parametrize("nvme", [(), ("--nvme-gib", "200")], ids=["no-nvme", "nvme-short-of-the-file"])
def test_without_an_nvme_holding_the_file_the_model_is_refused(nvme: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    """No --nvme-gib, or less than the 227 GiB file (llama.cpp pages the layers from the file itself): refused as
    before, the NVMe named among the levers."""
    code, text = run_estimate(*_nvme_args(_nvme_row(), *nvme))
    err = capsys.readouterr().err
    assert code == 3, text
    assert "--nvme-gib of at least the model file's 227 GiB" in err
    assert "Traceback" not in err


def test_a_model_the_ram_holds_reads_nothing_from_nvme() -> None:
    """The spill is only past the RAM: the same machine with 256 GiB (4 x 64 GiB, the most its two channels take)
    keeps every layer in RAM."""
    args = _nvme_args(_nvme_row(), "--nvme-gib", "1863")
    args[args.index("--ram-gib") + 1] = "256"
    code, text = run_estimate(*args, "--json")
    assert code == 0, text
    assert json.loads(text)["cpu_only"]["nvme_paged_bytes"] == 0


# --- item 2: the rows' CPUs in the catalog ----------------------------------------------------------------------------


_CATALOG_ROWS = [row for row in _rows() if _cpu_id(row)]


def test_every_cpu_of_the_rows_but_the_cloud_epyc_is_catalogued() -> None:
    """The CPU-only rows' CPUs are in the catalog but the EPYC 9B14 (a cloud SKU with no AMD product page)."""
    named = {row["cpu_as_reported"] for row in _rows() if not _cpu_id(row) and "cpu" not in row}
    assert all("9B14" in name or "Ryzen" in name for name in named), named
    assert {_cpu_id(row) for row in _CATALOG_ROWS} == set(CPU_IDS.values())


@pytest.mark.parametrize("row", _CATALOG_ROWS, ids=_row_id)
def test_the_catalog_record_agrees_with_the_rows_facts(row: dict[str, Any]) -> None:
    """The row's CPU facts the report reads are the record's: its 8-bit dot product, and channels a socket no more
    than the part has (a row's DIMMs may run below its rating: the 7965WX owner's DDR5-4800)."""
    cpu = catalog.cpus()[str(_cpu_id(row))]
    assert row.get("int8_vnni", True) is cpu.int8_vnni
    assert row["memory_channels"] / row["sockets"] <= cpu.memory_channels
    assert row["ddr_mt_per_s"] <= cpu.ddr_mt_per_s


@pytest.mark.parametrize("row", _CATALOG_ROWS, ids=_row_id)
def test_the_estimate_with_the_rows_cpu_is_the_reports_prediction(row: dict[str, Any]) -> None:
    """``--cpu <id>`` (the row's sockets and DDR rate): the report's prediction of the row on every core of the part
    with its ISA (the catalog's), as current llama.cpp runs it (a pre-MLA build's row timed with MLA's cache)."""
    cpu_id = str(_cpu_id(row))
    cpu = catalog.cpus()[cpu_id]
    context = row["context_tokens"]
    args = [row["model"], "--precision", row["precision"], "--ram-gib", str(128 * row["memory_channels"])]
    args += ["--cpu", cpu_id, "--cpu-sockets", str(row["sockets"]), "--ddr-mt-per-s", str(row["ddr_mt_per_s"])]
    args += ["--context", str(max(4096, context + 16)), "--input-tokens", str(max(1, context)), "--output-tokens", "1"]
    args += ["--offload-engine", row["engine"], *(["--kv-precision", "int8"] if row.get("kv_cache_type") == "q8_0" else [])]
    code, text = run_estimate(*args, "--json")
    assert code == 0, text
    estimated = json.loads(text)["cpu_only"]["decode_tokens_per_s"]
    as_run = {**row, "threads": cpu.cores * row["sockets"], "int8_vnni": cpu.int8_vnni, "pre_mla_build": False}
    assert estimated == pytest.approx(calibration_report().predict_offload_decode(as_run), rel=0.005)
