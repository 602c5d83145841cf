from __future__ import annotations

import copy
import itertools
import json
import re
from collections import defaultdict
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from jsonschema import Draft202012Validator

from generator.sizing.architecture import parse_architecture

REPO = Path(__file__).resolve().parents[1]
CATALOG = REPO / "generator" / "catalog"
SCHEMAS = REPO / "schemas" / "catalog"
REFERENCE = REPO / "tests" / "reference"
NOTES = REFERENCE / "hardware_facts_notes.md"
PARAM_COUNTS = REFERENCE / "configs" / "param_counts.json"

KINDS = [
    "cpus",
    "drives",
    "gpu_regions",
    "gpu_zones",
    "gpus",
    "host_minimums",
    "mig_profiles",
    "models",
    "nics",
    "platforms",
    "prices",
    "purchases",
    "software",
    "throughput_gaps",
    "tool_parsers",
]
KIND_PARAMS = [pytest.param(kind, id=kind) for kind in KINDS]
DELETE = object()


@cache
def load(kind: str) -> Mapping[str, Any]:
    data: dict[str, Any] = json.loads((CATALOG / f"{kind}.json").read_text(encoding="utf-8"))
    return data


@cache
def load_schema(kind: str) -> Mapping[str, Any]:
    data: dict[str, Any] = json.loads((SCHEMAS / f"{kind}.schema.json").read_text(encoding="utf-8"))
    return data


def records(kind: str) -> list[Mapping[str, Any]]:
    recs: list[Mapping[str, Any]] = load(kind)[kind]
    return recs


def by_id(kind: str) -> dict[str, Mapping[str, Any]]:
    return {rec["id"]: rec for rec in records(kind)}


def schema_errors(kind: str, instance: Any) -> list[str]:
    validator = Draft202012Validator(load_schema(kind))
    return sorted(f"{err.json_path}: {err.message[:300]}" for err in validator.iter_errors(instance))


def has_field(node: Any, path: str) -> bool:
    """True when the dotted path names a key of node (keys may themselves contain dots)."""
    if not isinstance(node, Mapping):
        return False
    if path in node:
        return True
    return any(path.startswith(f"{key}.") and has_field(value, path[len(key) + 1 :]) for key, value in node.items())


def paths_not_in_record(kind: str, key: str) -> list[str]:
    """The entries of each record's key (a list or an object of dotted paths) that name no field of the record."""
    return [f"{rec['id']}: {path}" for rec in records(kind) for path in rec.get(key) or () if not has_field(rec, path)]


def values_at(node: Any, path: tuple[str, ...]) -> Iterator[Any]:
    """Every non-null value at path; '*' walks a list."""
    if not path:
        if node is not None:
            yield node
        return
    head, rest = path[0], path[1:]
    if head == "*":
        for item in node if isinstance(node, list) else ():
            yield from values_at(item, rest)
    elif isinstance(node, Mapping) and head in node:
        yield from values_at(node[head], rest)


