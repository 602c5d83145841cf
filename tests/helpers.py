"""Helpers shared by several test modules: running the command line, and YAML readers that accept ``!unsafe``."""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from generator.calculator.cli import main as estimate_main
from generator.cli import main
from generator.errors import InputError, MultipleInputError
from generator.workload import load_workload
from tests.conftest import REPO

PYYAML: Any = importlib.import_module("yaml")

#: A small valid workload: one inference deployment on L40S GPUs.
VALID = """\
version: 1
name: demo
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference:
      max_context_tokens: 8192
      requests_per_second: 2
hardware:
  gpus: [l40s-48gb]
"""


def load_errors(path: Path) -> list[str]:
    """The located errors loading the workload at ``path`` gives, one message each; none where it loads."""
    try:
        load_workload(str(path))
    except MultipleInputError as exc:
        return [str(e) for e in exc.errors]
    except InputError as exc:
        return [str(exc)]
    return []


def newuser39_services(moe_average: str | None = None) -> str:
    """The start of newuser39's workloads (a FinOps lead's, buy into a colo rack against rent over 36 months).

    ``version``, ``name`` and ``deployments:`` with its two services: a 70B chat at 10 req/s and a MoE peaking at 30 req/s
    of 400 output tokens. A test adds its own deployments and ``hardware:``. ``moe_average``: the MoE's
    ``average_requests_per_second`` as written (None: none), on line 22.
    """
    average = "" if moe_average is None else f"\n      average_requests_per_second: {moe_average}"
    return f"""\
version: 1
name: finops
deployments:
  - name: chat70
    model: meta-llama/Llama-3.1-70B-Instruct
    inference:
      precision: fp8
      kv_cache_precision: fp8
      max_context_tokens: 16384
      avg_input_tokens: 1500
      avg_output_tokens: 300
      requests_per_second: 10
      slo: {{ttft_p95_ms: 2000, tpot_ms: 50}}
  - name: moe
    model: Qwen/Qwen3-30B-A3B
    inference:
      precision: fp8
      max_context_tokens: 16384
      avg_input_tokens: 1000
      avg_output_tokens: 400
      requests_per_second: 30{average}
      slo: {{ttft_p95_ms: 2000, tpot_ms: 50}}
"""


def edited_copy(source: Path, folder: Path, *replacements: tuple[str, str], name: str = "w.yaml") -> Path:
    """``source`` with each (old, new) replaced (each old must be there), written to ``folder / name``."""
    text = source.read_text(encoding="utf-8")
    for old, new in replacements:
        assert old in text, old
        text = text.replace(old, new)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def run_specgen(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``specgen ARGS`` in a subprocess (offline, with a bare environment plus ``env``), its output captured as text."""
    return subprocess.run(
        [sys.executable, "-c", "from generator.cli import main; main()", *args],
        capture_output=True,
        text=True,
        cwd=cwd or REPO,
        check=False,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", **(env or {})},
    )


def call_cli(cwd: Path, args: tuple[str, ...]) -> int:
    """``specgen ARGS`` in-process from ``cwd``: its exit code (0 when it returns)."""
    here = os.getcwd()
    os.chdir(cwd)
    try:
        main(list(args))
        return 0
    except SystemExit as exc:
        return int(exc.code or 0)
    finally:
        os.chdir(here)


def ansible_reader() -> YAML:
    """A YAML reader for Ansible files: ``!unsafe`` strings (data Ansible never templates) are plain strings."""
    reader = YAML(typ="safe", pure=True)
    reader.constructor.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))
    return reader


#: PyYAML's safe loader (YAML 1.1, as Ansible reads) that takes ``!unsafe`` strings as plain strings.
Yaml11Loader: Any = type("Yaml11Loader", (PYYAML.SafeLoader,), {})
Yaml11Loader.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))


def run_estimate(*args: str) -> tuple[int, str]:
    """``specgen estimate ARGS`` in-process: its exit code and what it printed to stdout."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = estimate_main(list(args))
    return code, out.getvalue()


def estimate_json(*args: str) -> dict[str, Any]:
    """``specgen estimate ARGS --json`` in-process: the parsed JSON. It must exit 0, or 3 exactly when the layout
    does not fit the GPU given (the breakdown is printed either way)."""
    code, text = run_estimate(*args, "--json")
    data: dict[str, Any] = json.loads(text)
    assert code == (3 if (data.get("capacity") or {}).get("fits") is False else 0)
    return data


def check_calibration_groups(
    groups: dict[str, dict[str, Any]],
    target: Callable[[str], tuple[float, float]],
    pinned: dict[str, tuple[float, float]],
    slack: float,
) -> None:
    """Each group within its (median, p90) target, or, if pinned, within its pinned figures plus ``slack``; and each
    pinned group still missing its target (a group that meets it loses its pin, so the target guards it)."""
    for name, g in groups.items():
        median, p90 = g["median_abs_error"], g["p90_abs_error"]
        if name in pinned:
            pinned_median, pinned_p90 = pinned[name]
            assert median <= pinned_median + slack and p90 <= pinned_p90 + slack, (name, median, p90)
        else:
            assert median <= target(name)[0] and p90 <= target(name)[1], (name, median, p90)
    for name in pinned:
        assert name in groups, name
        assert groups[name]["median_abs_error"] > target(name)[0] or groups[name]["p90_abs_error"] > target(name)[1], name


def specgen_in_process(capsys: Any, *args: str) -> tuple[int, str, str]:
    """Run the CLI in this process: (exit code, stdout, stderr); ``capsys``: pytest's capture fixture."""
    import pytest

    with pytest.raises(SystemExit) as done:
        main(list(args))
    out, err = capsys.readouterr()
    code = done.value.code
    return (code if isinstance(code, int) else 0 if code is None else 1), out, err


def write_sparse_gguf(writer: Any, shapes: dict[str, tuple[int, ...]]) -> None:
    """Finish a ``gguf.GGUFWriter`` (its metadata added) with F32 tensors of ``shapes`` (numpy order, outer first) whose
    data is a hole: a header at a real model's shapes (its tensors must match its keys, as llama.cpp's loader checks
    them) without writing its bytes."""
    import math

    import numpy as np

    for name, shape in shapes.items():
        writer.add_tensor_info(name, shape, np.dtype(np.float32), 4 * math.prod(shape))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    fout = writer.fout[0]
    writer.write_padding(fout, fout.tell())
    end = fout.tell() + sum(writer.ggml_pad(ti.nbytes, writer.data_alignment) for ti in writer.tensors[0].values())
    fout.truncate(end)
    writer.close()
