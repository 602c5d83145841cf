"""fuzz31 hostile inputs: YAML numbers, nvidia-smi CSV encodings, units and quotes, detect's PCIe links, Secret names,
the library's path errors, a calibrate log's settings and LoRA on the input embedding (items 4, 5, 7-10, 13-16)."""

from __future__ import annotations

import contextlib
import io
import math
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.calculator.detect import Sources, detect_machine, fixed_block, recorded
from generator.errors import InputError
from generator.workload import loader
from generator.workload.fast_yaml import read_plain_document
from tests.conftest import REPO
from tests.helpers import PYYAML, VALID, specgen_in_process

RPS = "requests_per_second: 2"
FIELD = "workload.yaml:8:28: deployments[0].inference.requests_per_second: "


def _load(text: str) -> Any:
    return loader.parse_yaml(text, "workload.yaml").data


def _refusal(value: str) -> str:
    from generator.workload import load_document

    text = VALID.replace(RPS, f"requests_per_second: {value}")
    with pytest.raises(InputError) as caught:
        load_document(loader.parse_yaml(text, "workload.yaml"), "workload.yaml")
    return str(caught.value)


# -- items 4 and 10: numbers YAML 1.1 and YAML 1.2 read differently --------------------------------------------------


@pytest.mark.parametrize(
    ("value", "said"),
    [
        # item 4: a typo of 1.0 planned ten times the replicas; 8_192 (an int) was already refused with these words
        pytest.param("1_0.0", "a number written with digit separators is read as 10.0 by YAML 1.1 but as text by YAML 1.2 "
                     "(editors, JSON Schema tools): write it in plain digits", id="float-separators"),
        pytest.param("1__0.0", "with digit separators is read as 10.0 by YAML 1.1", id="float-double-separator"),
        pytest.param("1_000.5", "with digit separators is read as 1,000.5 by YAML 1.1", id="float-thousands"),
        pytest.param("8_192", "with digit separators is read as 8,192 by YAML 1.1", id="int-separators"),
        # ruamel keeps no mark of these separators (1_ is a plain int to it): read from the text
        pytest.param("2_", "with digit separators is read as 2 by YAML 1.1", id="int-trailing-separator"),
        pytest.param("0x2_", "with digit separators is read as 2 by YAML 1.1", id="hex-trailing-separator"),
        # item 10: PyYAML and Ansible read these as text (a float needs a point, an exponent its sign)
        pytest.param("1e3", "a number written as 1e3 is read as 1,000.0 by YAML 1.2 but as text by YAML 1.1 "
                     "(PyYAML, Ansible): write it in plain digits", id="exponent-without-point"),
        pytest.param("1E1", "a number written as 1E1 is read as 10.0 by YAML 1.2 but as text by YAML 1.1", id="upper-e"),
        pytest.param("1.0e3", "a number written as 1.0e3 is read as 1,000.0 by YAML 1.2 but as text", id="unsigned-exponent"),
        pytest.param("-.5", "a number written as -.5 is read as -0.5 by YAML 1.2 but as text by YAML 1.1", id="signed-point"),
        # ruamel reads .5e1 as text like YAML 1.1; YAML 1.2 (an editor) reads 5.0: it was "expected number, got string"
        pytest.param(".5e1", "a number written as .5e1 is read as 5.0 by YAML 1.2 but as text by YAML 1.1 (PyYAML, "
                     "Ansible): write it in plain digits", id="point-unsigned-exponent"),
        # out of range: said as written, not as "inf" or "0.0"
        pytest.param("1e400", "1e400 is too large for a number (it reads as infinity)", id="overflow"),
        pytest.param("1.0e+400", "1.0e+400 is too large for a number (it reads as infinity)", id="overflow-signed"),
        pytest.param("1" + "0" * 400 + ".0", "1" + "0" * 23 + "..." + "0" * 10 + ".0 (403 characters) is too large for a "
                     "number", id="overflow-digits"),
        pytest.param("1e-400", "1e-400 is too small for a number (it reads as 0)", id="underflow"),
        pytest.param("0." + "0" * 400 + "1", "is too small for a number (it reads as 0)", id="underflow-digits"),
        pytest.param(".inf", "inf is not a finite number", id="infinity"),
        pytest.param("~", "expected number, got null", id="null-said-once"),
    ],
)  # fmt: skip
def test_a_number_read_differently_or_out_of_range_is_refused_at_its_field(value: str, said: str) -> None:
    error = _refusal(value)
    assert error.startswith(FIELD), error
    assert said in error
    assert "None" not in error


