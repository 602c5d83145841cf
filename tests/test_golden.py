"""Every example renders to its checked-in tree, byte for byte (update with --update-golden)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator.api import render_file, render_files
from generator.writer import diff_trees, read_tree, with_manifest, write_tree
from tests.conftest import REPO

EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))
GOLDEN = REPO / "tests" / "golden"


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.stem for e in EXAMPLES])
def test_example_matches_golden_tree(example: Path, update_golden: bool) -> None:
    rendered = with_manifest(render_file(str(example.relative_to(REPO))))
    target = GOLDEN / example.stem
    if update_golden:
        shutil.rmtree(target, ignore_errors=True)
        write_tree(render_file(str(example.relative_to(REPO))), str(target))
    diff = diff_trees(read_tree(str(target)), rendered)
    assert not diff, f"rendered output of {example.name} differs from {target} (run pytest --update-golden):\n{diff}"


def test_every_example_declares_the_schema() -> None:
    for example in EXAMPLES:
        assert example.read_text().startswith("# yaml-language-server: $schema=../schemas/workload.schema.json\n"), example


@pytest.mark.parametrize("example", EXAMPLES[:2], ids=[e.stem for e in EXAMPLES[:2]])
def test_output_identical_under_different_hash_seeds(example: Path, tmp_path: Path) -> None:
    trees = []
    for seed in ("1", "4242"):
        out = tmp_path / f"seed{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)}
        subprocess.run(
            [sys.executable, "-c", "from generator.cli import main; main()", "render", str(example), "-o", str(out)],
            check=True,
            env=env,
            capture_output=True,
            cwd=REPO,
        )
        trees.append(read_tree(str(out)))
    assert trees[0] == trees[1]


#: Three workloads rendered into one tree (one cluster): their own files plus one shared cluster/ layer.
TOGETHER = ["chat-70b", "finetune-8b-qlora", "llama-405b-bf16"]


def test_several_workloads_match_golden_tree(update_golden: bool) -> None:
    paths = [f"examples/{stem}.yaml" for stem in TOGETHER]
    rendered = with_manifest(render_files(paths))
    target = GOLDEN / "_together"
    if update_golden:
        shutil.rmtree(target, ignore_errors=True)
        write_tree(render_files(paths), str(target))
    diff = diff_trees(read_tree(str(target)), rendered)
    assert not diff, f"rendered output of {TOGETHER} differs from {target} (run pytest --update-golden):\n{diff}"