def described_properties(node: Any, where: str = "$") -> Iterator[str]:
    """JSON paths of schema properties without a description ('if' conditions are not definitions)."""
    if isinstance(node, Mapping):
        props = node.get("properties")
        if isinstance(props, Mapping):
            yield from (f"{where}.properties.{name}" for name, sub in props.items() if "description" not in sub)
        for key, value in node.items():
            if key != "if":
                yield from described_properties(value, f"{where}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from described_properties(value, f"{where}[{i}]")


# ---------------------------------------------------------------- files and schemas


def test_every_catalog_file_has_a_schema() -> None:
    assert sorted(p.name.removesuffix(".json") for p in CATALOG.glob("*.json")) == KINDS
    assert sorted(p.name.removesuffix(".schema.json") for p in SCHEMAS.glob("*.schema.json")) == KINDS


@pytest.mark.parametrize("kind", KIND_PARAMS)
def test_schema_is_valid_draft_2020_12(kind: str) -> None:
    schema = load_schema(kind)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema.get("title")
    Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("kind", KIND_PARAMS)
def test_schema_file_is_formatted(kind: str) -> None:
    text = (SCHEMAS / f"{kind}.schema.json").read_text(encoding="utf-8")
    assert text == json.dumps(load_schema(kind), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("kind", KIND_PARAMS)
def test_every_schema_property_has_a_description(kind: str) -> None:
    assert list(described_properties(load_schema(kind))) == []


@pytest.mark.parametrize("kind", KIND_PARAMS)
def test_catalog_file_matches_its_schema(kind: str) -> None:
    Draft202012Validator.check_schema(load_schema(kind))
    errors = schema_errors(kind, load(kind))
    assert not errors, f"{kind}.json has {len(errors)} schema error(s):\n" + "\n".join(errors)


# Each row breaks one rule in a copy of the first record; the schema must reject it.
BAD_RECORDS = [
    pytest.param("gpus", ("vendor",), "nvidea", id="gpus-vendor-enum"),
    pytest.param("gpus", ("id",), "H100-SXM5-80GB", id="gpus-id-upper-case"),
    pytest.param("gpus", ("memory_gb",), 0, id="gpus-memory-zero"),
    pytest.param("gpus", ("dense_tflops", "bf16"), -1, id="gpus-negative-tflops"),
    pytest.param("gpus", ("dense_tflops", "fp6"), 10, id="gpus-unknown-precision"),
    pytest.param("gpus", ("interconnect", "bandwidth_gb_per_s_bidir"), 900, id="gpus-none-link-with-bandwidth"),
    pytest.param("gpus", ("form_factor",), "mxm", id="gpus-form-factor-enum"),
    pytest.param("gpus", ("cooling",), "water", id="gpus-cooling-enum"),
    pytest.param("gpus", ("source",), [], id="gpus-empty-source"),
    pytest.param("gpus", ("source",), DELETE, id="gpus-missing-source"),
    pytest.param("gpus", ("tdp_w",), DELETE, id="gpus-missing-tdp"),
    pytest.param("gpus", ("memory_gib",), 80, id="gpus-unknown-field"),
    pytest.param("gpus", ("unsourced_fields",), ["Memory GB"], id="gpus-unsourced-not-a-path"),
    pytest.param("platforms", ("kind",), "server", id="platforms-kind-enum"),
    pytest.param("platforms", ("provider",), "oracle", id="platforms-provider-enum"),
    pytest.param("platforms", ("gpu_counts",), [0], id="platforms-zero-gpus"),
    pytest.param("platforms", ("gpu_ids",), [], id="platforms-no-gpus"),
    pytest.param("nics", ("protocol",), "omnipath", id="nics-protocol-enum"),
    pytest.param("nics", ("port_gbps",), 0, id="nics-zero-rate"),
    pytest.param("drives", ("capacity_tb",), 0, id="drives-zero-capacity"),
    pytest.param("cpus", ("cores",), 0, id="cpus-zero-cores"),
    pytest.param("prices", ("unit",), "day", id="prices-unit-enum"),
    pytest.param("prices", ("usd",), 0, id="prices-zero-price"),
    pytest.param("prices", ("as_of",), "24 Sep 2026", id="prices-date-format"),
    pytest.param("models", ("id",), "llama-3-8b", id="models-id-without-owner"),
    pytest.param("models", ("config",), {"hidden_size": 4096}, id="models-config-without-model-type"),
    pytest.param("models", ("reference_params_source",), DELETE, id="models-reference-without-source"),
    pytest.param("software", ("version",), DELETE, id="software-missing-version"),
    pytest.param("host_minimums", ("platform_kinds",), ["server"], id="host-minimums-kind-enum"),
    pytest.param("host_minimums", ("ram_gib_per_gpu",), 0, id="host-minimums-zero-ram"),
    pytest.param("host_minimums", ("source",), DELETE, id="host-minimums-missing-source"),
    pytest.param("gpu_zones", ("zones",), ["us-central1-z"], id="gpu-zones-zone-letter"),
    pytest.param("gpu_zones", ("source",), DELETE, id="gpu-zones-missing-source"),
    pytest.param("gpu_regions", ("regions",), ["us-east-1", "us-east-1"], id="gpu-regions-repeated-region"),
    pytest.param("gpu_regions", ("provider",), "gcp", id="gpu-regions-provider-enum"),
    pytest.param("gpu_regions", ("source",), DELETE, id="gpu-regions-missing-source"),
]


@pytest.mark.parametrize(("kind", "path", "value"), BAD_RECORDS)
def test_schema_rejects_a_bad_record(kind: str, path: tuple[str, ...], value: Any) -> None:
    data = copy.deepcopy(dict(load(kind)))
    recs = data[kind]
    if kind == "models":  # the first model that quotes a reference parameter count
        recs[:] = [next(rec for rec in recs if "reference_params_total" in rec)]
    if kind == "gpus":  # a card without a GPU-to-GPU link
        recs[:] = [next(rec for rec in recs if rec["interconnect"]["kind"] == "none")]
    node = recs[0]
    for key in path[:-1]:
        node = node[key]
    if value is DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    assert schema_errors(kind, data), f"{kind}: {'.'.join(path)} = {value!r} was accepted"


# ---------------------------------------------------------------- ids and references


@pytest.mark.parametrize("kind", KIND_PARAMS)
def test_ids_are_unique(kind: str) -> None:
    ids = [rec["id"] for rec in records(kind)]
    assert sorted({i for i in ids if ids.count(i) > 1}) == []


@pytest.mark.parametrize("kind", KIND_PARAMS)
def test_ids_are_sorted(kind: str) -> None:
    ids = [rec["id"] for rec in records(kind)]
    misplaced = [f"{a!r} before {b!r}" for a, b in itertools.pairwise(ids) if a > b]
    assert not misplaced, f"{kind}.json ids out of order: {', '.join(misplaced)}"


def test_model_names_and_aliases_are_unambiguous() -> None:
    owners: dict[str, set[str]] = defaultdict(set)
    for rec in records("models"):
        model_id: str = rec["id"]
        for key in (model_id, model_id.split("/", 1)[-1], *rec.get("aliases", [])):
            owners[key.lower()].add(model_id)
    clashes = {key: sorted(ids) for key, ids in owners.items() if len(ids) > 1}
    assert clashes == {}


def test_model_aliases_are_not_repeated() -> None:
    aliases = [alias.lower() for rec in records("models") for alias in rec.get("aliases", [])]
    assert sorted({a for a in aliases if aliases.count(a) > 1}) == []


REFERENCES = [
    pytest.param("platforms", ("gpu_ids", "*"), "gpus", id="platform-gpu_ids"),
    pytest.param("platforms", ("cpu", "id"), "cpus", id="platform-cpu"),
    pytest.param("platforms", ("nics", "fabric", "nic_id"), "nics", id="platform-fabric-nic"),
    pytest.param("platforms", ("nics", "frontend", "nic_id"), "nics", id="platform-frontend-nic"),
    pytest.param("platforms", ("nvme", "drive_id"), "drives", id="platform-nvme-drive"),
    pytest.param("prices", ("platform_id",), "platforms", id="price-platform"),
    pytest.param("prices", ("gpu_id",), "gpus", id="price-gpu"),
    pytest.param("purchases", ("platform_id",), "platforms", id="purchase-platform"),
    pytest.param("purchases", ("gpu_id",), "gpus", id="purchase-gpu"),
    pytest.param("host_minimums", ("gpu_ids", "*"), "gpus", id="host-minimum-gpu_ids"),
    pytest.param("gpu_zones", ("platform_ids", "*"), "platforms", id="gpu-zones-platform_ids"),
    pytest.param("gpu_regions", ("platform_ids", "*"), "platforms", id="gpu-regions-platform_ids"),
]


@pytest.mark.parametrize(("kind", "path", "target"), REFERENCES)
def test_references_resolve(kind: str, path: tuple[str, ...], target: str) -> None:
    known = by_id(target)
    dangling = [f"{rec['id']}: {value!r}" for rec in records(kind) for value in values_at(rec, path) if value not in known]
    assert not dangling, f"{kind} {'.'.join(path)} not in {target}.json: {', '.join(dangling)}"


@pytest.mark.parametrize("kind", KIND_PARAMS)
def test_unsourced_fields_name_existing_fields(kind: str) -> None:
    missing = paths_not_in_record(kind, "unsourced_fields")
    assert not missing, f"{kind}.json unsourced_fields name fields the record lacks: {', '.join(missing)}"


@pytest.mark.parametrize("kind", KIND_PARAMS)
def test_field_sources_name_existing_fields(kind: str) -> None:
    missing = paths_not_in_record(kind, "field_sources")
    assert not missing, f"{kind}.json field_sources name fields the record lacks: {', '.join(missing)}"


# ---------------------------------------------------------------- dense, not sparse

# (gpu id, precision, dense TFLOPS, text of tests/reference/hardware_facts_notes.md that states it)
DENSE_TFLOPS = [
    pytest.param("h100-sxm5-80gb", "bf16", 989, "the dense values are 989 and 1,979", id="h100-sxm-bf16"),
    pytest.param("h100-sxm5-80gb", "fp8", 1979, "the dense values are 989 and 1,979", id="h100-sxm-fp8"),
    pytest.param("h200-sxm-141gb", "bf16", 989, "H100/H200 SXM as 1,979 BF16", id="h200-sxm-bf16"),
    pytest.param("h200-sxm-141gb", "fp8", 1979, '3,958 FP8/INT8 "with sparsity"', id="h200-sxm-fp8"),
    pytest.param("l40s-48gb", "bf16", 362, "L40S (733 → 362)", id="l40s-bf16"),
    pytest.param("l4-24gb", "bf16", 121, "L4 (242 → 121)", id="l4-bf16"),
    pytest.param("a100-sxm4-80gb", "bf16", 312, "A100 (624 → 312)", id="a100-sxm4-80gb-bf16"),
    pytest.param("a100-sxm4-40gb", "bf16", 312, "A100 (624 → 312)", id="a100-sxm4-40gb-bf16"),
    pytest.param("a100-pcie-80gb", "bf16", 312, "A100 (624 → 312)", id="a100-pcie-80gb-bf16"),
    pytest.param("a100-pcie-40gb", "bf16", 312, "A100 (624 → 312)", id="a100-pcie-40gb-bf16"),
    pytest.param("b200-sxm-180gb", "bf16", 2250, "B200 (4.5 PF → 2.25 PF BF16)", id="b200-bf16"),
    pytest.param("gb200-186gb", "bf16", 2500, "GB200 (5 PF → 2.5 PF)", id="gb200-bf16"),
    pytest.param("mi300x-192gb", "bf16", 1307.4, "dense BF16 is 1,307.4", id="mi300x-bf16"),
    pytest.param("mi325x-256gb", "bf16", 1307, "yobitel labels MI325X's dense 1,307 BF16", id="mi325x-bf16"),
    pytest.param("h100-nvl-94gb", "bf16", 835, "which is about 835 dense", id="h100-nvl-bf16"),
    pytest.param("rtx-4090-24gb", "bf16", 165.2, "FP32 accumulate is 165.2 dense", id="rtx-4090-bf16"),
    pytest.param("rtx-3090-24gb", "bf16", 71, "about 71 (FP32 accumulate)", id="rtx-3090-bf16"),
    pytest.param("gaudi3-128gb", "bf16", 1677, "1,677 effective at the shipping 1600 MHz", id="gaudi3-bf16"),
]


@pytest.mark.parametrize(("gpu_id", "precision", "dense", "quote"), DENSE_TFLOPS)
def test_catalog_tflops_are_dense(gpu_id: str, precision: str, dense: float, quote: str) -> None:
    assert quote in NOTES.read_text(encoding="utf-8"), f"the row's quote is not in {NOTES.name}"
    value = by_id("gpus")[gpu_id]["dense_tflops"][precision]
    assert value == pytest.approx(dense, rel=1e-3), f"{gpu_id} {precision}: catalog {value}, notes dense {dense} ({quote!r})"


# ---------------------------------------------------------------- model configs

MODEL_PARAMS = [pytest.param(rec["id"], id=rec["id"]) for rec in records("models")]
REFERENCE_PARAMS = [pytest.param(rec["id"], id=rec["id"]) for rec in records("models") if "reference_params_total" in rec]


@pytest.mark.parametrize("model_id", MODEL_PARAMS)
def test_model_config_parses(model_id: str) -> None:
    arch = parse_architecture(by_id("models")[model_id]["config"])
    assert arch.params_total > 0


@pytest.mark.parametrize("model_id", REFERENCE_PARAMS)
def test_reference_params_total_matches_parser(model_id: str) -> None:
    rec = by_id("models")[model_id]
    quoted: int = rec["reference_params_total"]
    parsed = parse_architecture(rec["config"]).params_total
    assert abs(parsed - quoted) / quoted <= 1e-3, f"{model_id}: parser {parsed:,}, catalog quotes {quoted:,}"


@pytest.mark.parametrize("model_id", REFERENCE_PARAMS)
def test_reference_params_total_matches_its_source(model_id: str) -> None:
    rec = by_id("models")[model_id]
    match = re.search(r"param_counts\.json \(([^;)]+)", rec["reference_params_source"])
    assert match, f"{model_id}: reference_params_source does not name a param_counts.json entry"
    counts = json.loads(PARAM_COUNTS.read_text(encoding="utf-8"))
    assert rec["reference_params_total"] == counts[match.group(1).strip()]["total_params"]


def _llama_params(vocab: int, hidden: int, inter: int, layers: int, heads: int, kv_heads: int) -> int:
    """A Llama's weights by hand: untied embedding and head, q/o and k/v projections, SwiGLU, two norms a layer, final norm."""
    kv_width = kv_heads * (hidden // heads)
    per_layer = 2 * hidden * hidden + 2 * hidden * kv_width + 3 * hidden * inter + 2 * hidden
    return 2 * vocab * hidden + layers * per_layer + hidden


# The GPU-hour calibration rows' models (LLaMA paper Table 2 / Table 15, Llama 2 model card): exact counts by hand.
# 32.5B for the 33B matches Table 2 (https://arxiv.org/abs/2302.13971); 68.98B is Llama 2 70B with 8 KV heads.
LLAMA_COUNTS = [
    pytest.param("huggyllama/llama-7b", (32000, 4096, 11008, 32, 32, 32), 6_738_415_616, id="llama-7b"),
    pytest.param("huggyllama/llama-13b", (32000, 5120, 13824, 40, 40, 40), 13_015_864_320, id="llama-13b"),
    pytest.param("huggyllama/llama-30b", (32000, 6656, 17920, 60, 52, 52), 32_528_943_616, id="llama-30b"),
    pytest.param("huggyllama/llama-65b", (32000, 8192, 22016, 80, 64, 64), 65_285_660_672, id="llama-65b"),
    pytest.param("meta-llama/Llama-2-7b-hf", (32000, 4096, 11008, 32, 32, 32), 6_738_415_616, id="llama-2-7b"),
    pytest.param("meta-llama/Llama-2-13b-hf", (32000, 5120, 13824, 40, 40, 40), 13_015_864_320, id="llama-2-13b"),
    pytest.param("meta-llama/Llama-2-70b-hf", (32000, 8192, 28672, 80, 64, 8), 68_976_648_192, id="llama-2-70b-gqa"),
]


@pytest.mark.parametrize(("model_id", "shape", "total"), LLAMA_COUNTS)
def test_llama_parameter_counts_exact(model_id: str, shape: tuple[int, int, int, int, int, int], total: int) -> None:
    assert _llama_params(*shape) == total  # the table's figure is the hand count
    assert parse_architecture(by_id("models")[model_id]["config"]).params_total == total


def test_an_azure_retail_price_source_opens_on_its_figure() -> None:
    """newuser69 item 10: the bare Retail Prices API address opened on the first page of every Azure meter.

    Each Azure record that cites the API filters it to its region, its VM size and pay-as-you-go, so the address
    opens on the meters of that price.
    """
    api = "https://prices.azure.com/api/retail/prices"
    platforms = {p["id"]: p for p in json.loads((CATALOG / "platforms.json").read_text())["platforms"]}
    cited = 0
    for record in json.loads((CATALOG / "prices.json").read_text())["prices"]:
        sources = record["source"] if isinstance(record["source"], list) else [record["source"]]
        for source in (s for s in sources if s.startswith(api)):
            cited += 1
            expected = (
                f"armRegionName eq '{record['region']}' and armSkuName eq "
                f"'{platforms[record['platform_id']]['instance_type']}' and priceType eq 'Consumption'"
            )
            assert unquote(source) == f"{api}?$filter={expected}", record["id"]
    assert cited >= 16
