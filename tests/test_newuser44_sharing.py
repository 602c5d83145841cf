"""newuser44 items 5, 6 and 12: a deployment's GPU sharing against the GPUs that take it, and like-for-like figures.

- item 5: a deployment's ``gpu_sharing: {strategy: mig, mig_profile: 3g.40gb}`` was refused unless every GPU of
  ``hardware.gpus`` had the profile (and without ``hardware.gpus``), which locked the other deployments to that GPU. It
  is checked against the GPUs it may use that have it (the catalog's GPUs of the provider where none are named), refused
  only where none does, and planned only on those; the workload's ``kubernetes.gpu_sharing`` still asks it of every GPU.
- item 12: a time-sliced service was planned on a whole MI300X (an info said so): a service under sharing is ranked
  only on GPUs that share as asked.
- item 6: "whole GPUs cost less ($5,357/month for 16 GPUs, against $5,022/month for 1 GPUs ...)" set the service's cost
  share of a pool of 16 GPUs against a server of its own; it now says what each adds to the fleet and the fleet's month.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.api import plan_as_deployed
from generator.errors import MultipleInputError, SpecgenError
from generator.workload import load_workload

SERVICES = """\
version: 1
name: inference-aws
deployments:
  - name: chat
    model: meta-llama/Llama-3.3-70B-Instruct
    pool: chat
    inference: {{precision: fp8, kv_cache_precision: fp8, max_context_tokens: 16384, avg_input_tokens: 1500,
                avg_output_tokens: 350, requests_per_second: 20, average_requests_per_second: 8, min_replicas: 2,
                slo: {{ttft_p95_ms: 2000, tpot_ms: 40}}}}
  - name: embed
    model: BAAI/bge-m3
    inference: {{task: embed, max_context_tokens: 8192, avg_input_tokens: 512, requests_per_second: 50,
                slo: {{ttft_p95_ms: 500}}}}
  - name: moe
    model: Qwen/Qwen3-30B-A3B
    inference: {{precision: fp8, max_context_tokens: 32768, avg_input_tokens: 4000, avg_output_tokens: 500,
                requests_per_second: 3, slo: {{ttft_p95_ms: 3000, tpot_ms: 50}}}}
  - name: small
    model: meta-llama/Llama-3.1-8B-Instruct
    gpu_sharing: {sharing}
    inference: {{precision: bf16, max_context_tokens: 8192, avg_input_tokens: 800, avg_output_tokens: 200,
                requests_per_second: 2, slo: {{ttft_p95_ms: 2000, tpot_ms: 50}}}}
  - name: lora
    model: meta-llama/Llama-3.1-8B-Instruct
    training: {{method: lora, lora_rank: 16, sequence_length: 4096, micro_batch_size: 2,
               dataset_tokens: 100000000, epochs: 1, deadline_hours: 8}}
