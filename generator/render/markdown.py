"""``SPEC.md``: the human summary of a plan."""

from __future__ import annotations

from generator import __version__
from generator.planner.plan import Plan
from generator.render.env import render_template


def render_markdown(plan: Plan) -> dict[str, str]:
    """``SPEC.md``."""
    return {"SPEC.md": render_template("markdown/SPEC.md.j2", plan=plan, version=__version__)}
