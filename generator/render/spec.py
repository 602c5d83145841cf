"""``spec.json``: the resolved plan, the machine-readable source of truth."""

from __future__ import annotations

from generator.planner.plan import Plan
from generator.render.env import to_json
from generator.spec_stamp import SPEC_STAMP


def render_spec(plan: Plan) -> dict[str, str]:
    """The plan as canonical JSON."""
    return {"spec.json": to_json({"generator": SPEC_STAMP, "plan": plan.to_dict()}) + "\n"}
