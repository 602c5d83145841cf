"""newuser80 item 2: a nightly LoRA (30 runs a month, 4.9 h each) and a monthly full fine-tune (1 run, 44.5 h) each
bought a $197,000 Dell XE8640, busy 20% and 6% of the month; run_after between them was refused unless both declared
the same runs_per_month. On servers bought or owned they now share one pool: the chain runs as often as its most
frequent job and the monthly job takes 1/30 of its run in each (checkpointed and resumed), so the nightly runs are
never delayed and the pool's month holds 30 x 4.9 + 1 x 44.5 = 193 h of 730."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.api import plan_file
from generator.planner.plan import Plan
from tests.helpers import load_errors

JOBS = """\
version: 1
name: cadences
deployments:
  - name: nightly-lora
    model: Qwen/Qwen2.5-32B-Instruct
    training: {method: lora, lora_rank: 16, sequence_length: 4096, micro_batch_size: 2, dataset_tokens: 200000000,
               deadline_hours: 8, runs_per_month: 30}
  - name: monthly-full
    model: meta-llama/Llama-3.1-8B-Instruct
    training: {method: full, sequence_length: 8192, micro_batch_size: 1, dataset_tokens: 2000000000, epochs: 2,
               runs_per_month: 1MORE}
hardware: {provider: PROVIDER, gpus: [h100-sxm5-80gb], platforms: [dell-xe8640]}
"""


def _write(tmp_path: Path, more: str = "", provider: str = "baremetal") -> Path:
    path = tmp_path / "w.yaml"
    text = JOBS.replace("MORE", more).replace("PROVIDER", provider)
    path.write_text(text if provider == "baremetal" else text.replace(", platforms: [dell-xe8640]", ""))
    return path


def _plan(path: Path) -> Plan:
    return plan_file(str(path))[1]


def test_jobs_of_different_cadences_share_one_bought_server(tmp_path: Path) -> None:
    alone = _plan(_write(tmp_path))
    assert len(alone.pools) == 2  # each job on a server of its own, as before
    chained = _plan(_write(tmp_path, ", run_after: nightly-lora"))
    (pool,) = chained.pools
    assert pool.nodes == 1 and set(pool.deployments) == {"nightly-lora", "monthly-full"}
    assert chained.totals["capex_usd"] == alone.totals["capex_usd"] - 197_000  # one XE8640 not bought
    details = {d.name: d.details for d in chained.deployments}
    nightly, monthly = details["nightly-lora"]["hours"], details["monthly-full"]["hours"]
    # the monthly job's slice of each run of the sequence: 1/30 of its run, after the nightly one
    assert details["monthly-full"]["share_of_run_per_sequence"] == pytest.approx(1 / 30)
    assert details["monthly-full"]["starts_at_hours"] == pytest.approx(nightly, abs=1e-3)
    assert details["monthly-full"]["finishes_at_hours"] == pytest.approx(nightly + monthly / 30, abs=1e-3)
    assert details["nightly-lora"]["share_of_run_per_sequence"] is None
    # the pool's month holds every job's hours times its runs, hand: 30 x 4.9 + 1 x 44.5 = 193 h
    said = " ".join(f.message for f in chained.findings if f.code == "training-energy-assumed")
    busy = float(re.search(r"run ([\d.]+) h of it", said).group(1))  # type: ignore[union-attr]
    assert busy == pytest.approx(30 * nightly + monthly, abs=0.1)
    reason = " ".join(next(d for d in chained.deployments if d.name == "monthly-full").reasons)
    assert "checkpointed at the slice's end and resumed in the next" in reason


def test_without_run_after_the_plan_names_the_shared_server(tmp_path: Path) -> None:
    said = [f.message for f in _plan(_write(tmp_path)).findings if f.code == "run-after-idle-servers"]
    assert len(said) == 1, said  # once for the pair
    assert "in slices of its run between the other's runs" in said[0]
    assert re.search(r"capex \$[\d,]+, 4 GPUs against \$[\d,]+/month, capex \$[\d,]+, 8 GPUs", said[0]), said[0]


def test_a_deadline_of_the_less_frequent_job_keeps_it_off_the_shared_server(tmp_path: Path) -> None:
    """Its run, spread over the chain's 30 runs, ends within 730 h: a 48 h deadline cannot hold so; said at the field,
    and without run_after the hint says what keeps the jobs apart."""
    (error,) = load_errors(_write(tmp_path, ", deadline_hours: 48, run_after: nightly-lora"))
    assert re.search(r"w\.yaml:\d+:\d+: deployments\[1\]\.training\.deadline_hours: deadline_hours 48 with "
                     r"runs_per_month 1, fewer than the 30", error), error  # fmt: skip
    _plan(_write(tmp_path, ", deadline_hours: 730, run_after: nightly-lora"))  # a deadline it meets anyway
    said = [f.message for f in _plan(_write(tmp_path, ", deadline_hours: 48")).findings if f.code == "run-after-idle-servers"]
    assert len(said) == 1 and "monthly-full's deadline_hours 48 keeps it off them" in said[0], said


def test_rented_servers_still_run_a_chain_equally_often(tmp_path: Path) -> None:
    (error,) = load_errors(_write(tmp_path, ", run_after: nightly-lora", provider="aws"))
    assert "on rented servers, paid per run, the jobs of a chain run in turn each time it runs" in error, error


MONTHLY_FIRST = """\
version: 1
name: cadences
deployments:
  - name: monthly-full
    model: meta-llama/Llama-3.1-8B-Instruct
    training: {method: full, sequence_length: 8192, micro_batch_size: 1, dataset_tokens: 2000000000, epochs: 2,
               runs_per_month: 1}
  - name: nightly-lora
    model: Qwen/Qwen2.5-32B-Instruct
    training: {method: lora, lora_rank: 16, sequence_length: 4096, micro_batch_size: 2, dataset_tokens: 200000000,
               deadline_hours: 6, runs_per_month: 30, run_after: monthly-full}
