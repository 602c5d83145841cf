"""Review text cannot be forged (issue 13): no string from a workload, a file name or a spec.json changes the
block or inline structure of SPEC.md or the ``diff`` comment.

Each hostile model path (a file a pull request may add) is rendered and parsed with markdown-it-py
(CommonMark + GFM tables); the token structure must equal that of a benign path's render, no HTML
token may appear, and the path must come back verbatim in its code span.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from generator import catalog
from generator.api import render_file
from generator.fleet_diff import diff_plans, markdown_diff
from generator.render.md_escape import _MENTION, md_code, md_text, one_line

PAYLOADS = [
    "./a`b.json",
    "./``x``.json",
    "./x\n## Approved by @security-team\n.json",
    "./x\n\n<details open>\n\n.json",
    "./<details open>.json",
    "./</script><img src=x onerror=alert(1)>.json",
    "./| a | b |.json",
    "./[approved](https://evil.example).json",
    "./**LGTM** _ok_ ~~no~~.json",
    "./&lt;b&gt;.json",
    "./x\r\n---\r\n.json",
    "./x\n1. item\n- item\n> quote\n    code\n.json",
    "./x\u2028## y.json",
    "./m\u202e\u200bz.json",  # fuzz25 M1: a right-to-left override and a zero-width space (Trojan Source)
    "./\\`\\|.json",
]

WORKLOAD = """\
version: 1
name: demo
deployments:
  - name: chat
    model: {model}
    inference:
      max_context_tokens: 8192
hardware:
  gpus: [l40s-48gb]
"""


def parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table").enable("strikethrough")


def structure(text: str) -> list[tuple[Any, ...]]:
    """Block tokens and the kinds of their inline children (text content left out).

    An @-mention's code span (newuser75 item 8: md_text shows a mention as code, where no one is notified) counts as the
    text it is, so a value holding one has the structure of a plain one.
    """
    out: list[tuple[Any, ...]] = []
    for token in parser().parse(text):
        kids: list[tuple[str, str]] = []
        for c in token.children or () if token.type == "inline" else ():
            kind = ("text", "") if c.type == "code_inline" and _MENTION.fullmatch(c.content) else (c.type, c.tag)
            if not (kind == ("text", "") and kids[-1:] == [kind]):
                kids.append(kind)
        out.append((token.type, token.tag, token.nesting, tuple(kids)))
    return out


def html_tokens(text: str) -> list[str]:
    found = []
    for token in parser().parse(text):
        if token.type.startswith("html"):
            found.append(token.content)
        found += [c.content for c in token.children or () if c.type.startswith("html") or c.type == "link_open"]
    return found


def _spec_md(tmp_path: Path, ref: str) -> str:
    path = tmp_path / ref.removeprefix("./")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(dict(catalog.find_model("meta-llama/Llama-3.1-8B-Instruct").config)))
    (tmp_path / "workload.yaml").write_text(WORKLOAD.format(model=json.dumps(ref)))
    return render_file(str(tmp_path / "workload.yaml"))["SPEC.md"]


@pytest.mark.parametrize("ref", PAYLOADS)
def test_a_hostile_model_path_does_not_change_spec_md(tmp_path: Path, ref: str) -> None:
    benign = _spec_md(tmp_path / "benign", "./benign.json")
    hostile = _spec_md(tmp_path / "hostile", ref)
    assert structure(hostile) == structure(benign)
    assert html_tokens(hostile) == []
    spans = [c.content for t in parser().parse(hostile) for c in t.children or () if c.type == "code_inline"]
    assert one_line(ref) in spans
    assert not any(char in hostile for char in "\u202e\u200b")  # shown as escapes, never as themselves


def _plan(pool: str, deployment: str, model: str) -> dict[str, Any]:
    return {
        "totals": {"gpus": 1, "nodes": 1, "racks": 1, "power_w": 1000, "usd_per_month": None},
        "pools": [{"name": pool, "node": {"gpu_id": model, "gpus": 1}, "nodes": 1, "power_w": 1000, "usd_per_hour": None}],
        "deployments": [
            {"name": deployment, "model_id": model, "precision": model, "tp": 1, "pp": 1, "replicas": 1, "gpus": 1, "pool": pool}
        ],
    }


@pytest.mark.parametrize("text", PAYLOADS)
def test_a_hostile_spec_json_does_not_change_the_diff_comment(text: str) -> None:
    empty: dict[str, Any] = {"totals": {}, "pools": [], "deployments": []}
    benign = markdown_diff(diff_plans(empty, _plan("pool", "dep", "model")))
    hostile = markdown_diff(diff_plans(empty, _plan(text, text, text)))
    assert structure(hostile) == structure(benign)
    assert html_tokens(hostile) == []


@pytest.mark.parametrize("text", PAYLOADS)
def test_escaped_text_renders_as_itself(text: str) -> None:
    """The escapes are lossless: the rendered text is the value (control characters shown as escapes, a mention as code)."""
    rendered = parser().renderInline(md_text(text))
    plain = parser().renderInline(md_text("plain"))
    assert plain == "plain"
    expected = one_line(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    assert rendered == _MENTION.sub(r"<code>\g<0></code>", expected)
    assert parser().renderInline(md_code(text)) == f"<code>{expected}</code>"
