"""The threads a llama.cpp-family line runs with (its ``--threads``): a plan's and the estimate's alike (acc146).

A workload's plan renders them (``details.llama_cpp_threads``, Ansible's ``args``); the estimate's own line carried
none (fix163's report: on 2+ sockets its line under ``--numa numactl`` left llama.cpp's default, every socket's cores,
where the plan's ran the bound socket's), so both take them from here.
"""

from __future__ import annotations

from generator import catalog

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from typing import Any

    from generator.calculator.machine import FixedSpec
    from generator.sizing.offload import Machine, Placement


def llama_cpp_threads(fixed: FixedSpec, machine: Machine, options: dict[str, Any]) -> int | None:
    """The threads a llama.cpp-family line runs with (its ``--threads``), None where left to its default.

    ``threads`` as given (a workload's ``hardware.fixed.threads``, fix159; the estimate's ``--threads``), the CPU's
    share timed on the cores they take (:func:`~generator.calculator.machine.thread_cores`), but at most the socket's
    threads where the line binds llama.cpp to one node (fix163: more were rendered, to wait for its cores;
    :func:`generator.planner.fixed.threads_past_node`); else the given CPU's cores the share was timed on (one
    socket's where bound to one node), but where the weights spread over every NUMA node (``--numa distribute``, whose
    threads are llama.cpp's default over all of them) or no CPU is given (llama.cpp's default counts the real
    machine's cores, which the plan does not know). ``options``: the line's (:func:`offload_report.llama_cpp_options`).
    """
    if fixed.threads:
        cpu = catalog.cpus().get(fixed.cpu or "")
        if "numactl" in options and cpu is not None:  # fix163: bound to one node, at most its socket's threads
            return min(fixed.threads, cpu.socket_threads)
        return fixed.threads
    if options.get("numa") == "distribute":
        return None
    return int(machine.cpu_cores) if fixed.cpu and machine.cpu_cores else None


def estimate_thread_args(spec: FixedSpec, machine: Machine, options: dict[str, Any], placement: Placement) -> list[str]:
    """The ``--threads N`` the estimate's own line carries: a plan's (:func:`llama_cpp_threads`) where they matter.

    Where ``--threads`` is given (the CPU's share was timed at them) or the machine has several sockets (llama.cpp's
    default threads are every socket's physical cores, where the line binds it to one node's), and something runs on
    the CPU (``placement`` offloaded); else none, the line as before: on one socket llama.cpp's default is the cores
    the share was timed on.
    """
    if not placement.offloaded or not (spec.threads or spec.cpu_sockets > 1):
        return []
    threads = llama_cpp_threads(spec, machine, options)
    return ["--threads", str(threads)] if threads else []
