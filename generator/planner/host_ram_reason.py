"""The host RAM reason of a training job: the OS reserve, what the job holds beyond it, and their sum (fix154 item 3).

``host_ram_bytes_per_node`` (spec.json / SPEC.md) is what a node's processes hold beyond the OS reserve
(``host_os_ram_bytes``, 16 GiB): finetune-8b-qlora's 10,000,000,000 B sat beside "16 GiB kept for the OS and its
processes + 4.66 GiB ... x 2 GPUs" with nothing saying the figure leaves the 16 GiB out (newuser87). The reason now gives
the sum a node needs and says which part the figure is.
"""

from __future__ import annotations

from generator.units import GIB


def host_ram_reason(os_reserve_bytes: int, beyond_bytes: int, beyond_text: str) -> str:
    """The reason: the OS reserve + what the job holds = their sum, and which part host_ram_bytes_per_node is."""
    reserve = os_reserve_bytes / GIB
    return (
        f"host RAM per node: {reserve:g} GiB kept for the OS and its processes + {beyond_text} = "
        f"{(os_reserve_bytes + beyond_bytes) / GIB:.2f} GiB; host_ram_bytes_per_node ({beyond_bytes:,} B, "
        f"{beyond_bytes / GIB:.2f} GiB) is the part beyond the OS's {reserve:g} GiB"
    )