hardware: {hardware}
objective: cost
kubernetes: {kubernetes}
outputs: [terraform, ansible, kubernetes]
"""

MIG3 = "{strategy: mig, mig_profile: 3g.40gb}"
FIVE = "{provider: aws, gpus: [h100-sxm5-80gb, h200-sxm-141gb, b200-sxm-180gb, l40s-48gb, l4-24gb]}"


def workload(
    tmp_path: Path, sharing: str = MIG3, hardware: str = "{provider: aws}", kubernetes: str = "{location: us-east-1}"
) -> Path:
    path = tmp_path / "w.yaml"
    path.write_text(SERVICES.format(sharing=sharing, hardware=hardware, kubernetes=kubernetes), encoding="utf-8")
    return path


def errors_of(path: Path) -> list[str]:
    try:
        load_workload(path)
    except SpecgenError as caught:
        errors = caught.errors if isinstance(caught, MultipleInputError) else [caught]
        return [str(e).removeprefix(f"{path}:") for e in errors]
    return []


# (case, gpu_sharing of small, hardware, kubernetes, the errors as "line:col: field: message")
CHECKED = [
    ("mig-on-one-of-five-gpus", MIG3, FIVE, "{location: us-east-1}", []),
    ("mig-without-hardware-gpus", MIG3, "{provider: aws}", "{location: us-east-1}", []),
    (
        "mig-on-no-gpu-named",
        MIG3,
        "{provider: aws, gpus: [h200-sxm-141gb, l40s-48gb]}",
        "{location: us-east-1}",
        [
            "20:47: deployments[3].gpu_sharing.mig_profile: MIG profile '3g.40gb' does not exist on GPU 'h200-sxm-141gb' "
            "(it has 1g.18gb, 1g.35gb, 2g.35gb, 3g.71gb, 4g.71gb, 7g.141gb); the GPU from hardware.gpus[0]",
            "20:29: deployments[3].gpu_sharing.strategy: GPU 'l40s-48gb' does not support MIG "
            "(deployments[3].gpu_sharing.strategy mig); the GPU from hardware.gpus[1]",
        ],
    ),
    (
        "mig-on-no-gpu-the-provider-offers",
        "{strategy: mig, mig_profile: 3g.47gb}",
        "{provider: aws}",
        "{location: us-east-1}",
        [
            "20:47: deployments[3].gpu_sharing.mig_profile: no GPU the catalog offers on aws has MIG profile '3g.47gb': "
            "name GPUs that do in hardware.gpus, or give another mig_profile (generator/catalog/mig_profiles.json lists "
            "each GPU's)"
        ],
    ),
    (
        "time-slicing-beside-an-amd-gpu",
        "{strategy: time-slicing, replicas_per_gpu: 2}",
        "{provider: azure, gpus: [mi300x-192gb, a100-pcie-80gb]}",
        "{location: eastus}",
        [],
    ),
    (
        # newuser69 item 8: the workload's sharing follows the deployment's rule, planned on the GPUs that take it
        "the-workloads-mig-on-a-gpu-without-it",
        "{strategy: none}",
        "{provider: aws, gpus: [h100-sxm5-80gb, l40s-48gb]}",
        f"{{location: us-east-1, gpu_sharing: {MIG3}}}",
        [],
    ),
    (
        "the-workloads-mig-on-no-gpu-with-it",
        "{strategy: none}",
        "{provider: aws, gpus: [l4-24gb, l40s-48gb]}",
        f"{{location: us-east-1, gpu_sharing: {MIG3}}}",
        [
            "27:34: hardware.gpus[0]: GPU 'l4-24gb' does not support MIG (kubernetes.gpu_sharing.strategy mig)",
            "27:43: hardware.gpus[1]: GPU 'l40s-48gb' does not support MIG (kubernetes.gpu_sharing.strategy mig)",
        ],
    ),
    (
        "the-workloads-mig-without-hardware-gpus",
        "{strategy: none}",
        "{provider: aws}",
        f"{{location: us-east-1, gpu_sharing: {MIG3}}}",
        [],
    ),
]


@pytest.mark.parametrize(("sharing", "hardware", "k8s", "expected"), [c[1:] for c in CHECKED], ids=[c[0] for c in CHECKED])
def test_a_deployments_sharing_is_checked_against_the_gpus_that_take_it(
    tmp_path: Path, sharing: str, hardware: str, k8s: str, expected: list[str]
) -> None:
    assert errors_of(workload(tmp_path, sharing, hardware, k8s)) == expected


def test_the_mig_service_is_planned_on_the_gpus_with_its_profile_and_the_others_anywhere(tmp_path: Path) -> None:
    """Item 5: small only on the H100 (3g.40gb); chat, embed, moe and the LoRA keep every GPU allowed."""
    _, plan = plan_as_deployed(str(workload(tmp_path, hardware=FIVE)))
    on = {d.name: {p.node.gpu_id for p in plan.pools if d.in_pool(p.name)} for d in plan.deployments}
    assert on["small"] == {"h100-sxm5-80gb"}
    runners_up = {d.name: sorted({c.gpu_id for c in d.runners_up}) for d in plan.deployments}
    assert runners_up["small"] == ["h100-sxm5-80gb"]
    assert runners_up["chat"] == ["b200-sxm-180gb", "h100-sxm5-80gb", "h200-sxm-141gb", "l40s-48gb"]
    assert on["lora"] == {"b200-sxm-180gb"}
    said = {(f.code, f.path): f.message for f in plan.findings}
    assert said[("gpu-no-layout", "hardware.gpus[=l40s-48gb]")] == (  # named by value (fix191)
        "deployment small: no layout on l40s-48gb: GPU 'l40s-48gb' does not support MIG (deployments[3].gpu_sharing."
        "strategy mig), so the service is not planned on it"
    )
    assert said[("gpu-no-layout", "hardware.gpus[=h200-sxm-141gb]")] == (
        "deployment small: no layout on h200-sxm-141gb: MIG profile '3g.40gb' does not exist on GPU 'h200-sxm-141gb' (it "
        "has 1g.18gb, 1g.35gb, 2g.35gb, 3g.71gb, 4g.71gb, 7g.141gb), so the service is not planned on it"
    )


def test_a_time_sliced_service_is_not_planned_on_amd_gpus(tmp_path: Path) -> None:
    """Item 12: on Azure, small asked time-slicing x2 and got a whole MI300X of the chat pool (an info said so). It is
    time-sliced on an A100 now; the fleet costs 3% more for it, which gpu-sharing-costs-more says.

    fix74: the whole-GPU fleet went $70,080 -> $70,464 (+4% -> +3%). chat's 13 TP1 replicas on MI300X held 286 places
    (22 each, a request 14.03 s) at 20 req/s: 98% busy, 66% wait, p95 6.69 s past the 1.20 s slack (2 s TTFT target -
    798 ms TTFT p95 at batch 22); 14 (308 places, 91%: 6.9% wait, p95 0.17 s) with moe and small fill the chat pool's 16
    MI300X, and embed takes an NC4as_T4_v3 ($384/month). The shared fleet is unchanged ($72,761: chat 14, moe and embed
    on the 16 MI300X, small time-sliced on one NC24ads A100).

    acc167: the MI300X's FP8 GEMMs at Azure's measured rate (1159.54 TFLOPS, not AMD's MAF 1273) take chat (70B FP8) to
    15 replicas, which with moe fill the 16 MI300X: no idle MI300X is left for small, both fleets put it on one A100 and
    cost the same ($73,145.27), so gpu-sharing-costs-more has nothing to say."""
    path = workload(tmp_path, "{strategy: time-slicing, replicas_per_gpu: 2}", "{provider: azure}", "{location: eastus}")
    _, plan = plan_as_deployed(str(path))
    (pool,) = [p for p in plan.pools if "small" in p.deployments]
    assert (pool.deployments, pool.node.gpu_id, pool.gpu_sharing, pool.nodes) == (
        ("small",),
        "a100-pcie-80gb",
        "time-slicing x2",
        1,
    )
    assert [(p.node.gpu_id, p.gpu_sharing) for p in plan.pools if p.gpu_sharing] == [("a100-pcie-80gb", "time-slicing x2")]
    small = next(d for d in plan.deployments if d.name == "small")
    # the cheapest other layouts, since the catalog has Azure's T4 and A10 sizes: TP4 on an NC64as_T4_v3 ($3,177) and two
    # NV36ads_A10_v5 ($4,672), then a time-sliced H100 NVL ($5,095)
    assert {c.gpu_id for c in small.runners_up} == {"t4-16gb", "a10-24gb", "h100-nvl-94gb"}
    said = {f.code: f for f in plan.findings}
    assert "gpu-sharing-whole-gpus" not in said
    # acc167: chat's 15 MI300X replicas and moe fill the 16 MI300X; whole or shared, small takes one A100 (fix89's
    # +3% warning, $72,761 against $70,464, was of a chat pool of 14 that left small an idle MI300X)
    assert "gpu-sharing-costs-more" not in said
    assert round(plan.totals["usd_per_month"], 2) == 73145.27
    assert [d.replicas for d in plan.deployments if d.name == "chat"] == [15]


def test_whole_gpus_are_compared_with_shares_by_what_each_adds_to_the_fleet(tmp_path: Path) -> None:
    """Item 6: small on an idle H100 of the chat pool adds nothing; in 3g.40gb shares it would add a p5.4xlarge."""
    _, plan = plan_as_deployed(str(workload(tmp_path, hardware="{provider: aws, gpus: [h100-sxm5-80gb]}")))
    assert round(plan.totals["usd_per_month"], 2) == 80358.4
    said = {f.code: f.message for f in plan.findings}
    assert said["gpu-sharing-whole-gpus"] == (
        "pool(s) chat_h100_sxm5_80gb keep whole GPUs (no mig). In chat_h100_sxm5_80gb, small: whole GPUs cost less: it "
        "adds $0/month and 0 GPUs to the fleet, on GPUs its pool has without it (fleet $80,358/month), against "
        "$5,022/month and 1 GPU added by its best layout with shares, a pool of its own: 1 x TP1 in 3g.40gb shares "
        "(2 a GPU) on 1 x aws-p5-4xlarge (1 x h100-sxm5-80gb) (fleet $85,381/month)"
    )


def test_whole_gpus_ranked_ahead_where_the_fleet_figures_favour_shares_say_why() -> None:
    """review29 item 7: where whole GPUs add more to the fleet than the best layout in shares (here $7,300 against
    $3,650 a month), the reason read "whole GPUs rank ahead by cost" beside the two fleet months, the shared one lower,
    with nothing to say why the plan chose whole GPUs: the planner ranks a service's layouts each as a pool of its own
    before it packs services into pools."""
    from types import SimpleNamespace
    from typing import Any, cast

    from generator.render.whole_gpu_reasons import _ranked_ahead
    from generator.workload.models import GpuSharing

    shared = SimpleNamespace(
        shares_per_gpu=2, usd_per_hour=5.0, usd_per_month=5.0 * 730, gpus_bought=1, summary="1 x TP1 in 3g.40gb shares"
    )
    d = SimpleNamespace(name="small", kind="inference", details={}, runners_up=(shared,), split=(), replicas=1)
    d.in_pool = lambda name: (1, 1, 1, 1)
    node = SimpleNamespace(gpus=8, hosts=1)
    pool = SimpleNamespace(name="p", usd_per_hour=10.0, busy_hours_per_month=None, nodes=1, owned_nodes=0, node=node)
    plan = SimpleNamespace(objective="cost", deployments=(d,), totals={"usd_per_month": 20_000.0})
    said = _ranked_ahead(cast(Any, plan), cast(Any, d), cast(Any, pool), GpuSharing("mig", None, "3g.40gb"), frozenset())
    assert said == (
        "whole GPUs rank ahead by cost where the planner ranks a service's layouts, each as a pool of its own, before it "
        "packs services into pools (these fleet figures did not decide it): it adds $7,300/month and 8 GPUs to the "
        "fleet (fleet $20,000/month), against $3,650/month and 1 GPU added by its best layout with shares, a pool of "
        "its own: 1 x TP1 in 3g.40gb shares (fleet $16,350/month)"
    )
