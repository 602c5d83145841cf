"""``spec.json``: the resolved plan, the machine-readable source of truth."""

from __future__ import annotations

from generator import __version__
from generator.planner.plan import Plan
from generator.render.env import to_json


def render_spec(plan: Plan) -> dict[str, str]:
    """The plan as canonical JSON."""
    return {"spec.json": to_json({"generator": f"specgen {__version__}", "plan": plan.to_dict()}) + "\n"}