@pytest.mark.parametrize(
    ("value", "number"),
    [("1.5", 1.5), ("1.0e+3", 1000.0), ("1.0e-6", 1e-6), (".5", 0.5), (".5e+1", 5.0), ("1.", 1.0), ("!!float 1e3", 1000.0),
     ("!!float 5", 5.0), ("0.0", 0.0), ("-0.0", -0.0)],
)  # fmt: skip
def test_a_number_every_yaml_version_reads_alike_is_read(value: str, number: float) -> None:
    assert _load(f"a: {value}\n")["a"] == number


def test_quoted_or_tagged_text_is_text_not_a_misread_number() -> None:
    assert _load("a: '.5e1'\nb: !!str 1e3\nc: \"1_0.0\"\n") == {"a": ".5e1", "b": "1e3", "c": "1_0.0"}


def test_a_sign_or_point_with_separators_and_no_digit_is_text_not_a_traceback() -> None:
    """Found by the property below: ruamel's resolver took '+_' for an int and its constructor raised IndexError (a
    traceback through the CLI), '._' a float and raised ValueError; YAML 1.1 and 1.2 read both as text."""
    assert _load("a: +_\nb: -__\nc: ._\nd: +._\n") == {"a": "+_", "b": "-__", "c": "._", "d": "+._"}


#: YAML 1.2's core schema (https://yaml.org/spec/1.2.2/#1023-core-schema): ints and floats, written out here.
_CORE_INT = re.compile(r"[-+]?[0-9]+")
_CORE_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_NUMBER_TEXT = st.text(alphabet="0123456789._eE+-", min_size=1, max_size=10)


def _core_12(text: str) -> Any:
    """What a YAML 1.2 core-schema reader makes of a plain scalar of digits, points, signs and exponents."""
    if _CORE_INT.fullmatch(text):
        return int(text)
    if _CORE_FLOAT.fullmatch(text):
        return float(text)
    return text


@settings(max_examples=400, deadline=None)
@given(_NUMBER_TEXT)
def test_a_plain_number_is_read_as_yaml_1_1_and_1_2_both_read_it_or_refused(text: str) -> None:
    """The oracles: PyYAML (YAML 1.1, as Ansible reads the group vars) and the YAML 1.2 core schema (editors)."""
    document = f"a: {text}\n"
    try:
        old = PYYAML.safe_load(document)["a"]
    except Exception:
        return
    try:
        ours = _load(document)["a"]
    except InputError as exc:
        said = str(exc)
        assert "by YAML 1." in said or "for a number" in said or "not a finite number" in said or "digits a number" in said, said
        return
    new = _core_12(text)
    if isinstance(ours, str):  # text to specgen: text to both, or refused above
        assert ours == old == new == text
        return
    assert type(ours) is type(old) is type(new), (text, ours, old, new)
    assert ours == old == new or (math.isnan(ours) and math.isnan(old))


@pytest.mark.parametrize(
    "value", ["1_0.0", "1e3", ".5e1", "-.5", "1e400", "1" + "0" * 400 + ".0", "1e-400", "0." + "0" * 400 + "1"]
)
def test_the_fast_readers_leave_these_numbers_to_ruamel(value: str) -> None:
    """The libyaml and line readers would read 1e400-long digit strings as inf (a float() of them): they decline."""
    assert read_plain_document(f"a: {value}\n", loader.MAX_NODES) is None


def test_set_a_constant_too_large_for_a_number_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = specgen_in_process(capsys, "estimate", "meta-llama/Llama-3.1-8B-Instruct", "--set", "non_torch_bytes=1e400")
    assert code == 2
    assert "value of 'non_torch_bytes': '1e400' is too large for a number (it reads as infinity)" in err


def test_a_constants_block_calibrate_writes_is_read_alike_by_every_yaml_reader() -> None:
    """The block is pasted into a workload: json.dumps' 1e-05 is text to YAML 1.1 and now refused by the loader."""
    from generator.calculator.calibrate import constants_block

    values = {"non_torch_bytes": 2052063232.0, "decode_bandwidth_efficiency": 1e-05, "gemm_half_efficiency_tokens": 1e16}
    block = constants_block(values)
    assert "  decode_bandwidth_efficiency: 1.0e-05\n" in block and "  gemm_half_efficiency_tokens: 1.0e+16\n" in block
    assert _load(block)["constants"] == PYYAML.safe_load(block)["constants"] == values


