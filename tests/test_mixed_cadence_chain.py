"""newuser80 item 2: a nightly LoRA (30 runs a month, 4.9 h each) and a monthly full fine-tune (1 run, 44.5 h) each
bought a $197,000 Dell XE8640, busy 20% and 6% of the month; run_after between them was refused unless both declared
the same runs_per_month. On servers bought or owned they now share one pool: the chain runs as often as its most
frequent job and the monthly job takes 1/30 of its run in each (checkpointed and resumed), so the nightly runs are
never delayed and the pool's month holds 30 x 4.9 + 1 x 44.5 = 193 h of 730. fix138: a monthly job due sooner than its
slices end (730 h) runs stretched, straight through the gaps between the nightly runs, pre-empted by each."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import cast

import pytest

from generator.api import plan_file
from generator.errors import InfeasibleError
from generator.planner.plan import Plan
from generator.workload import load_workload
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
    # the monthly job's slice of each run of the sequence: 1/30 of its run, after the nightly one, and (fix140) its
    # checkpoint written at the slice's end (112.4 GB a node at 3.5 GB/s: 32.1 s) and read back at the next slice's
    # start (at 0.8 x 7 GB/s: 20.1 s)
    pause = details["monthly-full"]["slice_checkpoint_write_s"] + details["monthly-full"]["slice_checkpoint_read_s"]
    assert (details["monthly-full"]["slice_checkpoint_write_s"], details["monthly-full"]["slice_checkpoint_read_s"]) == (
        32.1,
        20.1,
    )
    assert details["monthly-full"]["share_of_run_per_sequence"] == pytest.approx(1 / 30)
    assert details["monthly-full"]["starts_at_hours"] == pytest.approx(nightly, abs=1e-3)
    assert details["monthly-full"]["finishes_at_hours"] == pytest.approx(nightly + monthly / 30 + pause / 3600, abs=1e-3)
    assert details["monthly-full"]["slice_checkpoint_hours_per_run"] == pytest.approx(30 * pause / 3600, abs=1e-3)
    assert details["nightly-lora"]["share_of_run_per_sequence"] is None
    assert not any(k.startswith("slice_") for k in details["nightly-lora"])
    # the pool's month holds every job's hours times its runs, hand: 30 x 4.95 + 1 x 44.46 = 193.0 h, and the 30
    # slices' checkpoints, 30 x 52.2 s = 26 min: 193.4 h
    said = " ".join(f.message for f in chained.findings if f.code == "training-energy-assumed")
    busy = float(re.search(r"run ([\d.]+) h of it", said).group(1))  # type: ignore[union-attr]
    assert busy == pytest.approx(30 * nightly + monthly + 30 * pause / 3600, abs=0.05) == 193.4
    reason = " ".join(next(d for d in chained.deployments if d.name == "monthly-full").reasons)
    assert "checkpointed at the slice's end and resumed in the next" in reason
    assert (
        "each run of the sequence holds 0.03333 of its run and 52 s for its checkpoint, written at the slice's end in "
        "32 s and read back at the next slice's start in 20 s (30 saves and resumes a run of it, in the slice's hours)"
    ) in reason, reason


def test_without_run_after_the_plan_names_the_shared_server(tmp_path: Path) -> None:
    said = [f.message for f in _plan(_write(tmp_path)).findings if f.code == "run-after-idle-servers"]
    assert len(said) == 1, said  # once for the pair
    assert "in slices of its run between the other's runs" in said[0]
    assert re.search(r"capex \$[\d,]+, 4 GPUs against \$[\d,]+/month, capex \$[\d,]+, 8 GPUs", said[0]), said[0]


def _stretched_by_hand(details: dict[str, object], nightly_hours: float) -> float:
    """A stretched run's finish by hand: it starts as the nightly run ends and every nightly run that falls inside
    costs it the nightly's hours plus its checkpoint's write and read back."""
    n, write, read = (
        details[k] for k in ("stretched_preemptions", "stretched_checkpoint_write_s", "stretched_checkpoint_read_s")
    )
    assert isinstance(n, int) and isinstance(write, float) and isinstance(read, float) and isinstance(details["hours"], float)
    return nightly_hours + details["hours"] + n * (nightly_hours + (write + read) / 3600)


def test_a_monthly_deadline_its_stretched_run_misses_is_refused_with_the_figures(tmp_path: Path) -> None:
    """fix138: due in 48 h, far under the 730 h its slices take, the monthly job runs stretched on the one server
    (max_nodes: 1): it starts at the nightly's 4.95 h and each of the 2 nightly runs inside costs it 4.95 h plus its
    checkpoint's write (112.4 GB a node at the XE8640's 3.5 GB/s: 32.1 s) and read back (at 0.8 x 7 GB/s: 20.1 s):
    4.95 + 44.46 + 2 x (4.95 + 52.2 s) = 59.3 h > 48. Refused at the field, with the figures and the ways forward."""
    path = _write(tmp_path, ", deadline_hours: 48, run_after: nightly-lora")
    path.write_text(path.read_text().replace("provider: baremetal,", "provider: baremetal, max_nodes: 1,"))
    with pytest.raises(InfeasibleError) as raised:
        _plan(path)
    said = str(raised.value)
    assert "deployments[1].training.deadline_hours" in said, said
    # review81 item 8: "4.9 h every" and "starts at 4.9 h" until the refusal's hours were rounded as the plan's lines
    # round them (the 4.95 h spec.json keeps, to 0.1 h): the job's reasons said "from 5.0 h" of the same start
    assert "runs straight through the gaps between the runs of nightly-lora (5.0 h every 24.33 h)" in said, said
    assert "its checkpoint written in 32 s and read back in 20 s" in said, said
    assert "its 44.5 h run starts at 5.0 h, is pre-empted by 2 runs of the sequence and ends at 59.3 h, past its 48 h" in said
    assert "a later deadline_hours for monthly-full (59.4 h or more, or 730 h or more to run it in slices" in said, said
    assert "drop its run_after" in said
    # on as many servers as it takes, 2 XE8640 meet it stretched: 4.95 + 27.65 + 1 x (4.95 + 26.1 s) = 37.56 h
    two = _plan(_write(tmp_path, ", deadline_hours: 48, run_after: nightly-lora"))
    (pool,) = two.pools
    monthly = next(d.details for d in two.deployments if d.name == "monthly-full")
    assert pool.nodes == 2 and monthly["stretched_preemptions"] == 1
    nightly = next(d.details for d in two.deployments if d.name == "nightly-lora")["hours"]
    assert monthly["finishes_at_hours"] == pytest.approx(_stretched_by_hand(monthly, nightly), abs=0.02)
    assert monthly["finishes_at_hours"] < 48


def test_a_monthly_deadline_under_its_slices_runs_stretched_between_the_nightly_runs(tmp_path: Path) -> None:
    """fix138: due in 100 h (under 730 h, over the 59.3 h of its stretched run) it shares the one XE8640: from 4.95 h
    straight on, pre-empted by 2 nightly runs, ending at 59.3 h; the nightly keeps its 0-4.95 h and its 8 h deadline."""
    plan = _plan(_write(tmp_path, ", deadline_hours: 100, run_after: nightly-lora"))
    (pool,) = plan.pools
    assert pool.nodes == 1
    details = {d.name: d.details for d in plan.deployments}
    monthly, nightly = details["monthly-full"], details["nightly-lora"]
    assert nightly["starts_at_hours"] == 0 and nightly["finishes_at_hours"] == nightly["hours"] == 4.95
    assert monthly["starts_at_hours"] == nightly["hours"]
    assert monthly["share_of_run_per_sequence"] is None and monthly["stretched_preemptions"] == 2
    # its checkpoint: a node's share of the 2 kept, written at 3.5 GB/s and read at 0.8 x 7 GB/s
    each = monthly["checkpoint_bytes_per_node"] / monthly["checkpoints_kept"]
    assert monthly["stretched_checkpoint_write_s"] == monthly["checkpoint_write_s"] == round(each / 3.5e9, 1) == 32.1
    assert monthly["stretched_checkpoint_read_s"] == round(each / (0.8 * 7e9), 1) == 20.1
    assert monthly["finishes_at_hours"] == pytest.approx(_stretched_by_hand(monthly, nightly["hours"]), abs=0.02)
    assert monthly["finishes_at_hours"] == pytest.approx(59.33, abs=0.01)
    # the rough figure: 44.46 / (1 - 4.95 / 24.33) = 55.8 h, its run alone over the time the nightly runs leave
    assert 55.8 < monthly["finishes_at_hours"] < 100
    reason = " ".join(next(d for d in plan.deployments if d.name == "monthly-full").reasons)
    assert "so it runs stretched: from 5.0 h straight through the gaps between the runs of nightly-lora" in reason, reason
    assert "2 runs of the sequence pre-empt it and it finishes at 59.3 h of the sequence" in reason, reason
    # review81 item 8: the chosen-by line said the same start as "(0.0-4.9 h)" and "(4.9-59.3 h" from the raw 4.9496 h
    assert "(searched) (0.0-5.0 h); monthly-full" in reason and " (5.0-59.3 h, its 44.5 h run straight through" in reason
    # fix140: the pre-emption is started ahead of each nightly run by the checkpoint's write, 24.333 h - 32.1 s
    assert monthly["stretched_checkpoint_at_hours"] == [24.324, 48.658]
    assert (
        "its checkpoint's write started 32 s before that run's start (at 24.324 h, 48.658 h of the sequence), so the "
        "run starts on time, and read back in 20 s after it"
    ) in reason, reason
    assert monthly["stretched_checkpoint_hours_per_run"] == pytest.approx(2 * (32.1 + 20.1) / 3600, abs=1e-3)
    assert "within its 100 h deadline" in reason
    # the pool's month and the monthly job's whole run are as sliced: 30 x 4.95 + 44.46 h of work a month
    said = " ".join(f.message for f in plan.findings if f.code == "training-energy-assumed")
    assert "run 193.0 h of it" in said, said
    # a run holds the 4 GPUs its hours and its 2 pre-emptions' checkpoint writes and reads (fix140)
    held = monthly["hours"] + monthly["stretched_checkpoint_hours_per_run"]
    assert monthly["gpu_hours_per_job"] == pytest.approx(held * 4, abs=0.1) == 177.9  # hours shown to 0.01 h


def test_a_monthly_deadline_its_slices_meet_keeps_the_slices(tmp_path: Path) -> None:
    """fix138: due in 800 h (over 730 h) the monthly job runs in slices as before: 1/30 of its run after each nightly
    run, no job ever delayed; no stretched figures."""
    plan = _plan(_write(tmp_path, ", deadline_hours: 800, run_after: nightly-lora"))
    monthly = next(d.details for d in plan.deployments if d.name == "monthly-full")
    assert monthly["share_of_run_per_sequence"] == pytest.approx(1 / 30)
    assert not any(k.startswith("stretched_") for k in monthly)
    pause = (monthly["slice_checkpoint_write_s"] + monthly["slice_checkpoint_read_s"]) / 3600  # fix140: each slice's
    assert monthly["finishes_at_hours"] - monthly["starts_at_hours"] == pytest.approx(monthly["hours"] / 30 + pause, abs=1e-3)


def test_a_deadline_on_a_less_frequent_job_before_others_is_refused_at_the_field(tmp_path: Path) -> None:
    """Only the chain's last job runs stretched: first in the chain, the nightly job after it would wait for it."""
    path = tmp_path / "first.yaml"
    path.write_text(
        MONTHLY_FIRST.replace("               runs_per_month: 1}", "               runs_per_month: 1, deadline_hours: 100}")
    )
    (error,) = load_errors(path)
    assert re.search(r"deployments\[0\]\.training\.deadline_hours: deadline_hours 100 with runs_per_month 1", error), error
    assert "run it last in the chain (run_after: nightly-lora on it, and drop its own run_after)" in error, error


