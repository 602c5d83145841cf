"""hostile89: hostile input that broke the rule (a clear error naming file, line and field; no traceback).

- ``specgen calibrate``: a run setting read from a log (``vllm serve ... --gpu-memory-utilization nan``, a TP of 0,
  another model, a value the command contradicts) was refused naming the log but not its line; the error now says
  ``run.log:N:``, as the figure errors of the same logs do.
- ``specgen diff`` of a hand-edited spec.json: a wall circuit of 0 A, at 200% or 0% continuous, or whose
  ``continuous_w`` is not what its volts, amperes and fraction carry (99,999 W beside 230 V / 16 A) was read and said
  as it stood; each is refused at its field, with the workload schema's ranges.
- Ctrl-C while the command line's modules still load (the first few tenths of a second, before a command's own
  handler) printed Python's traceback and exited by SIGINT (-2); it now says ``Aborted!`` and exits 130.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from generator import cli
from generator.errors import InputError
from generator.fleet_diff import load_plan_dict
from generator.wall_circuit_diff import RANGES
from tests.conftest import REPO
from tests.helpers import call_cli
from tests.test_calibrate import calibrate
from tests.test_fix168 import EU10, _office

MODEL = "meta-llama/Llama-3.1-8B-Instruct"
KV = "INFO GPU KV cache size: 432,000 tokens\n"


@pytest.mark.parametrize(
    ("log", "said"),
    [
        pytest.param(
            "start\nvllm serve meta-llama/Llama-3.1-8B-Instruct --gpu-memory-utilization nan\n" + KV,
            "run.log:2: cannot read gpu_memory_utilization 'nan'",
            id="nan-utilization",
        ),
        pytest.param(
            "a\nb\nc\nvllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len=８１９２\n" + KV,
            "run.log:4: cannot read max_model_len '８１９２'",
            id="fullwidth-digits",
        ),
        pytest.param(
            KV + "vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 0\n",
            "run.log:2: the run's tensor_parallel_size 0 (",
            id="tp-0",
        ),
        pytest.param(
            "x\nvllm serve meta-llama/Llama-3.1-8B-Instruct --gpu-memory-utilization 1e-400\n" + KV,
            "run.log:2: the run's gpu_memory_utilization 0.0 (",
            id="underflow",
        ),
        pytest.param(
            "\n\n\nvllm serve meta-llama/Llama-3.1-70B-Instruct\n" + KV,
            "run.log:4: the run served 'meta-llama/Llama-3.1-70B-Instruct'",
            id="another-model",
        ),
    ],
)
def test_a_run_setting_error_names_the_logs_line(tmp_path: Path, log: str, said: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "run.log"
    path.write_text(log, encoding="utf-8")
    code, out = calibrate(MODEL, "--gpu", "h100-sxm5-80gb", "--log", str(path))
    err = capsys.readouterr().err
    assert (code, out) == (1, "")
    assert said in err and "Traceback" not in err


def test_a_contradicted_option_names_the_logs_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "run.log"
    path.write_text("boot\n\nvllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 2048\n" + KV)
    code, _ = calibrate(MODEL, "--gpu", "h100-sxm5-80gb", "--context", "4096", "--log", str(path))
    assert code == 1
    assert "run.log:3: the run used max_model_len 2048 (" in capsys.readouterr().err


def _interrupt(*_: object) -> None:
    raise KeyboardInterrupt


@pytest.mark.parametrize(
    ("argv", "patched"),
    [
        (["render", "w.yaml", "-o", "out"], "_escape_what_the_streams_cannot_encode"),  # the first step of every command
        (["render", "w.yaml", "-o", "out"], "_plan_command"),  # plain_args / collector imports
        (["estimate", MODEL], "_escape_what_the_streams_cannot_encode"),
        (["calibrate", MODEL, "--log", "x"], "_escape_what_the_streams_cannot_encode"),
        (["diff", "a.yaml", "b.yaml"], "_build_cli"),  # click not yet loaded
    ],
)
def test_ctrl_c_before_a_commands_handler_exits_130_without_a_traceback(
    argv: list[str], patched: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli, patched, _interrupt)
    with pytest.raises(SystemExit) as caught:
        cli.main(argv)
    assert caught.value.code == cli.INTERRUPTED == 130
    assert capsys.readouterr().err.strip().startswith("Aborted!")


#: Run ``python -m generator`` with the import of generator.cli interrupted, as Ctrl-C during it does.
_INTERRUPTED_IMPORT = """
import runpy, sys
class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == "generator.cli":
            raise KeyboardInterrupt
        return None
