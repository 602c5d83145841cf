"""hostile85 item 2: a model directory's safetensors index naming a shard that is no text, or a shard that is missing.

``str()`` of each shard read ``{"a": 5}`` as the file ``5`` (``null`` as ``None``, ``true`` as ``True``), refused as
"./m/5: not a regular file"; a shard the index names that is missing (an unfinished download) or a link whose blob is
missing (a Hugging Face cache snapshot) read "not a regular file; only regular safetensors files are read".
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from generator.cli import main
from tests.test_hostile85_config_numbers import CONFIG


def _estimate(directory: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as done:
        main(["estimate", str(directory)])
    return int(done.value.code or 0), capsys.readouterr().err


def _model(tmp_path: Path, weight_map: object) -> Path:
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text(json.dumps(CONFIG))
    (tmp_path / "m" / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    return tmp_path / "m"


@pytest.mark.parametrize(
    ("shard", "said"),
    [(5, "5"), (None, "null"), (True, "true"), (["a.safetensors"], '["a.safetensors"]'), ({"f": 1}, '{"f": 1}')],
)
def test_a_shard_that_is_no_text_is_refused_at_the_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], shard: object, said: str
) -> None:
    model = _model(tmp_path, {"model.embed_tokens.weight": "model-00001-of-00002.safetensors", "lm_head.weight": shard})
    code, err = _estimate(model, capsys)
    index = model / "model.safetensors.index.json"
    assert (code, err) == (
        1,
        f"specgen estimate: error: {index}: shard {said} (JSON) is not a file name in the model directory\n",
    )


@pytest.mark.parametrize(
    ("link", "said"),
    [(None, "no such file"), ("../../blobs/0123abcd", "no such file (a broken link to '../../blobs/0123abcd')")],
)
def test_a_missing_shard_is_said_to_be_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], link: str | None, said: str
) -> None:
    """A shard the index names that is missing, or a link (a Hugging Face cache snapshot's) to a missing blob."""
    model = _model(tmp_path, {"lm_head.weight": "model-00001-of-00001.safetensors"})
    shard = model / "model-00001-of-00001.safetensors"
    if link is not None:
        os.symlink(link, shard)
    code, err = _estimate(model, capsys)
    said += "; the safetensors index names it (an unfinished download?)"
    assert (code, err) == (1, f"specgen estimate: error: {shard}: {said}\n")


def test_a_shard_that_is_a_directory_is_still_not_a_regular_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = _model(tmp_path, {"lm_head.weight": "model-00001-of-00001.safetensors"})
    (model / "model-00001-of-00001.safetensors").mkdir()
    code, err = _estimate(model, capsys)
    assert code == 1 and err.endswith(
        "model-00001-of-00001.safetensors: not a regular file; only regular safetensors files are read\n"
    )