# -- items 5 and 8: nvidia-smi CSV -----------------------------------------------------------------------------------

SETUP = ("meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100-sxm5-80gb")
SMI = "memory.used [MiB], memory.total [MiB]\r\n17000 MiB, 81559 MiB\r\n"


def _calibrate(tmp_path: Path, data: bytes) -> tuple[int, str, str]:
    from generator.calculator.calibrate import main

    log = tmp_path / "smi.csv"
    log.write_bytes(data)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([*SETUP, "--log", str(log)])
    return code, out.getvalue(), err.getvalue()


def _used_gib(out: str) -> float:
    (row,) = [line.split() for line in out.splitlines() if line.startswith("gpu_memory_used_gib")]
    return float(row[1])


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(SMI.encode("utf-16"), id="utf-16-bom"),  # PowerShell 5's '>' writes this
        pytest.param(b"\xfe\xff" + SMI.encode("utf-16-be"), id="utf-16-be-bom"),
        pytest.param(b"\xef\xbb\xbf" + SMI.encode(), id="utf-8-bom"),
        pytest.param(SMI.encode(), id="utf-8"),
    ],
)
def test_a_utf16_nvidia_smi_csv_is_read_as_its_utf8_copy(tmp_path: Path, data: bytes) -> None:
    """fuzz31 item 5: PowerShell's UTF-16 CSV was "no ... figure found"."""
    code, out, err = _calibrate(tmp_path, data)
    assert code == 0, err
    assert _used_gib(out) == pytest.approx(17000 / 1024, abs=0.01)


def test_utf16_without_a_byte_order_mark_is_refused_saying_how_to_resave(tmp_path: Path) -> None:
    code, _, err = _calibrate(tmp_path, SMI.encode("utf-16-le"))
    assert code == 1
    assert "smi.csv: log is not UTF-8 text: NUL bytes between its characters (UTF-16 without a byte-order mark?): save " in err
    assert "Out-File -Encoding utf8" in err


@pytest.mark.parametrize(
    ("text", "gib"),
    [
        # item 8: the header's [GiB] was ignored and 17 read as MiB (0.02 GiB)
        pytest.param("memory.used [GiB]\n17\n", 17.0, id="gib-column"),
        pytest.param("memory.used [MiB]\n17408\n", 17.0, id="mib-column-nounits"),
        pytest.param("memory.used [MB]\n18253.611008\n", 17.0, id="si-megabytes"),
        pytest.param("memory.used\n17 GiB\n", 17.0, id="unit-in-the-cell-only"),
        # a quoted name holding a comma moved the columns: its "80GB HBM3" was read as 80 MiB used
        pytest.param('name, memory.used [MiB]\n"NVIDIA H100, 80GB HBM3", 17408 MiB\n', 17.0, id="quoted-comma"),
        pytest.param("memory.used [MiB]\n[N/A]\n17408 MiB\n", 17.0, id="n-a-row-skipped"),
        pytest.param("memory.used [MiB]\n17408 MiB\nmemory.used [MiB]\n17408 MiB\n", 17.0, id="header-repeated"),
    ],
)
def test_nvidia_smi_csv_units_come_from_the_header_or_cell_and_quotes_are_respected(
    tmp_path: Path, text: str, gib: float
) -> None:
    code, out, err = _calibrate(tmp_path, text.encode())
    assert code == 0, err
    assert _used_gib(out) == pytest.approx(gib, abs=0.01)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        pytest.param("memory.used [Gb]\n17\n", "smi.csv:1: unknown unit [Gb] in the column 'memory.used [Gb]'",
                     id="unknown-unit"),
        pytest.param("memory.used [MiB]\n17 GiB\n", "smi.csv:2: '17 GiB' is in GiB, its column in MiB", id="units-disagree"),
        pytest.param("memory.used\n17000\n", "smi.csv:2: '17000' gives no unit and neither does its column", id="no-unit"),
        pytest.param("name, memory.used [MiB]\nNVIDIA H100, 80GB HBM3, 17000 MiB\n",
                     "smi.csv:2: 3 cells where the header has 2 (a comma inside a cell needs quotes)", id="unquoted-comma"),
        pytest.param("memory.used [MiB], memory.total [GiB]\n90000 MiB, 80 GiB\n",
                     "smi.csv:2: 90,000 MiB used of a 81,920 MiB GPU", id="above-total-across-units"),
    ],
)  # fmt: skip
def test_nvidia_smi_csv_a_unit_or_row_it_cannot_read_is_refused_at_its_line(tmp_path: Path, text: str, said: str) -> None:
    code, out, err = _calibrate(tmp_path, text.encode())
    assert (code, out) == (1, "")
    assert said in err and "Traceback" not in err


