"""``specgen catalog prices`` / ``purchases`` print money rounded, the JSON exact (newuser79 item 13: the text showed
``88.4899999025753`` and ``5.06879789041096``, the stored floats)."""

from __future__ import annotations

import json
import re

import pytest

from generator import catalog
from generator.calculator.report import money_cell
from tests.helpers import specgen_in_process as specgen


@pytest.mark.parametrize(
    ("usd", "text"),
    [
        (88.4899999025753, "88.49"),
        (5.06879789041096, "5.0688"),
        (3.912, "3.912"),  # AWS quotes a tenth of a cent: kept
        (0.706832255, "0.7068"),
        (199000.0, "199,000.00"),
        (8000, "8,000.00"),
        (0.5, "0.50"),
    ],
)
def test_money_is_rounded_to_at_most_four_decimals_and_at_least_two(usd: float, text: str) -> None:
    assert money_cell(usd) == text


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code, out, err = specgen(capsys, "catalog", *args)
    assert code == 0, err
    return out


def test_catalog_prices_text_shows_no_raw_float_and_json_keeps_the_exact_value(capsys: pytest.CaptureFixture[str]) -> None:
    text = _run(capsys, "prices")
    assert "88.4899999025753" not in text and "5.06879789041096" not in text
    (line,) = [row for row in text.splitlines() if row.startswith("gcp-a3-highgpu-8g-on-demand-us-central1 ")]
    assert line.split()[2] == "88.49"
    usd_column = [row.split()[2] for row in text.splitlines()[1:] if row.split()[2][0].isdigit()]
    assert usd_column and all(re.fullmatch(r"[\d,]+\.\d{2,4}", cell) for cell in usd_column)
    rows = {r["id"]: r for r in json.loads(_run(capsys, "prices", "--json"))}
    exact = catalog.prices()["gcp-a3-highgpu-8g-on-demand-us-central1"].usd
    assert rows["gcp-a3-highgpu-8g-on-demand-us-central1"]["usd"] == exact


def test_catalog_prices_say_each_price_region_and_date(capsys: pytest.CaptureFixture[str]) -> None:
    """newuser83 item 4: a buyer in westeurope reading `catalog prices` saw $84.80 for an ND H200 v5 with no region but
    the id's suffix and no date, though the record holds both (eastus2, read 2026-10-07); an undated price says so."""
    rows = {r["id"]: r for r in json.loads(_run(capsys, "prices", "--json"))}
    for key, rec in catalog.prices().items():
        assert (rows[key]["region"], rows[key]["as_of"]) == (rec.region, rec.as_of or "undated")
    h200 = rows["azure-standard-nd96isr-h200-v5-payg-eastus2"]
    assert (h200["region"], h200["as_of"]) == ("eastus2", "2026-10-07")
    assert rows["azure-standard-nc4as-t4-v3-payg-eastus2"]["as_of"] == "undated"  # its source gives no date
    text = _run(capsys, "prices")
    header = text.splitlines()[0].split()
    assert header == ["id", "platform", "usd", "unit", "as_of", "region", "sourced_by", "source"]
    (line,) = [row for row in text.splitlines() if row.startswith("azure-standard-nd96isr-h200-v5-payg-eastus2 ")]
    # src97: read from third parties' tables quoting Azure's Retail Prices API, never from Microsoft
    assert line.split()[2:9] == ["84.80", "hour", "2026-10-07", "eastus2", "third", "party", h200["source"]]
