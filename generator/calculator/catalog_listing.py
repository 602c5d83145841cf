"""``specgen catalog cpus|nics|drives|prices``: the rest of the catalog, as rows with sources.

Each row carries the record's first ``source`` so a user can check the figure behind a plan.
"""

from __future__ import annotations

from typing import Any

from generator import catalog
from generator.calculator.report import rows_by_id
from generator.catalog.records import dram_bandwidth_gb_per_s

KINDS = ("cpus", "nics", "drives", "prices")


def listing_rows(kind: str) -> list[dict[str, Any]]:
    """Rows of one of :data:`KINDS`, sorted by id."""
    if kind == "cpus":
        return rows_by_id(
            catalog.cpus(),
            lambda c: {
                "id": c.id,
                "name": c.name,
                "cores": c.cores,
                "memory_channels": c.memory_channels,
                "ddr_mt_per_s": c.ddr_mt_per_s,
                "dram_gb_per_s": round(dram_bandwidth_gb_per_s(c.memory_channels, c.ddr_mt_per_s), 1),
                "pcie_lanes": c.pcie_lanes,
                "tdp_w": c.tdp_w,
            },
            sourced=True,
        )
    if kind == "nics":
        return rows_by_id(
            catalog.nics(),
            lambda n: {
                "id": n.id,
                "name": n.name,
                "protocol": n.protocol,
                "ports": n.ports,
                "port_gbps": n.port_gbps,
                "gpudirect_rdma": n.gpudirect_rdma,
                "power_w": n.power_w,
            },
            sourced=True,
        )
    if kind == "drives":
        return rows_by_id(
            catalog.drives(),
            lambda d: {
                "id": d.id,
                "name": d.name,
                "capacity_tb": d.capacity_tb,
                "seq_read_gb_per_s": d.seq_read_gb_per_s,
                "seq_write_gb_per_s": d.seq_write_gb_per_s,
                "power_w_active": d.power_w_active,
            },
            sourced=True,
        )
    return rows_by_id(
        catalog.prices(), lambda p: {"id": p.id, "platform": p.platform_id, "usd": p.usd, "unit": p.unit}, sourced=True
    )
