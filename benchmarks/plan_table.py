"""The plan of every shipped example as one Markdown table: pools, GPUs, capex, opex and reasons.

Usage: python benchmarks/plan_table.py [--all-reasons] [EXAMPLE.yaml ...]  (from the repository root)

Run it on two commits to show what a change does to every example's plan (issue #8). Per example:
the pools (servers x platform, GPUs per server, GPU), GPUs bought and idle, capex, opex per month,
the all-in monthly cost, and the reason each deployment's hardware was chosen (``--all-reasons``:
every reason). Fields an older plan lacks are shown as a dash; an infeasible example shows why.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from generator.api import plan_file  # noqa: E402
from generator.errors import SpecgenError  # noqa: E402

COLUMNS = ("example", "pools", "GPUs (idle)", "capex", "opex/month", "total/month", "reasons")


def _usd(value: Any) -> str:
    return f"${value:,.0f}" if isinstance(value, (int, float)) else "-"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _pools(plan: dict[str, Any]) -> str:
    parts = []
    for pool in plan.get("pools") or ():
        node = pool.get("node") or {}
        owned = pool.get("owned_nodes") or 0
        text = f"{pool.get('nodes')} x {node.get('platform_id')} ({node.get('gpus')} x {node.get('gpu_id')})"
        parts.append(text + (f", {owned} owned" if owned else ""))
    return "<br>".join(parts) or "-"


def _gpus(plan: dict[str, Any]) -> str:
    totals = plan.get("totals") or {}
    pools = plan.get("pools") or ()
    bought = sum((p.get("nodes") or 0) * ((p.get("node") or {}).get("gpus") or 0) for p in pools)
    idle = totals.get("idle_gpus")
    return f"{bought} ({idle if idle is not None else '-'})"


def _reasons(plan: dict[str, Any], everything: bool) -> str:
    lines = []
    for dep in plan.get("deployments") or ():
        reasons = list(dep.get("reasons") or ())
        if not everything:
            reasons = [r for r in reasons if r.startswith("chosen")] or reasons[-1:]
        lines += [f"{dep.get('name')}: {r}" for r in reasons]
    return "<br>".join(_cell(line) for line in lines) or "-"


def _name(path: Path) -> str:
    resolved = path.resolve()
    return str(resolved.relative_to(REPO / "examples")) if resolved.is_relative_to(REPO / "examples") else path.name


def row(path: Path, everything: bool) -> tuple[str, ...]:
    """One table row for one workload file."""
    try:
        _, plan = plan_file(str(path))
    except SpecgenError as exc:
        message = str(exc).replace(f"{path.resolve().parent}/", "")
        return (_name(path), "-", "-", "-", "-", "-", _cell(f"{type(exc).__name__}: {message}"))
    data = plan.to_dict()
    totals = data.get("totals") or {}
    return (
        _name(path),
        _pools(data),
        _gpus(data),
        _usd(totals.get("capex_usd")),
        _usd(totals.get("opex_usd_per_month")),
        _usd(totals.get("usd_per_month")),
        _reasons(data, everything),
    )


def table(paths: list[Path], everything: bool = False) -> str:
    """The Markdown table of ``paths`` (one row each, in the order given)."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(row(p, everything)) + " |" for p in paths]
    return "\n".join(lines) + "\n"


def main() -> None:
    """Print the table of the given files, or of every ``examples/*.yaml`` (infeasible ones included)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--all-reasons", action="store_true", help="every reason of every deployment, not just the choice")
    args = parser.parse_args()
    paths = args.files or sorted((REPO / "examples").glob("**/*.yaml"))
    sys.stdout.write(table(paths, args.all_reasons))


if __name__ == "__main__":
    main()
