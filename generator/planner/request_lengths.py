"""A service sized at the schema's default request lengths, said (newuser97 item 3).

A Qwen2.5-32B code assistant with a 32,768-token context, written without ``avg_input_tokens`` / ``avg_output_tokens``,
was planned for 1,000-token prompts and 200-token replies (the schema's defaults): its replicas, the rate a replica
sustains, its TTFT and its $/M tokens all follow those lengths, and the plan quoted them ("an average 1,000-token
prompt", "2 req/s of 200 tokens") as if the workload had said them. The info names the lengths the user left out.
"""

from __future__ import annotations

from generator.planner.plan import Finding
from generator.workload import LoadedWorkload
from generator.workload.models import InferenceDeployment
from generator.workload.value_checks import given_in

CODE = "request-lengths-default"


def request_length_findings(loaded: LoadedWorkload) -> list[Finding]:
    """Each service whose average request lengths are the defaults, not given (info, at its ``inference``)."""
    out = []
    for i, dep in enumerate(loaded.workload.deployments):
        if not isinstance(dep, InferenceDeployment):
            continue
        spec = dep.inference
        at = ("deployments", i, "inference")
        lengths = {"avg_input_tokens": (spec.avg_input_tokens, "prompts")}
        if not spec.pooling:  # a pooling request makes no output
            lengths["avg_output_tokens"] = (spec.avg_output_tokens, "replies")
        left = [(name, value, what) for name, (value, what) in lengths.items() if not given_in(loaded.document, (*at, name))]
        if not left:
            continue
        names = " and ".join(name for name, _, _ in left)
        sized = " and ".join(f"{value:,}-token {what}" for _, value, what in left)
        out.append(
            Finding(
                "info",
                CODE,
                f"deployment {dep.name}: {names} {'is' if len(left) == 1 else 'are'} not given, so it is sized for the "
                f"schema's default {sized}: its replicas, the rate a replica sustains within the SLOs, its TTFT and its "
                "cost a million tokens follow those lengths; give the service's own averages (from its request logs or "
                "a sample of its traffic)",
                f"deployments[{i}].inference",
            )
        )
    return out