def test_without_run_after_the_hint_says_the_stretched_run_or_what_keeps_the_jobs_apart(tmp_path: Path) -> None:
    """Due in 100 h, the monthly job shares the nightly's server stretched and the hint says so with its finish; due
    in 8 h, on no pool does it end by then after the nightly's 4.95 h, and the hint says the figures instead."""
    said = [f.message for f in _plan(_write(tmp_path, ", deadline_hours: 100")).findings if f.code == "run-after-idle-servers"]
    assert len(said) == 1 and "run straight through the gaps between the other's runs, pre-empted by 2 of them" in said[0]
    assert "it finishes at 59.3 h" in said[0] and "capex $197,000, 4 GPUs against" in said[0], said
    said = [f.message for f in _plan(_write(tmp_path, ", deadline_hours: 8")).findings if f.code == "run-after-idle-servers"]
    assert len(said) == 1, said
    assert "its deadline_hours 8 keeps it off them: with run_after: nightly-lora on monthly-full" in said[0], said
    # review81 item 8: "starts at 4.9 h" until every sequence hour was rounded once, as spec.json's 4.95
    assert re.search(r"its [\d.]+ h run starts at 5\.0 h, ends at [\d.]+ h, past its 8 h deadline", said[0]), said


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
    nightly's 4.95 h x 1 x $12 = $59.40: $76 a run, and 30 of them the headline month. fix145: the monthly job on 3
    servers with its parameters offloaded (ZeRO-3 alone fits only at DP14, more than one server's DP4; its 14.3 h
    run, 17 s checkpoints), a near tie on cost settled by the fewer servers: 0.48 h x 3 x $12 = $17.3 + $59.40, $77 a run,
    $2,297 the month (30 x $76.57)."""
    import json

    from generator.cli import main

    path = tmp_path / "rented.yaml"
    path.write_text(MONTHLY_FIRST.replace("deadline_hours: 6, ", "") + "prices: {dell-xe8640: 12}\n")
    text = json.dumps(_plan(path).to_dict())
    per_run = {float(x) for x in re.findall(r"\$([0-9,.]+) per run of the sequence", text)}
    assert per_run == {77.0}
    with pytest.raises(SystemExit):
        main(["plan", str(path)])
    month = re.search(r"\$([0-9,]+)/month at the runs_per_month", capsys.readouterr().out)
    assert month is not None
    assert abs(30 * 76.57 - float(month[1].replace(",", ""))) < 30 * 0.5  # the runs' costs add up to the month


def test_a_sliced_jobs_per_job_figures_are_a_whole_run(tmp_path: Path) -> None:
    """review80 item 4: the monthly job's gpu_hours_per_job was its slice's (0.73 h x 8 GPUs = 5.8) beside hours of
    its whole run (21.89); a run is 21.89 h x 8 = 175.1 GPU-hours and 30 slices' energy. fix140 (review80 item 6):
    each slice also writes its checkpoint (16.1 s) and reads it back (10.0 s): 30 x 26.1 s = 0.2175 h a run, so a run
    holds the 8 GPUs 22.11 h, 176.9 GPU-hours, and 30 slices of $13.44."""
    path = tmp_path / "first.yaml"
    path.write_text(MONTHLY_FIRST)
    (monthly,) = [d for d in _plan(path).deployments if d.name == "monthly-full"]
    details = monthly.details
    share = details["share_of_run_per_sequence"]
    slice_h = details["finishes_at_hours"] - details["starts_at_hours"]
    pause_h = (details["slice_checkpoint_write_s"] + details["slice_checkpoint_read_s"]) / 3600
    assert (details["slice_checkpoint_write_s"], details["slice_checkpoint_read_s"]) == (16.1, 10.0)
    assert details["hours"] == pytest.approx((slice_h - pause_h) / share, abs=0.05)
    assert details["slice_checkpoint_hours_per_run"] == pytest.approx(30 * pause_h, abs=1e-3) == 0.2175
    held = details["hours"] + details["slice_checkpoint_hours_per_run"]
    assert details["gpu_hours_per_job"] == pytest.approx(held * 8, abs=0.2) == 176.9
    assert details["usd_per_job"] == pytest.approx(30 * 13.44, abs=0.5)  # 30 slices of $13.44 each


def test_a_stretched_deadline_on_a_job_of_unknown_hours_is_refused_at_the_field(tmp_path: Path) -> None:
    """fix138: last in the chain but without dataset_tokens, a monthly job due in 100 h was planned in slices (they end
    within 730 h) and said to be "within its 100 h deadline"; its stretched finish needs its hours, so it is refused."""
    path = _write(tmp_path, ", deadline_hours: 100, run_after: nightly-lora")
    path.write_text(path.read_text().replace("dataset_tokens: 2000000000, epochs: 2,", ""))
    (error,) = load_errors(path)
    assert "deployments[1].training.deadline_hours: deadline_hours 100 with runs_per_month 1" in error, error
    assert "which are not known without dataset_tokens" in error and "give it dataset_tokens" in error, error


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


def test_a_slices_checkpoint_counts_against_the_deadlines(tmp_path: Path) -> None:
    """fix140 (review80 item 6): on one XE8640 the monthly slice (1/30 of its 44.46 h run: 1.482 h) ran before the
    nightly's 4.95 h and the nightly was said to finish at 6.432 h, within a 6.44 h deadline, with the slice's
    checkpoint write (32.1 s) and read back (20.1 s) uncounted; with them the nightly ends at 6.446 h, past it: refused,
    with the finish to the 0.001 h it takes to read past 6.44; a 6.45 h deadline is met at 6.446."""
    path = tmp_path / "first.yaml"
    one = MONTHLY_FIRST.replace("provider: baremetal,", "provider: baremetal, max_nodes: 1,")
    path.write_text(one.replace("deadline_hours: 6,", "deadline_hours: 6.44,"))
    with pytest.raises(InfeasibleError) as raised:
        _plan(path)
    said = str(raised.value)
    assert "deployments[1].training.deadline_hours" in said, said
    assert "monthly-full 1.5 h (0.0-1.5 h, 0.03333 of its run and its checkpoint's write and read back)" in said, said
    assert "nightly-lora finishes at 6.446 h, past its 6.44 h deadline" in said, said
    path.write_text(one.replace("deadline_hours: 6,", "deadline_hours: 6.45,"))
    turns = {d.name: d.details for d in _plan(path).deployments}
    monthly, nightly = turns["monthly-full"], turns["nightly-lora"]
    pause = (monthly["slice_checkpoint_write_s"] + monthly["slice_checkpoint_read_s"]) / 3600
    assert (monthly["slice_checkpoint_write_s"], monthly["slice_checkpoint_read_s"]) == (32.1, 20.1)
    assert nightly["starts_at_hours"] == monthly["finishes_at_hours"] == pytest.approx(monthly["hours"] / 30 + pause, abs=1e-3)
    assert nightly["finishes_at_hours"] == pytest.approx(1.482 + pause + 4.95, abs=2e-3) == 6.446


def _group_vars_sequence(tmp_path: Path, more: str) -> dict[str, dict[str, object]]:
    """Each job's ``sequence`` entry in the rendered group vars of the pair (nightly first, the monthly job after)."""
    from tests.helpers import ansible_reader, call_cli

    out = tmp_path / "out"
    assert call_cli(tmp_path, ("render", str(_write(tmp_path, more)), "-o", str(out))) == 0
    (group_vars,) = sorted((out / "ansible" / "group_vars").glob("*.yml"))
    jobs = ansible_reader().load(group_vars.read_text())["specgen_deployments"]
    return {j["name"]: j["sequence"] for j in jobs}


