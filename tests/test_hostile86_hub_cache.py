"""hostile86 (held, pinned): a cached tensor table that is a FIFO is not read, so estimate never waits on it.

specgen keeps a Hub model's safetensors tensor table under ``HF_HOME`` (``safetensors-tensors.json``), a folder CI
restores from a cache other jobs saved. ``_tensor_table`` reads it only where it is a regular file (``is_file``); a
reader that opened it first would wait for a writer for ever. Offline, the weights are then sized from the config.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.hub_server import serve
from tests.test_hub import C2, make_hub, specgen


def test_a_cached_tensor_table_that_is_a_fifo_is_not_read(tmp_path: Path) -> None:
    with serve(make_hub()) as hub:
        assert specgen(hub, tmp_path, "estimate", "acme/qwen-7b-chat", "--json").returncode == 0
        (table,) = tmp_path.rglob("safetensors-tensors.json")
        assert C2 in str(table)
        table.unlink()
        os.mkfifo(table)
        try:  # the helper's 120 s limit is the hang guard: no assertion on time
            run = specgen(hub, tmp_path, "estimate", "acme/qwen-7b-chat", "--json", HF_HUB_OFFLINE="1")
        except subprocess.TimeoutExpired:
            pytest.fail("estimate waited on the FIFO in the Hub cache")
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert data["weights"]["bytes"] == 2 * 7_615_616_512 and data["weights_from"] == "computed from the config"
