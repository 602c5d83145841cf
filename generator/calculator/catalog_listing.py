"""``specgen catalog cpus|nics|drives|prices``: the rest of the catalog, as rows with sources.

Each row carries the record's first ``source`` so a user can check the figure behind a plan.
"""

from __future__ import annotations

from typing import Any

from generator import catalog
from generator.catalog.records import dram_bandwidth_gb_per_s

KINDS = ("cpus", "nics", "drives", "prices")


def listing_rows(kind: str) -> list[dict[str, Any]]:
    """Rows of one of :data:`KINDS`, sorted by id."""
    if kind == "cpus":
        return [
            {
                "id": c.id,
                "name": c.name,
                "cores": c.cores,
                "memory_channels": c.memory_channels,
                "ddr_mt_per_s": c.ddr_mt_per_s,
                "dram_gb_per_s": round(dram_bandwidth_gb_per_s(c.memory_channels, c.ddr_mt_per_s), 1),
                "pcie_lanes": c.pcie_lanes,
                "tdp_w": c.tdp_w,
                "source": c.source[0] if c.source else "unsourced",
            }
            for c in sorted(catalog.cpus().values(), key=lambda c: c.id)
        ]
    if kind == "nics":
        return [
            {
                "id": n.id,
                "name": n.name,
                "protocol": n.protocol,
                "ports": n.ports,
                "port_gbps": n.port_gbps,
                "gpudirect_rdma": n.gpudirect_rdma,
                "power_w": n.power_w,
                "source": n.source[0] if n.source else "unsourced",
            }
            for n in sorted(catalog.nics().values(), key=lambda n: n.id)
        ]
    if kind == "drives":
        return [
            {
                "id": d.id,
                "name": d.name,
                "capacity_tb": d.capacity_tb,
                "seq_read_gb_per_s": d.seq_read_gb_per_s,
                "seq_write_gb_per_s": d.seq_write_gb_per_s,
                "power_w_active": d.power_w_active,
                "source": d.source[0] if d.source else "unsourced",
            }
            for d in sorted(catalog.drives().values(), key=lambda d: d.id)
        ]
    return [
        {"id": p.id, "platform": p.platform_id, "usd": p.usd, "unit": p.unit, "source": p.source[0] if p.source else "unsourced"}
        for p in sorted(catalog.prices().values(), key=lambda p: p.id)
    ]
