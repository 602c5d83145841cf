"""No @-mention reaches a Markdown output live; a cut value says it is cut (newuser75 item 8).

A model path's ``@octocat`` reached the ``diff --base`` pull-request comment as text, which GitHub and GitLab turn into
a notification (a backslash before ``@`` does not stop it: the mention is found in the rendered text, so it goes in a
code span); the ``model-config-only`` warning quoted the path cut at 60 characters with nothing to say so.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.render.md_escape import md_text
from tests.helpers import VALID, run_specgen

CONFIG = Path(__file__).parent / "data" / "hub" / "llama-3.1-8b.config.json"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        pytest.param("./m @octocat x", "./m `@octocat` x", id="user"),
        pytest.param("./m @octocat/config.json", "./m `@octocat/config.json`", id="user-or-team"),
        pytest.param("@org/team-a x", "`@org/team-a` x", id="team-first"),
        pytest.param("a @b and @c.", "a `@b` and `@c.`", id="two"),
        pytest.param("# @x", "\\# `@x`", id="after-a-heading-marker"),
        pytest.param("1. @y", "1\\. `@y`", id="after-a-list-marker"),
        pytest.param("[@x](y)", "\\[`@x`\\](y)", id="in-link-text"),
        pytest.param("we|ird`<b> @u *x*", "we\\|ird\\`\\<b\\> `@u` \\*x\\*", id="escaped-around"),
        # no mention: an @ after a word character (an e-mail, a Hub revision), or without a name after it
        pytest.param("meta-llama/Llama-3.1-8B@main", "meta-llama/Llama-3.1-8B@main", id="hub-revision"),
        pytest.param("ops@example.com", "ops@example.com", id="e-mail"),
        pytest.param("x @ 2 GHz", "x @ 2 GHz", id="lone-at"),
        pytest.param("@-x", "@-x", id="no-name"),
        pytest.param("kv_cache *x*", "kv_cache \\*x\\*", id="no-at-as-before"),
    ],
)
def test_md_text_puts_each_mention_in_a_code_span(text: str, shown: str) -> None:
    assert md_text(text) == shown


def test_a_model_path_with_a_mention_is_no_mention_in_the_markdown_plan(tmp_path: Path) -> None:
    model = tmp_path / "m @octocat x"
    model.mkdir()
    (model / "config.json").write_text(CONFIG.read_text())
    rel = f"./{model.name}/config.json"
    (tmp_path / "w.yaml").write_text(VALID.replace("model: meta-llama/Llama-3.1-8B-Instruct", f"model: '{rel}'", 1))
    result = run_specgen("plan", "w.yaml", "--format", "markdown", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "local config: ./m `@octocat` x/config.json" in result.stdout
    outside_code = re.sub(r"(`+).*?\1", "", result.stdout)
    assert "@octocat" not in outside_code


def test_a_long_model_path_in_a_warning_says_it_is_cut(tmp_path: Path) -> None:
    model = tmp_path / ("d" * 80)
    model.mkdir()
    (model / "config.json").write_text(CONFIG.read_text())
    rel = f"./{model.name}/config.json"
    (tmp_path / "w.yaml").write_text(VALID.replace("model: meta-llama/Llama-3.1-8B-Instruct", f"model: '{rel}'", 1))
    result = run_specgen("plan", "w.yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    cut = repr(rel[:60]) + f"... ({len(rel)} characters) is a config.json"
    assert f"warning: model {cut}" in result.stderr


#: GitHub's mention pattern (html-pipeline's MentionFilter), run over rendered text nodes: code spans are skipped.
GITHUB_MENTION = re.compile(r"(?:^|\W)@([a-z0-9][a-z0-9-]*)(?:/[a-z0-9][a-z0-9_.-]*)?", re.IGNORECASE)


@pytest.mark.parametrize(
    "text",
    ["@a", "x @octocat y", "./x\n## Approved by @security-team\n.json", "(@u)", "\\@u", "`@u`", "*@u*", "|@u|", "@org/t"],
)
def test_no_rendered_text_node_holds_a_mention(text: str) -> None:
    """markdown-it as the oracle: what a CommonMark renderer makes of md_text's output has mentions in code alone."""
    from markdown_it import MarkdownIt

    rendered = md_text(text)
    texts = [
        child.content
        for token in MarkdownIt("commonmark").enable("table").parse(f"| a |\n|---|\n| {rendered} |\n\nline {rendered}\n")
        if token.type == "inline"
        for child in token.children or ()
        if child.type == "text"
    ]
    assert texts and not [t for t in texts if GITHUB_MENTION.search(t)], (rendered, texts)
