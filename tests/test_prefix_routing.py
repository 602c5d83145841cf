"""``cached_prompt_share`` under a router blind to prefixes (newuser73 item 11): ``prefix-routing``, ``prefix_routing``.

Each replica's engine keeps its own prefix cache. agent-eks (Llama 3.3 70B FP8, 40,000-token prompts with 0.8 of each
cached, 4 req/s on AWS) planned 4 x TP8 H100 at $160,717/month on the share in full, while its routers (``free_place``:
any replica with a place free; ``even``: a Service's random pick) send a session's next turn to any replica, which
holds the session's prompt only as far as the last turn it served (review76 item 9: ~0.39 of it on 4 replicas, not
0.8 / 4), and nothing said so.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.api import plan_file
from generator.errors import InputError
from generator.planner.prefix_routing import diluted_share
from generator.workload import load_workload

AGENT = """\
version: 1
name: agent-eks
deployments:
  - name: agent
    model: meta-llama/Llama-3.3-70B-Instruct
    inference:
      precision: fp8
      kv_cache_precision: fp8
      max_context_tokens: 65536
      avg_input_tokens: 40000
      avg_output_tokens: 600
      cached_prompt_share: {share}
      requests_per_second: {rate}
{extra}      slo:
        ttft_p95_ms: {ttft}
        tpot_ms: 50
hardware:
  provider: aws
objective: cost
kubernetes:
  location: us-east-1
outputs: [terraform, ansible, kubernetes]
"""


def _agent(tmp_path: Path, share: float, rate: float = 4, extra: str = "", name: str = "agent.yaml", ttft: int = 3000) -> Path:
    path = tmp_path / name
    path.write_text(AGENT.format(share=share, rate=rate, extra=extra, ttft=ttft))
    return path


def _warnings(path: Path) -> list[str]:
    return [f.message for f in plan_file(str(path))[1].findings if f.code == "prefix-routing"]


@pytest.mark.parametrize(
    ("share", "replicas", "diluted"),
    [
        (0.8, 1, 0.8),
        # by hand, each turn adding 0.2 of the prompt: the last turn on this replica 1, 2, 3, 4 turns ago holds 0.8,
        # 0.6, 0.4, 0.2 of it, with probability 1/N (1 - 1/N)^(j - 1) each
        (0.8, 5, 0.2 * 0.8 + 0.16 * 0.6 + 0.128 * 0.4 + 0.1024 * 0.2),  # 0.328 (review76 item 9)
        (0.8, 4, 0.25 * 0.8 + 0.1875 * 0.6 + 0.140625 * 0.4 + 0.10546875 * 0.2),
        (0.5, 2, 0.25),  # only the last turn's prefix: the one before holds none of it
        (0.0, 4, 0.0),
    ],
)  # fmt: skip
def test_a_blind_router_finds_as_much_as_the_replicas_last_turn_of_the_session(
    share: float, replicas: int, diluted: float
) -> None:
    assert diluted_share(share, replicas) == pytest.approx(diluted)


@pytest.mark.parametrize(
    ("extra", "rate", "ttft", "warned"),
    [
        ("", 4, 3000, True),  # prefix_routing none (the default), 4 replicas: warned
        ("      prefix_routing: none\n", 4, 3000, True),
        ("      routing: even\n      prefix_routing: session\n", 4, 3000, False),  # the router keeps sessions
        ("      prefix_routing: measured\n", 4, 3000, False),  # measured on the fleet as routed
        ("", 0.2, 3000, True),  # 2 x TP4 on one p5 (at 0.1 req/s fix90's places at the share plan one): 1 of 2
        ("", 0.1, 1200, False),  # 1 x TP8: its own prefix is always there
    ],
)
def test_the_warning_stands_where_the_share_rests_on_a_blind_router(
    tmp_path: Path, extra: str, rate: float, ttft: int, warned: bool
) -> None:
    assert bool(_warnings(_agent(tmp_path, 0.8, rate, extra, ttft=ttft))) is warned


def test_the_warning_gives_the_plan_at_the_share_over_the_replicas(tmp_path: Path) -> None:
    """Its figures are those of the workload planned at the share a blind router finds over N, the replicas it needs."""
    path = _agent(tmp_path, 0.8)
    (text,) = _warnings(path)
    whole = plan_file(str(path))[1]
    assert whole.deployments[0].replicas == 6  # 6 x TP4 on H200 (4 x TP8 H100 before fix90's places at the share)
    n = int(re.search(r"the replica it picks \(1 of (\d+)", text).group(1))  # type: ignore[union-attr]
    share = diluted_share(0.8, n)
    diluted = plan_file(str(_agent(tmp_path, share, extra="      prefix_routing: measured\n", name="d.yaml")))[1]
    assert diluted.deployments[0].replicas <= n  # the count it is divided by is one the diluted share keeps
    assert f"~{share:.2g} of a prompt (each turn adding 0.2 of it;" in text
    assert f"at which the plan is ${diluted.totals['usd_per_month']:,.0f}/month" in text
    assert f"against ${whole.totals['usd_per_month']:,.0f}/month" in text
    assert diluted.totals["usd_per_month"] > whole.totals["usd_per_month"]
    assert "prefix_routing: session" in text and "llm-d" in text and "production-stack" in text


def test_a_session_router_needs_a_queue_each(tmp_path: Path) -> None:
    """A router that keeps a session on its replica is not one sending a request to any replica with a place free."""
    path = _agent(tmp_path, 0.8, extra="      routing: free_place\n      prefix_routing: session\n")
    with pytest.raises(InputError, match=r"prefix_routing session: .*set routing: even") as err:
        load_workload(str(path))
    assert ":15:" in str(err.value)  # at the prefix_routing line
