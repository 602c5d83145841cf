"""``specgen catalog cpus|nics|drives|prices|purchases``: the rest of the catalog, as rows with sources.

Each row carries the record's first ``source`` so a user can check the figure behind a plan.
"""

from __future__ import annotations

from typing import Any

from generator import catalog
from generator.calculator.report import rows_by_id
from generator.catalog.records import PurchaseRecord, dram_bandwidth_gb_per_s
from generator.workload.capacity_type import spot_key

KINDS = ("cpus", "nics", "drives", "prices", "purchases")


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
    if kind == "purchases":
        return purchase_rows()
    return rows_by_id(
        {**catalog.prices(), **catalog.spot_prices()},  # a spot rate under its <platform>@spot key (review80 item 14)
        lambda p: {
            "id": p.id,
            "platform": spot_key(p.platform_id) if p.spot else p.platform_id,
            "usd": p.usd,
            "unit": p.unit,
            # newuser83 item 4: an hourly cloud price is one region's list price, read on one day: a buyer in another
            # region, or a month later, sees both (the id's suffix alone named the region; the date was not shown)
            "as_of": p.as_of or "undated",
            "region": p.region,
            # newuser73 items 2 and 12: whose page the source is, the provider's or a third party's table
            # src97: a figure no source a user can open states (read in an unlinked third party's table) says so
            "sourced_by": "unsourced" if p.usd_unsourced else "third party" if p.third_party else "provider",
        },
        sourced=True,
    )


def purchase_rows() -> list[dict[str, Any]]:
    """Purchase prices (which end of a range, how dated, whether estimated), then what could not be priced."""
    rows = rows_by_id(
        catalog.purchases(),
        lambda r: {
            "id": r.id,
            "kind": r.kind,
            "for": r.platform_id or r.gpu_id,
            "usd": r.usd,
            "basis": r.basis
            + (f", {r.range_end} end" if r.range_end != "single" else "")
            + (f"; {r.stands_in}" if r.stands_in else "")
            + (f"; {r.derived_from}" if r.derived_from else ""),  # newuser80 item 4: what it is derived from
            "as_of": r.as_of,
            "available": _available(r),
            "estimated": r.estimated,
        },
        sourced=True,
    )
    rows += [
        {"id": f"{key}-unpriced", "kind": "unpriced", "for": key, "usd": None, "basis": why, "as_of": "", "available": ""}
        | {"estimated": False, "source": "unsourced"}
        for key, why in sorted(catalog.unpriced().items())
    ]
    return rows


#: The widest ``basis`` the purchases table shows: every row is padded to its column's widest cell, and the longest
#: basis (285 characters) padded each of them past 540 (newuser77 item 7).
TABLE_BASIS_CHARS = 60


def purchase_table_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """:func:`purchase_rows` as the table shows them: each ``basis`` to its first clause (before ';').

    At most :data:`TABLE_BASIS_CHARS` characters, "..." where cut; ``--json`` keeps the whole text.
    """
    out = []
    for row in rows:
        basis = str(row["basis"])
        first = basis.split(";", maxsplit=1)[0].strip()
        if len(first) > TABLE_BASIS_CHARS:
            first = first[: TABLE_BASIS_CHARS - 3].rstrip() + "..."
        elif first != basis:
            first += " ..."
        out.append(row | {"basis": first})
    return out


def _available(rec: PurchaseRecord) -> str:
    """Whether the product is sold new, as its record says with the date of its sources (blank where not recorded).

    A product not sold new is never bought by the planner (newuser30 item 11); one whose production ended says when.
    """
    a = rec.availability
    if a is None:
        return ""
    ended = f", production ended {a.production_ended}" if a.production_ended else ""
    return f"{'sold new' if a.sold_new else 'not sold new'}{ended} (as of {a.as_of}; {a.source[0]})"
