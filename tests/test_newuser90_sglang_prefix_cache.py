"""An SGLang service crediting cached_prompt_share is pointed at SGLang's prefix cache, router and metric (newuser90).

DeepSeek-R1 with ``engine: sglang`` and ``cached_prompt_share: 0.5`` on 8 x H200 servers: the prefix-routing warning
cited vLLM's automatic prefix caching page and vLLM production-stack's router as the way to keep the share, and the
deployment's Why said the share is measured as ``vllm:prefix_cache_hits / vllm:prefix_cache_queries``, counters an
SGLang server does not export. SGLang keeps its prefix cache in RadixAttention's radix tree, its router's
``cache_aware`` policy (the default) routes to the worker holding a request's prefix, and its /metrics report
``sglang:cache_hit_rate``. vLLM services keep vLLM's text.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.planner import plan_workload
from generator.planner.prefix_routing import (
    PRODUCTION_STACK_PREFIX_ROUTING_DOCS,
    SGLANG_RADIX_CACHE_DOCS,
    SGLANG_ROUTER_DOCS,
    VLLM_PREFIX_CACHE_DOCS,
)
from generator.workload import load_workload

WORKLOAD = """\
version: 1
name: r1-agents
deployments:
  - name: r1
    model: deepseek-ai/DeepSeek-R1
    inference:
      engine: {engine}
      precision: fp8
      kv_cache_precision: fp8
      max_context_tokens: 32768
      avg_input_tokens: 3000
      avg_output_tokens: 1000
      requests_per_second: 5
      cached_prompt_share: 0.5
      slo:
        ttft_p95_ms: 2000
        tpot_ms: 50
hardware:
  gpus: [h200-sxm-141gb]
  provider: baremetal
  rack_power_kw: 40
"""


@pytest.mark.parametrize("engine", ["sglang", "vllm"])
def test_prefix_cache_texts_follow_the_engine(tmp_path: Path, engine: str) -> None:
    path = tmp_path / "r1.yaml"
    path.write_text(WORKLOAD.format(engine=engine))
    plan = plan_workload(load_workload(str(path)))
    (deployment,) = plan.deployments
    assert deployment.replicas >= 2
    (finding,) = [f for f in plan.findings if f.code == "prefix-routing"]
    why = " ".join(deployment.reasons)
    if engine == "sglang":
        assert SGLANG_RADIX_CACHE_DOCS in finding.message and SGLANG_ROUTER_DOCS in finding.message
        assert "cache_aware" in finding.message
        assert VLLM_PREFIX_CACHE_DOCS not in finding.message
        assert PRODUCTION_STACK_PREFIX_ROUTING_DOCS not in finding.message
        assert "sglang:cache_hit_rate" in why and "vllm:prefix_cache_hits" not in why
    else:
        assert VLLM_PREFIX_CACHE_DOCS in finding.message
        assert PRODUCTION_STACK_PREFIX_ROUTING_DOCS in finding.message
        assert SGLANG_ROUTER_DOCS not in finding.message
        assert "vllm:prefix_cache_hits / vllm:prefix_cache_queries" in why and "sglang:" not in why