sys.meta_path.insert(0, Interrupt())
sys.argv = ["generator", "--version"]
runpy.run_module("generator", run_name="__main__", alter_sys=True)
"""


def test_ctrl_c_while_python_m_generator_imports_its_cli() -> None:
    done = subprocess.run([sys.executable, "-c", _INTERRUPTED_IMPORT], cwd=REPO, capture_output=True, text=True, check=False)
    assert done.returncode == 130
    assert done.stderr.strip() == "Aborted!"


@pytest.fixture(scope="module")
def office_spec(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The fix168 office tower's spec.json, rendered on a European 230 V / 16 A socket circuit."""
    from tests.test_fix168 import EU16, _rendered_spec

    spec: dict[str, Any] = _rendered_spec(tmp_path_factory.mktemp("office"), EU16)
    return spec


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        ("breaker_a", 0, "'plan.wall_circuit.breaker_a' must be from 1 to 1000, got 0"),
        ("breaker_a", 0.5, "'plan.wall_circuit.breaker_a' must be from 1 to 1000, got 0.5"),  # fix199: 1 A at least
        ("breaker_a", 1001, "'plan.wall_circuit.breaker_a' must be from 1 to 1000, got 1001"),
        ("voltage_v", 99.5, "'plan.wall_circuit.voltage_v' must be from 100 to 1000, got 99.5"),
        ("continuous_load_fraction", 2, "'plan.wall_circuit.continuous_load_fraction' must be more than 0 and at most 1"),
        ("continuous_load_fraction", 0, "'plan.wall_circuit.continuous_load_fraction' must be more than 0 and at most 1"),
        ("continuous_w", 99_999, "'plan.wall_circuit.continuous_w' is 99999, but the circuit it is written beside carries 2,796"),
        ("continuous_w", 2796.5, "'plan.wall_circuit.continuous_w' is 2796.5, but the circuit it is written beside"),
        ("continuous_w", 2796.0, "'plan.wall_circuit.continuous_w' is 2796.0, but the circuit it is written beside"),
        ("breaker_a", 10, "'plan.wall_circuit.continuous_w' is 2796, but the circuit it is written beside carries 1,748 W"),
    ],
)  # fmt: skip
def test_a_hand_edited_wall_circuit_in_spec_json_is_refused_at_its_field(
    tmp_path: Path, office_spec: dict[str, Any], key: str, value: float, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: each was read, and ``diff`` said "230 V / 0 A at 80% continuous: 2,796 W" or "at 200%", exit 0."""
    spec = copy.deepcopy(office_spec)
    spec["plan"]["wall_circuit"][key] = value
    (tmp_path / "bad.json").write_text(json.dumps(spec, indent=2))
    with pytest.raises(InputError, match=r"bad.json:\d+:\d+: not a specgen spec.json: ") as caught:
        load_plan_dict(str(tmp_path / "bad.json"))
    assert said in str(caught.value)
    (tmp_path / "new.yaml").write_text(_office(EU10))
    capsys.readouterr()
    assert call_cli(tmp_path, ("diff", "bad.json", "new.yaml")) == 1
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err


def test_the_spec_json_wall_circuit_ranges_are_the_workload_schemas() -> None:
    schema = json.loads((REPO / "schemas" / "workload.schema.json").read_text())
    fields = schema["properties"]["hardware"]["properties"]["wall_circuit"]["properties"]
    for key, (least, most, open_least) in RANGES.items():
        field = fields[key]
        assert field["maximum"] == most
        assert field["exclusiveMinimum" if open_least else "minimum"] == least


@pytest.mark.parametrize(
    ("options", "said"),
    [
        # before: "...; for a CPU the catalog lacks give --cpu-cores, ..." to a user who gave --cpu-cores
        (
            ("--cpu-cores", "2", "--threads", "3"),
            "--threads needs --cpu (the catalog CPU whose cores the threads run on); --cpu-cores 2 (a CPU the catalog "
            "lacks) already gives the cores of one socket llama.cpp's threads run on: leave --threads out",
        ),
        (
            ("--threads", "3"),
            "--threads needs --cpu (the catalog CPU whose cores the threads run on); for a CPU the catalog lacks give "
            "--cpu-cores, the cores of one socket llama.cpp's threads run on",
        ),
    ],
)
def test_threads_without_a_catalog_cpu_says_what_to_give(
    options: tuple[str, ...], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from generator.calculator.cli import main as estimate_main

    assert estimate_main([MODEL, "--ram-gib", "64", *options]) == 2
    assert capsys.readouterr().err.strip().endswith(said)


@pytest.mark.parametrize("logs", [("",), ("  ",), (str(REPO / "README.md"), "")])
def test_an_empty_log_name_is_a_usage_error(logs: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    """Before: ``--log ''`` read "error: : log not found", exit 1 (as ``-o ''``, hostile88 item 4)."""
    argv = [MODEL, "--gpu", "h100-sxm5-80gb"] + [a for log in logs for a in ("--log", log)]
    with pytest.raises(SystemExit) as caught:
        calibrate(*argv)
    assert caught.value.code == 2
    assert capsys.readouterr().err.strip().endswith("specgen calibrate: error: --log is empty: name the run's log file")


@pytest.mark.parametrize(
    ("target", "command"),
    [("nowhere", ("render",)), ("/nonexistent/deep", ("render",)), ("nowhere", ("render", "--check"))],
)
def test_a_dangling_symlink_as_the_output_says_so(
    tmp_path: Path, target: str, command: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: "output path out exists and is not a directory" of a link to nothing."""
    (tmp_path / "w.yaml").write_text(_office(EU10))
    (tmp_path / "out").symlink_to(target)
    assert call_cli(tmp_path, (*command, "w.yaml", "-o", "out")) == 1
    err = capsys.readouterr().err
    assert f"output path out is a symbolic link to {target!r}, which does not exist" in err
    assert (tmp_path / "out").is_symlink() and sorted(p.name for p in tmp_path.iterdir()) == ["out", "w.yaml"]


@pytest.mark.parametrize(
    ("plan", "kind"),
    [("null", "null"), ("true", "a boolean"), ("1.5", "a number"), ('"x"', "a string"), ("[]", "a list")],
)
def test_a_spec_json_plan_not_an_object_is_named_in_jsons_words(tmp_path: Path, plan: str, kind: str) -> None:
    """Before: "'plan' must be an object, got NoneType" (Python's name) of ``{"plan": null}``."""
    (tmp_path / "s.json").write_text('{"plan": ' + plan + "}")
    with pytest.raises(InputError) as caught:
        load_plan_dict(str(tmp_path / "s.json"))
    assert str(caught.value).endswith(f"s.json:1:10: not a specgen spec.json: 'plan' must be an object, got {kind}")