def test_group_vars_say_how_a_sliced_job_shares_the_servers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """fix140: a runner reading the group vars alone learns the mode, the share of its run a slice holds, and that it
    checkpoints at the slice's end (32.1 s) and resumes at the next (20.1 s); the nightly job's entry has none of it."""
    seq = _group_vars_sequence(tmp_path, ", deadline_hours: 800, run_after: nightly-lora")
    monthly, nightly = seq["monthly-full"], seq["nightly-lora"]
    assert monthly["mode"] == "sliced" and monthly["share_of_run"] == pytest.approx(1 / 30)
    assert monthly["checkpoint_at_slice_end"] is True and monthly["resume_at_next_slice"] is True
    assert (monthly["checkpoint_write_s"], monthly["checkpoint_read_s"]) == (32.1, 20.1)
    assert monthly["starts_at_hours"] == 4.95 and monthly["finishes_at_hours"] == 6.446  # 4.95 + 1.482 + 52.2 s
    assert "mode" not in nightly and "share_of_run" not in nightly
    capsys.readouterr()


def test_group_vars_say_how_a_stretched_job_is_pre_empted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """fix138 left a stretched job's group vars with its start and finish only (4.95 h, 59.334 h): a runner could not
    know to checkpoint before each nightly run. fix140: the mode, the runs that pre-empt it, when to start the checkpoint
    (each run's start less the write's 32.1 s: 24.333 - 0.009 = 24.324 h, 48.658 h), the read back and resume."""
    seq = _group_vars_sequence(tmp_path, ", deadline_hours: 100, run_after: nightly-lora")
    monthly = seq["monthly-full"]
    assert monthly["mode"] == "stretched" and monthly["interrupted_by"] == ["nightly-lora"]
    assert monthly["interruptions"] == 2 and monthly["period_hours"] == 24.333
    assert monthly["interrupting_runs_hours"] == 4.95
    assert monthly["checkpoint_before_each_run_s"] == 32.1 and monthly["checkpoint_read_s"] == 20.1
    assert monthly["checkpoint_at_hours"] == [24.324, 48.658]
    assert monthly["resume_after_each"] is True
    assert (monthly["starts_at_hours"], monthly["finishes_at_hours"]) == (4.95, 59.334)
    assert "share_of_run" not in monthly and "mode" not in seq["nightly-lora"]
    capsys.readouterr()