# -- items 7 and 14: detect's PCIe links -----------------------------------------------------------------------------


def _detect(tmp_path: Path, smi: str) -> tuple[dict[str, Any], str]:
    (tmp_path / "proc").mkdir(exist_ok=True)
    facts = detect_machine(Sources(str(tmp_path), recorded({"nvidia-smi": smi})))
    return {k: f.value for k, f in facts.items()}, fixed_block(facts)


def test_mixed_gpus_take_the_link_of_the_gpus_described(tmp_path: Path) -> None:
    """fuzz31 item 7: the H100 described sits on Gen5 x16; the RTX 4090 left out, on Gen4 x8, set both figures."""
    facts, block = _detect(tmp_path, "0, NVIDIA H100 80GB HBM3, 81559, 5, 16\n1, NVIDIA GeForce RTX 4090, 24564, 4, 8\n")
    assert (facts["gpu"], facts["gpu_count"], facts["pcie_gen"], facts["pcie_lanes"]) == ("h100-sxm5-80gb", 1, 5, 16)
    assert "pcie_gen: 5               # measured: nvidia-smi pcie.link.gen.max, slowest link of the 1 GPU(s) described" in block


@pytest.mark.parametrize(
    ("row", "written", "comments"),
    [
        # item 14: Gen99 was written as Gen6 ("the newest taken"), a width of 3 dropped without a word
        pytest.param("99, 3", {}, ["# pcie_gen not written: Gen99 (", "no PCIe generation a GPU links at (Gen1 to Gen6)",
                                   "# pcie_lanes not written: x3 (", "no PCIe link is that wide"], id="gen99-x3"),
        pytest.param("0, 16", {"pcie_lanes": 16}, ["# pcie_gen not written: Gen0 ("], id="gen0"),
        pytest.param("5, 0", {"pcie_gen": 5}, ["# pcie_lanes not written: x0 ("], id="width0"),
        # a width PCIe has but hardware.fixed does not take: the nearest below, said
        pytest.param("5, 2", {"pcie_gen": 5, "pcie_lanes": 1}, ["(x2); written as x1, the nearest below it"], id="x2"),
        pytest.param("4, 12", {"pcie_gen": 4, "pcie_lanes": 8}, ["(x12); written as x8"], id="x12"),
        pytest.param("6, 16", {"pcie_gen": 6, "pcie_lanes": 16}, [], id="gen6-x16"),
    ],
)  # fmt: skip
def test_an_impossible_pcie_reading_is_left_out_with_a_comment(
    tmp_path: Path, row: str, written: dict[str, int], comments: list[str]
) -> None:
    facts, block = _detect(tmp_path, f"0, NVIDIA H100 80GB HBM3, 81559, {row}\n")
    assert {k: facts[k] for k in ("pcie_gen", "pcie_lanes") if k in facts} == written
    for comment in comments:
        assert comment in block, block


# -- item 9: Kubernetes Secret names ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["a..b", "a.-b", "a-.b", ".a", "a.", "-a", "A", "a_b", "a" * 254])
@pytest.mark.parametrize(
    ("example", "field", "where"),
    [
        ("colo-airgap.yaml", "image_pull_secret: colo-registry", "mirrors.image_pull_secret"),
        ("chat-70b-metal3.yaml", "bmc_credentials_secret: gpu-a01-bmc", "hardware.inventory[0].hosts[0].bmc_credentials_secret"),
    ],
)
def test_a_secret_name_kubernetes_refuses_is_refused_at_its_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], example: str, field: str, where: str, name: str
) -> None:
    """fuzz31 item 9: 'a..b' passed the schema; kubectl refuses it, so the pods could never pull."""
    text = (REPO / "examples" / example).read_text()
    key = field.split(":", maxsplit=1)[0]
    path = tmp_path / example
    path.write_text(text.replace(field, f"{key}: {name}"))
    code, _, err = specgen_in_process(capsys, "validate", str(path))
    assert code == 1
    line = text[: text.index(field)].count("\n") + 1
    assert f"{path}:{line}:" in err and f": {where}: " in err
    assert "is not a Kubernetes Secret name" in err or "is longer than 253 characters" in err


