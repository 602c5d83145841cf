"""fix146 item 1: ``render --check``'s verdict on drift names the entries that drifted and the render that fixes them."""

from __future__ import annotations

import pytest

from generator.drift_verdict import drifted_entries, render_command, stale_verdict


@pytest.mark.parametrize(
    ("files", "output", "targets", "prune", "expected"),
    [
        pytest.param(["w.yaml"], "infra", [], False, "specgen render w.yaml -o infra", id="plain"),
        pytest.param(["a.yaml", "b.yaml"], "infra", [], True, "specgen render a.yaml b.yaml -o infra --prune", id="prune"),
        pytest.param(
            ["w.yaml"], "out", ["terraform", "ansible"], False,
            "specgen render w.yaml -o out --target terraform --target ansible", id="targets",
        ),
        # --prune with --target is refused (fuzz28 H1): the render that prunes renders every output
        pytest.param(["w.yaml"], "out", ["terraform"], True, "specgen render w.yaml -o out --prune", id="prune-no-target"),
        pytest.param(["my w.yaml"], "in fra/$x", [], False, "specgen render 'my w.yaml' -o 'in fra/$x'", id="quoted"),
    ],
)  # fmt: skip
def test_render_command(files: list[str], output: str, targets: list[str], prune: bool, expected: str) -> None:
    assert render_command(files, output, targets, prune) == expected


@pytest.mark.parametrize(
    ("current", "rendered", "unlisted", "expected"),
    [
        pytest.param({"a/x": "1", "b/x": "1"}, {"a/x": "1", "b/x": "2"}, [], ["b/"], id="changed-tree"),
        pytest.param({"spec.json": "1"}, {"spec.json": "1", "SPEC.md": "1"}, [], ["SPEC.md"], id="missing-file"),
        pytest.param({"a/x": "1"}, {}, ["z"], ["a/", "z/"], id="removed-and-unlisted"),
        # the root's manifest changes with any file; it is named only where nothing else drifted
        pytest.param({".specgen-manifest": "a"}, {".specgen-manifest": "b", "cluster/k": "1"}, [], ["cluster/"], id="manifest"),
        pytest.param({".specgen-manifest": "a"}, {".specgen-manifest": "b"}, [], [".specgen-manifest"], id="manifest-alone"),
    ],
)  # fmt: skip
def test_drifted_entries(current: dict[str, str], rendered: dict[str, str], unlisted: list[str], expected: list[str]) -> None:
    assert drifted_entries(current, rendered, unlisted) == expected


def test_the_verdict_names_at_most_six_entries() -> None:
    drifted = [f"t{i}/" for i in range(8)]
    assert stale_verdict(["a.yaml"], "infra", [], False, drifted) == (
        "rendered output is stale in infra (t0/, t1/, t2/, t3/, t4/, t5/ and 2 more); run `specgen render a.yaml -o "
        "infra` and commit the result"
    )


@pytest.mark.parametrize(
    ("count", "expected"),
    [
        pytest.param(6, "run `specgen render w0.yaml w1.yaml w2.yaml w3.yaml w4.yaml w5.yaml -o infra` and commit", id="six"),
        pytest.param(7, "run `specgen render FILE... -o infra` with the 7 files given (w0.yaml, w1.yaml, w2.yaml, w3.yaml, "
                     "w4.yaml, w5.yaml and 1 more) and commit", id="seven"),
        pytest.param(1200, "run `specgen render FILE... -o infra` with the 1,200 files given (w0.yaml, w1.yaml, w2.yaml, "
                     "w3.yaml, w4.yaml, w5.yaml and 1,194 more) and commit", id="hundreds"),
    ],
)  # fmt: skip
def test_the_verdict_names_at_most_six_files(count: int, expected: str) -> None:
    """hostile84 item 4: the command listed every workload file given, one line of hundreds of paths."""
    verdict = stale_verdict([f"w{i}.yaml" for i in range(count)], "infra", [], False, ["a/"])
    assert verdict == f"rendered output is stale in infra (a/); {expected} the result"


def test_a_capped_file_list_keeps_quoting_and_the_prune_note() -> None:
    verdict = stale_verdict([f"my w{i}.yaml" for i in range(9)], "in fra", ["terraform"], True, [])
    assert verdict == (
        "rendered output is stale in in fra; run `specgen render FILE... -o 'in fra' --prune` with the 9 files given "
        "('my w0.yaml', 'my w1.yaml', 'my w2.yaml', 'my w3.yaml', 'my w4.yaml', 'my w5.yaml' and 3 more) (it removes "
        "the trees of workloads no file renders) and commit the result"
    )
