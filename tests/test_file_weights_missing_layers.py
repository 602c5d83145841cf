"""The layers a checkpoint's files hold no tensor of, as the GGUF and safetensors refusals list them (review94)."""

from __future__ import annotations

import pytest

from generator.sizing.file_weights import FileWeights


@pytest.mark.parametrize(
    ("layer_bytes", "said"),
    [
        ((5, 5, 5), ""),
        ((5, 0, 5, 0), "1, 3"),
        ((0,) * 8 + (5,), "0, 1, 2, 3, 4, 5, 6, 7"),  # eight: all of them
        ((0,) * 9, "0, 1, 2, 3, 4, 5, 6, 7, ..."),  # nine: the first eight, then more
    ],
)
def test_missing_layers_text(layer_bytes: tuple[int, ...], said: str) -> None:
    files = FileWeights("bf16", "model.safetensors", layer_bytes, (), 0, 0, 0)
    assert files.missing_layers_text() == said
