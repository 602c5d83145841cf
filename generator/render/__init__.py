"""Renderers: a plan in, ``{relative path: text}`` out. One module per target."""

from __future__ import annotations

from generator.planner.plan import Plan
from generator.render.ansible import render_ansible
from generator.render.kubernetes import render_kubernetes
from generator.render.markdown import render_markdown
from generator.render.spec import render_spec
from generator.render.terraform import render_terraform
from generator.workload.models import Workload


def render_plan(plan: Plan, workload: Workload) -> dict[str, str]:
    """Every output file of one workload, keyed by path relative to the output directory."""
    files = {**render_spec(plan), **render_markdown(plan)}
    if "terraform" in workload.outputs:
        files.update(render_terraform(plan, workload.hardware.rack_power_kw))
    if "ansible" in workload.outputs:
        files.update(render_ansible(plan))
    if "kubernetes" in workload.outputs and plan.provider == "baremetal":
        files.update(render_kubernetes(plan, workload.kubernetes))
    return dict(sorted(files.items()))