@pytest.mark.parametrize("name", ["a.b", "a-b.c-d", "registry.example.com", "0-0", "a" * 253])
def test_a_dns_1123_subdomain_secret_name_is_taken(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    path = tmp_path / "w.yaml"
    path.write_text((REPO / "examples" / "colo-airgap.yaml").read_text().replace("colo-registry", name, 1))
    code, _, err = specgen_in_process(capsys, "validate", str(path))
    assert code == 0, err


# -- item 13: the library's errors are the CLI's ---------------------------------------------------------------------


def test_library_paths_with_nul_or_given_twice_raise_the_input_errors_the_cli_prints(tmp_path: Path) -> None:
    from generator import api

    workload = tmp_path / "base.yaml"
    workload.write_text(VALID)
    with pytest.raises(InputError, match=r"the file path holds a NUL character, which no file name may hold") as nul:
        api.plan_file(str(tmp_path / "base\0.yaml"))
    assert nul.value.exit_code == 1
    with pytest.raises(InputError, match=r"the file path holds a NUL character"):
        api.render_files([str(tmp_path / "a\0.yaml"), str(workload)])
    for twice in ([str(workload), str(workload)], [str(workload), str(tmp_path / "." / "base.yaml")]):
        with pytest.raises(InputError, match=r"base.yaml and .*base.yaml are the same file; give each workload once"):
            api.render_files(twice)


# -- item 15: a log's setting the model does not take ----------------------------------------------------------------


def test_a_tensor_parallel_size_from_the_log_is_blamed_on_the_log_line(tmp_path: Path) -> None:
    """fuzz31 item 15: "--tp 3 does not divide ..." named an option never typed, and no file or line."""
    from generator.calculator.calibrate import main

    log = tmp_path / "v3.log"
    log.write_text(
        "INFO starting\nvllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 3\n"
        "INFO Loading model weights took 14.99 GiB\n"
    )
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main([*SETUP, "--log", str(log)])
    assert code == 1
    assert err.getvalue() == (
        f"specgen calibrate: error: {log}:2: the run's tensor_parallel_size 3 does not divide the model's 32 attention heads\n"
    )


# -- item 16: LoRA on the input embedding ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("targets", "params"),
    [
        # Llama-3.1-8B: vocabulary 128,256, hidden 4,096; rank 16. PEFT's LoRA Embedding: A r x vocab, B hidden x r
        (("embed_tokens",), 16 * 128_256 + 4_096 * 16),  # 2,117,632
        (("model.embed_tokens",), 16 * (128_256 + 4_096)),
        # lm_head, an nn.Linear(hidden, vocab): A r x hidden, B vocab x r, the same count
        (("lm_head",), 16 * (4_096 + 128_256)),
        # q_proj: 4,096 -> 4,096 in each of 32 layers, plus the embedding's
        (("q_proj", "embed_tokens"), 32 * 16 * (4_096 + 4_096) + 2_117_632),
    ],
)
def test_lora_on_the_input_embedding_is_sized_as_peft_builds_it(targets: tuple[str, ...], params: int) -> None:
    """fuzz31 item 16: embed_tokens was refused ("match no linear layer"); PEFT adapts nn.Embedding targets."""
    from generator.catalog import find_model
    from generator.sizing.architecture import parse_architecture
    from generator.sizing.training import lora_params

    arch = parse_architecture(find_model("meta-llama/Llama-3.1-8B-Instruct").config)
    assert (arch.vocab_size, arch.hidden_size) == (128_256, 4_096)
    assert lora_params(arch, 16, targets) == params


def test_lora_embed_tokens_through_estimate_and_refusals(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.helpers import estimate_json

    args = ("meta-llama/Llama-3.1-8B-Instruct", "--train", "lora", "--lora-targets", "embed_tokens", "--gpu", "h100-sxm5-80gb")
    assert estimate_json(*args)["params"]["trainable"] == 2_117_632
    code, _, err = specgen_in_process(capsys, "estimate", *args[:-2], "--lora-targets", "layers.embed_tokens")
    assert code == 1 and "'layers.embed_tokens': the input embedding is model.embed_tokens" in err
    code, _, err = specgen_in_process(capsys, "estimate", *args, "--framework", "torchtune")
    assert code == 1 and "torchtune applies LoRA to no embedding" in err


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__]))