hardware: {provider: baremetal, gpus: [h100-sxm5-80gb], platforms: [dell-xe8640]}
"""


def test_a_slice_that_runs_first_says_it_delays_the_frequent_job(tmp_path: Path) -> None:
    """review80 item 5: with the monthly job first in the chain, its reason said the more frequent jobs' runs "are
    never delayed by it" while the nightly job started at 0.7 h of every run of the sequence. The slice's hours are
    said as the delay, and they are the nightly's start (the turns' own figures)."""
    path = tmp_path / "first.yaml"
    path.write_text(MONTHLY_FIRST)
    plan = _plan(path)
    turns = {d.name: d.details for d in plan.deployments if "sequence" in d.details}
    monthly, nightly = turns["monthly-full"], turns["nightly-lora"]
    slice_h = monthly["finishes_at_hours"] - monthly["starts_at_hours"]
    assert monthly["starts_at_hours"] == 0 and nightly["starts_at_hours"] == monthly["finishes_at_hours"] > 0.5
    reasons = " ".join(r for d in plan.deployments if d.name == "monthly-full" for r in d.reasons)
    assert "never delayed" not in reasons
    assert f"it delays nightly-lora by its slice, {slice_h:.2f} h, in every run of the sequence" in reasons
    # last in the chain (the file of the tests above): never delayed, and said so
    chained = _plan(_write(tmp_path, ", run_after: nightly-lora"))
    last = " ".join(r for d in chained.deployments if d.name == "monthly-full" for r in d.reasons)
    assert "the more frequent jobs' runs are never delayed by it (it runs last)" in last


def test_a_chain_rented_by_the_hour_counts_the_slice(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """review80 item 3: on bare metal priced by the hour, the chain's run was charged the monthly job's whole run
    (10.5 h x 4 nodes x $12 = $504) in every run of the sequence: $562 a run, 30 runs = $16,860 against the
    headline's own $2,285 a month. By hand a run of the sequence holds 1/30 of it, 0.35 h x 4 x $12 = $16.80, and the
    nightly's 4.95 h x 1 x $12 = $59.40: $76 a run, and 30 of them the headline month."""
    import json

    from generator.cli import main

    path = tmp_path / "rented.yaml"
    path.write_text(MONTHLY_FIRST.replace("deadline_hours: 6, ", "") + "prices: {dell-xe8640: 12}\n")
    text = json.dumps(_plan(path).to_dict())
    per_run = {float(x) for x in re.findall(r"\$([0-9,.]+) per run of the sequence", text)}
    assert per_run == {76.0}
    with pytest.raises(SystemExit):
        main(["plan", str(path)])
    month = re.search(r"\$([0-9,]+)/month at the runs_per_month", capsys.readouterr().out)
    assert month is not None
    assert abs(30 * 76.2 - float(month[1].replace(",", ""))) < 30 * 0.5  # the runs' costs add up to the month


def test_a_sliced_jobs_per_job_figures_are_a_whole_run(tmp_path: Path) -> None:
    """review80 item 4: the monthly job's gpu_hours_per_job was its slice's (0.73 h x 8 GPUs = 5.8) beside hours of
    its whole run (21.89); a run is 21.89 h x 8 = 175.1 GPU-hours and 30 slices' energy."""
    path = tmp_path / "first.yaml"
    path.write_text(MONTHLY_FIRST)
    (monthly,) = [d for d in _plan(path).deployments if d.name == "monthly-full"]
    details = monthly.details
    share = details["share_of_run_per_sequence"]
    slice_h = details["finishes_at_hours"] - details["starts_at_hours"]
    assert details["hours"] == pytest.approx(slice_h / share, abs=0.1)
    assert details["gpu_hours_per_job"] == pytest.approx(details["hours"] * 8, abs=0.2) == 175.1
    assert details["usd_per_job"] == pytest.approx(30 * 13.31, abs=0.5)  # 30 slices of $13.31 each


def test_a_sliced_job_of_unknown_hours_is_not_said_to_end_in_time(tmp_path: Path) -> None:
    """hostile81 item 6: the monthly job without dataset_tokens (its hours unknown) was said to end "within 30 runs of
    the sequence", a claim no figure backed; it now says that is not checked, and why."""
    path = _write(tmp_path, ", run_after: nightly-lora")
    path.write_text(path.read_text().replace("dataset_tokens: 2000000000, epochs: 2,", ""))
    (monthly,) = [d for d in _plan(path).deployments if d.name == "monthly-full"]
    (said,) = [r for r in monthly.reasons if "runs less often than the sequence" in r]
    assert "a run of it ends within" not in said
    assert (
        "a run of it is to end within 30 runs of the sequence, which is not checked: the sequence's hours are not known "
        "(a job of it gives no dataset_tokens), and the more frequent jobs' runs are never delayed by it (it runs last)"
    ) in said