def test_a_stretched_miss_whose_gaps_leave_no_time_gets_the_hint_too(tmp_path: Path) -> None:
    """review81 item 12: the idle-servers hint recognised a stretched miss by its refusal's "runs straight through the
    gaps"; where a gap leaves the job no time the refusal says "would run straight through the gaps" and the pair got
    no hint. It now reads the planner's mark (``ChainDeadlineError.stretched``) and the refusal's reasons as built."""
    from types import SimpleNamespace

    from generator.errors import ChainDeadlineError, Location
    from generator.planner import chain_hint, training_chain
    from generator.planner.plan import Pool

    loaded = load_workload(str(_write(tmp_path, ", deadline_hours: 48, run_after: nightly-lora")))
    jobs = training_chain.chain_jobs(loaded, [0, 1])
    candidate = SimpleNamespace(gpu_id="h100-sxm5-80gb", gpus_per_node=4, nodes=1, owned_nodes=0)
    pool = SimpleNamespace(candidate=candidate, hardware=SimpleNamespace(platform=SimpleNamespace(id="dell-xe8640")))
    # the gaps between the nightly runs hold none of the monthly job's run: no Stretch
    blocked = training_chain._stretch_blocked(jobs, pool, training_chain._Miss((4.95, 0.0), 1, True, None))  # type: ignore[arg-type]
    assert "would run straight through the gaps between the runs of nightly-lora, but a gap leaves it no time" in blocked.why
    assert blocked.missed == ("monthly-full", "stretched") and blocked.excess == math.inf
    error = ChainDeadlineError(
        f"the training sequence nightly-lora -> monthly-full (run_after) has no feasible plan: {blocked.text}; to unblock: x",
        Location("w.yaml", 11, 51, "deployments[1].training.deadline_hours"),
        stretched=True,
        reasons=blocked.text,
    )
    nightly, monthly = (d for d in loaded.workload.deployments)
    servers = cast(Pool, SimpleNamespace(nodes=1, node=SimpleNamespace(platform_id="dell-xe8640")))
    said = chain_hint._stretch_blocks(error, monthly, nightly, servers, servers, 0.2)  # type: ignore[arg-type]
    assert said is not None and "would run straight through the gaps" in said and "a gap leaves it no time" in said
    assert not said.count("; to unblock")
