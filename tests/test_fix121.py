"""fix121: note55's leftovers (fix117's two "else"s; the 2 x RTX 3090 tower's PCIe lanes; chained jobs' DIMMs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.api import plan_file
from generator.errors import SpecgenError
from generator.planner import _in_turn
from tests.test_fix117 import HOME_FT


def test_a_mixed_owned_and_bought_refusal_says_its_alternatives_in_turn(tmp_path: Path) -> None:
    """Before: "...or leave it out; else for the network ...; else allow ..." (two "else"s; fix117's leftover)."""
    path = tmp_path / "w.yaml"
    path.write_text(HOME_FT.format(batch=7).replace("  buy: false\n", "  gpus: [rtx-4090-24gb]\n"))
    with pytest.raises(SpecgenError) as err:
        plan_file(str(path))
    advice = str(err.value)[str(err.value).index("to unblock: ") :]
    assert advice.count("else") == 1, advice
    assert advice.startswith(
        "to unblock: for the global batch of 7: a global_batch_size of 6 or 8 (a multiple of the data-parallel ranks "
        "said above, whose split fits), or leave it out; else for the network between the nodes: allow an instance or "
        "platform with a GPU fabric between nodes, or fewer nodes (a GPU with more memory); failing both, allow a GPU "
        "with more memory, LoRA/QLoRA, "
    ), advice


def test_alternatives_in_turn() -> None:
    assert _in_turn("a", "") == "a"
    assert _in_turn("a", "b") == "a; else b"
    assert _in_turn("a", "b; else c") == "a; else b; failing both, c"
    assert _in_turn("a", "b; else c; else d") == "a; else b; failing those, c; failing those, d"
