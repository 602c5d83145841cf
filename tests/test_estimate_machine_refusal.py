"""review70 items 1 and 2: a model that cannot run on the machine given (exit 3) still prints its breakdown, and says why."""

from __future__ import annotations

import json

import pytest

from generator.calculator.cli import main as estimate_main

REFUSED = (
    ("meta-llama/Llama-3.1-70B-Instruct", "--gpu", "rtx-4090", "--ram-gib", "16"),
    ("deepseek-ai/DeepSeek-R1", "--gpu", "rtx-4090", "--ram-gib", "64"),
)


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = estimate_main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("args", REFUSED, ids=["llama-70b", "deepseek-r1"])
def test_a_machine_that_cannot_run_the_model_prints_its_json(capsys: pytest.CaptureFixture[str], args: tuple[str, ...]) -> None:
    code, out, err = _run(capsys, *args, "--json")
    assert code == 3
    assert err.startswith("specgen estimate: error: the model cannot run on this machine: ")
    data = json.loads(out)  # stdout was empty
    off = data["offload"]
    assert off["fits"] is False and off["blocked_by"] in err and off["unblock"].startswith("to unblock: ")
    assert data["memory"]["placed"] is False and data["memory"]["per_gpu"]["total"] > 0
    # the keys a fitting machine's document has where they exist on a refusal
    code, fitting, _ = _run(capsys, "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "rtx-4090", "--ram-gib", "64", "--json")
    fit = json.loads(fitting)
    assert code == 0 and fit["offload"]["fits"] is True and fit["memory"]["placed"] is True
    assert set(data) <= set(fit)
    assert data["machine"].keys() == fit["machine"].keys()
    assert {"engine", "precision", "context_tokens"} <= off.keys() & fit["offload"].keys()


def test_a_machine_that_cannot_run_the_model_prints_its_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, *REFUSED[0])
    assert code == 3 and "cannot run on this machine" in err
    assert "  per GPU        bytes            GiB" in out
    assert "  placement    none: the model cannot run on this machine: 16 GiB of system RAM" in out
    assert "\n  to unblock: " in out and "\n  machine      " in out


def test_a_host_short_of_ram_with_nothing_offloaded_says_what_it_needs(capsys: pytest.CaptureFixture[str]) -> None:
    """review70 item 2: "no room for the offloaded weights" where nothing was offloaded, 8.5 GiB said as 8."""
    code, _, err = _run(capsys, "mistralai/Mixtral-8x7B-Instruct-v0.1", "--gpu", "b200-sxm-180gb", "--ram-gib", "8.5")
    assert code == 3
    assert (
        "8.5 GiB of system RAM is less than the 10.24 GiB the host needs beside the GPUs (8.00 GiB reserved for other "
        "services, 2.00 GiB for the runtime, 0.24 GiB of input embedding (llama.cpp keeps it in RAM)); the weights fit the "
        "GPUs; to unblock: more system RAM, or a smaller reserve for other services"
    ) in err
    assert "offloaded weights" not in err and "lower precision" not in err and "NVMe" not in err
    # 10.25 GiB holds it: the figure named is the one that is needed
    assert _run(capsys, "mistralai/Mixtral-8x7B-Instruct-v0.1", "--gpu", "b200-sxm-180gb", "--ram-gib", "10.25")[0] == 0


def test_a_host_short_of_ram_beside_an_offload_names_every_part(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, *REFUSED[0])
    assert code == 3
    # 16.55 / 1.05 GiB until review80 items 1-2 (no 5% margin beside the offloaded layers: one more layer's KV on the GPU)
    assert (
        "16 GiB of system RAM is less than the 16.54 GiB the host needs beside the GPUs (8.00 GiB reserved for other "
        "services, 2.00 GiB for the runtime, 1.96 GiB of input embedding (llama.cpp keeps it in RAM), 1.96 GiB of output "
        "layer (on the CPU with the first layer), 1.59 GiB staging an offloaded layer, 1.03 GiB of KV cache for the layers "
        "off the GPU at 4,096 tokens); to unblock: allow a lower precision"
    ) in err


@pytest.mark.parametrize(
    ("ram", "said"), [("0.001", "0.001"), ("0.004", "0.004"), ("0.005", "0.005"), ("0.02", "0.02"), ("1.5", "1.5")]
)
def test_a_tiny_ram_is_said_as_given(capsys: pytest.CaptureFixture[str], ram: str, said: str) -> None:
    """hostile82 item 3: ``ram_gib: 0.001`` (hardware.fixed, or --ram-gib) was said as "0 GiB of system RAM"."""
    args = ("--ram-gib", ram, "--reserved-ram-gib", "0")
    code, _, err = _run(capsys, "mistralai/Mixtral-8x7B-Instruct-v0.1", "--gpu", "b200-sxm-180gb", *args)
    assert code == 3
    assert f"{said} GiB of system RAM is less than the " in err, err
