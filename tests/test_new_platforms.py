"""GPUs that could be estimated but not planned get servers (newuser20 item 8): HGX/DGX B300 and AWS p6-b300,
GB300 NVL72, and a GH200 1U server (Supermicro ARS-111GL-NHR) with Lambda's rental price as its monthly figure."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator import catalog
from generator.planner import plan_workload
from generator.workload import load_workload

WORKLOAD = """\
version: 1
name: t
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-70B-Instruct
    inference: {{precision: {precision}, kv_cache_precision: fp8, max_context_tokens: 8192, avg_input_tokens: 1000,
      avg_output_tokens: 1000, requests_per_second: {rps}}}
hardware:
  gpus: [{gpu}]
  provider: {provider}
{extra}"""


@pytest.mark.parametrize(
    ("gpu", "provider", "precision", "rps", "extra", "platform", "usd_per_hour"),
    [
        pytest.param("b300-sxm-270gb", "baremetal", "fp8", 20, "", "dgx-b300", None, id="dgx-b300"),
        # AWS us-east-1 on demand, 2026-09-18 price feed
        pytest.param("b300-sxm-270gb", "aws", "fp8", 20, "", "aws-p6-b300-48xlarge", 142.416, id="p6-b300"),
        # Lambda gpu_1x_gh200 at $2.29/h, entered as 730 hours a month
        pytest.param("gh200-96gb", "baremetal", "int4", 0.5, "", "supermicro-ars-111gl-nhr", 1671.7 / 730, id="gh200-1u"),
        pytest.param(
            "gb300-288gb", "baremetal", "fp8", 20, "  cooling: liquid\n  rack_power_kw: 150\n", "gb300-nvl72", None, id="gb300"
        ),
    ],
)
def test_the_gpu_is_planned_on_its_server(
    tmp_path: Path, gpu: str, provider: str, precision: str, rps: float, extra: str, platform: str, usd_per_hour: float | None
) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD.format(gpu=gpu, provider=provider, precision=precision, rps=rps, extra=extra))
    (pool,) = plan_workload(load_workload(str(path))).pools
    assert (pool.node.platform_id, pool.node.gpu_id) == (platform, gpu)
    if usd_per_hour is None:
        assert pool.usd_per_hour is None
    else:
        assert pool.usd_per_hour == pytest.approx(usd_per_hour * pool.nodes, rel=1e-6)


def test_b300_rates_are_dense() -> None:
    # NVIDIA's HGX B300 table: FP4 144 | 108 PFLOPS (sparse | dense) for 8 GPUs; BF16 36 PFLOPS and FP8 72 PFLOPS
    # sparse only, halved for dense
    b300 = catalog.gpus()["b300-sxm-270gb"]
    assert (b300.tflops("fp4"), b300.tflops("fp8"), b300.tflops("bf16")) == (108_000 / 8, 72_000 / 8 / 2, 36_000 / 8 / 2)
    assert b300.memory_bytes == 275040 * 2**20  # nvidia-smi's total
