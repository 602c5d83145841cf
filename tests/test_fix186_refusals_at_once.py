"""Every early refusal of a workload is said at once, each at its field, in file order (fix186 item 1).

fix183 made the precision refusals so; the others stopped at the first deployment: two services of Llama-3.1-405B in
bf16 on RTX 4090s were told of the first ("weights alone need 23.8 GiB per GPU"), and once it was fixed, of the
second. The same for two uses of Qwen3-Next that only vLLM serving sizes, and for two deployments on
``hardware.fixed`` it cannot run (training there). ``validate`` (``--together`` too) and ``render`` say them all, and
``render`` writes nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.errors import InfeasibleError, InputError, MultipleInputError
from generator.planner import plan_workload
from generator.planner.early import early_checks
from generator.workload import load_workload
from tests.helpers import call_cli

REPO = Path(__file__).resolve().parents[1]
SERVICE = """\
  - name: {name}
    model: {model}
    inference:
      engine: {engine}
      precision: bf16
      max_context_tokens: 8192
      requests_per_second: 1
"""
BIG = "meta-llama/Llama-3.1-405B-Instruct"
SMALL = "meta-llama/Llama-3.1-8B-Instruct"
NEXT = "Qwen/Qwen3-Next-80B-A3B-Instruct"
TOO_BIG = "its bf16 weights alone need 23.8 GiB per GPU even split TP4 x PP8, more than any allowed GPU can use"


def _write(path: Path, services: list[tuple[str, str, str]], gpus: str = "rtx-4090-24gb") -> Path:
    body = "".join(SERVICE.format(name=n, model=m, engine=e) for n, m, e in services)
    name = path.stem.replace("_", "-")
    path.write_text(f"version: 1\nname: {name}\ndeployments:\n{body}hardware:\n  provider: baremetal\n  gpus: [{gpus}]\n")
    return path


def _two_too_big(tmp_path: Path, name: str = "w") -> Path:
    return _write(tmp_path / f"{name}.yaml", [("a", BIG, "vllm"), ("b", SMALL, "vllm"), ("c", BIG, "vllm")])


def test_two_deployments_too_big_are_both_refused_in_file_order(tmp_path: Path) -> None:
    path = _two_too_big(tmp_path)
    with pytest.raises(MultipleInputError) as caught:
        plan_workload(load_workload(str(path)))
    first, second = caught.value.errors
    assert caught.value.exit_code == InfeasibleError.exit_code
    assert str(first).startswith(f"{path}:5:12: deployments[0].model: deployment 'a' ({BIG}) has no feasible plan: ")
    assert str(second).startswith(f"{path}:19:12: deployments[2].model: deployment 'c' ({BIG}) has no feasible plan: ")
    assert TOO_BIG in str(first) and TOO_BIG in str(second)


def test_one_too_big_is_raised_alone(tmp_path: Path) -> None:
    path = _write(tmp_path / "w.yaml", [("a", SMALL, "vllm"), ("c", BIG, "vllm")])
    with pytest.raises(InfeasibleError, match=r"deployments\[1\]\.model: deployment 'c' "):
        early_checks(load_workload(str(path)))


def test_recurrent_state_refusals_all_at_once(tmp_path: Path) -> None:
    path = _write(tmp_path / "w.yaml", [("a", NEXT, "sglang"), ("b", SMALL, "vllm"), ("c", NEXT, "sglang")], "h200-sxm-141gb")
    with pytest.raises(MultipleInputError) as caught:
        early_checks(load_workload(str(path)))
    assert caught.value.exit_code == InputError.exit_code
    assert [e.location.path for e in caught.value.errors if e.location] == [
        "deployments[0].inference.engine",
        "deployments[2].inference.engine",
    ]


def test_fixed_refusals_all_at_once(tmp_path: Path) -> None:
    text = (REPO / "examples" / "home-70b-offload.yaml").read_text(encoding="utf-8")
    inference = text[text.index("    inference:\n") : text.index("hardware:")]
    training = "    training:\n      method: qlora\n"
    head, tail = text.split("hardware:", 1)
    first = head.replace(inference, training)
    second = first[first.index("  - name:") :].replace("name: ", "name: second-", 1)
    path = tmp_path / "w.yaml"
    path.write_text(f"{first}{second}hardware:{tail}")
    with pytest.raises(MultipleInputError) as caught:
        early_checks(load_workload(str(path)))
    assert caught.value.exit_code == InputError.exit_code
    paths = [e.location.path for e in caught.value.errors if e.location]
    assert paths == ["deployments[0].training", "deployments[1].training"]


def test_cli_validate_together_and_render_say_every_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Item 3: each bad deployment of each file, under ``validate --together`` and ``render`` (which writes nothing)."""
    _two_too_big(tmp_path, "one")
    _write(tmp_path / "two.yaml", [("d", BIG, "vllm"), ("e", BIG, "vllm")])
    for args in (("validate", "--together", "one.yaml", "two.yaml"), ("render", "one.yaml", "two.yaml", "-o", "out")):
        assert call_cli(tmp_path, args) == 3, args
        err = capsys.readouterr().err
        for where in ("one.yaml:5:12", "one.yaml:19:12", "two.yaml:5:12", "two.yaml:12:12"):
            assert f"{where}: deployments[" in err, (args, where, err)
    assert not (tmp_path / "out").exists()
