"""The built-in catalog: data files beside this module, loaded lazily with the standard library.

Each loader checks the fields the engine relies on and raises :class:`CatalogError` naming the
file, record and field. The full JSON Schemas in ``schemas/catalog/`` are checked by the tests.
Nothing is read at import time.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from functools import cache

from generator.catalog.records import (
    CpuSpec,
    DriveSpec,
    GpuSpec,
    HostMinimum,
    MigProfile,
    ModelRecord,
    NicSpec,
    PlatformSpec,
    PriceRecord,
    PurchaseRecord,
    ThroughputGap,
    borrow_class_shares,
    borrow_sibling_measurements,
)
from generator.errors import CatalogError, UnknownIdError

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from typing import Any

#: This folder, symlinks resolved (text: pathlib is not imported on the ``estimate`` path).
_CATALOG_DIR = os.path.dirname(os.path.realpath(__file__))

#: The GPU whose measured shares of its peaks the fitted efficiencies are taken to hold: the H100 SXM, measured by both
#: methods and in every fitted group of its generation (TensorRT-LLM with H200, B200, GB200 and RTX PRO 6000; FSDP
#: MFU; benchmarks/CALIBRATION.md). Another GPU's measured rates count relative to its shares.
REFERENCE_GPU_ID = "h100-sxm5-80gb"


def _read(path: str) -> Any:
    with open(path, encoding="utf-8") as fh:
        return json.loads(fh.read())


@cache
def _section(kind: str, key: str) -> Any:
    """Top-level ``key`` of catalog file ``kind``.json beside its records (``listed_regions`` ...), read once."""
    path = os.path.join(_CATALOG_DIR, f"{kind}.json")
    try:
        return _read(path)[key]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CatalogError(f"{path}: cannot read {key}: {exc}") from None


@cache
def _records(kind: str) -> tuple[Mapping[str, Any], ...]:
    path = os.path.join(_CATALOG_DIR, f"{kind}.json")
    try:
        data = _read(path)
    except (OSError, ValueError) as exc:
        raise CatalogError(f"{path}: cannot read catalog file: {exc}") from None
    records = data.get(kind) if isinstance(data, dict) else None
    if not isinstance(records, list):
        raise CatalogError(f"{path}: expected an object with a '{kind}' list")
    seen: set[str] = set()
    for i, rec in enumerate(records):
        if not isinstance(rec, dict) or not isinstance(rec.get("id"), str):
            raise CatalogError(f"{path}: {kind}[{i}]: record needs a string 'id'")
        if rec["id"] in seen:
            raise CatalogError(f"{path}: {kind}[{i}]: duplicate id '{rec['id']}'")
        if not rec.get("source") and rec.get("unsourced") is not True:
            raise CatalogError(f"{path}: {kind}[{i}] ({rec['id']}): every record needs a 'source' (or 'unsourced': true)")
        seen.add(rec["id"])
    return tuple(records)


def _build(kind: str, factory: Any) -> dict[str, Any]:
    out = {}
    for rec in _records(kind):
        try:
            out[rec["id"]] = factory(rec)
        except (KeyError, TypeError, ValueError) as exc:
            where = os.path.join(_CATALOG_DIR, f"{kind}.json")
            raise CatalogError(f"{where}: {rec['id']}: bad or missing field: {exc}") from None
    return out


@cache
def gpus() -> dict[str, GpuSpec]:
    """Every accelerator, by id, its measured rates expressed over the reference GPU's (:data:`REFERENCE_GPU_ID`)."""
    built: dict[str, GpuSpec] = borrow_sibling_measurements(_build("gpus", GpuSpec.from_record))
    reference = built[REFERENCE_GPU_ID]
    return borrow_class_shares({gpu_id: gpu.relative_to(reference) for gpu_id, gpu in built.items()})


@cache
def reference_tflops_shares() -> dict[str, float]:
    """The reference GPU's (:data:`REFERENCE_GPU_ID`) measured share of its peak, by precision it is measured in.

    What :meth:`GpuSpec.reference_share` turns a rate normalised to the reference into the GPU's modelled rate by.
    """
    reference = gpus()[REFERENCE_GPU_ID]
    return {c: share for c in sorted(reference.dense_tflops) if (share := reference.measured_share(c)) is not None}


@cache
def platforms() -> dict[str, PlatformSpec]:
    """Every server platform and cloud instance, by id, with the PCIe lanes its CPU gives each GPU slot."""
    built: dict[str, PlatformSpec] = _build("platforms", PlatformSpec.from_record)
    known = cpus()
    return {
        pid: p._replace(gpu_slot_lanes=known[p.cpu_id].gpu_slot_lanes) if p.cpu_id in known else p for pid, p in built.items()
    }


@cache
def cpus() -> dict[str, CpuSpec]:
    """Every CPU, by id."""
    return _build("cpus", CpuSpec.from_record)


@cache
def nics() -> dict[str, NicSpec]:
    """Every network adapter, by id."""
    return _build("nics", NicSpec.from_record)


@cache
def drives() -> dict[str, DriveSpec]:
    """Every NVMe drive, by id."""
    return _build("drives", DriveSpec.from_record)


#: The hosts a price's provider publishes its own prices on (its pricing pages and price APIs), by who sells or rents
#: the priced server (:func:`price_seller`): a price whose sources are all on them cites the provider; any other must say
#: ``third_party_source`` (newuser73 items 2 and 12: Lambda prices cited a personal notes repository and a Prime
#: Intellect catalog, AWS and GCP list prices a FinOps tool and a report script). Hosts, not domains: anyone's S3
#: bucket is under amazonaws.com, anyone's VM under cloudapp.azure.com, NVIDIA's forums under nvidia.com (review76
#: item 3); ``www.`` of each is the same host.
PROVIDER_DOMAINS: dict[str, tuple[str, ...]] = {
    "aws": ("aws.amazon.com", "pricing.us-east-1.amazonaws.com", "b0.p.awsstatic.com"),
    "azure": ("azure.microsoft.com", "prices.azure.com", "learn.microsoft.com"),
    "gcp": ("cloud.google.com",),
    "Lambda": ("lambda.ai", "lambdalabs.com"),
    "NVIDIA": ("nvidia.com", "nvidianews.nvidia.com", "docs.nvidia.com"),
}


def price_seller(price: PriceRecord, platform: PlatformSpec) -> str:
    """Who sells or rents the priced server: the provider it is rented from, the cloud, or a purchase's maker."""
    if price.rented_from:
        return price.rented_from
    return platform.provider if platform.provider != "baremetal" else platform.name.split()[0]


def _host(url: str) -> str:
    """The host of ``url`` (text: urllib is not imported on the ``estimate`` path)."""
    return url.split("://", 1)[-1].split("/", 1)[0].split("?", 1)[0].lower()


def on_provider_domain(url: str, seller: str) -> bool:
    """Whether ``url`` is on one of ``seller``'s own hosts (:data:`PROVIDER_DOMAINS`)."""
    host = _host(url).removeprefix("www.")
    return host in PROVIDER_DOMAINS.get(seller, ())


@cache
def prices() -> dict[str, PriceRecord]:
    """Published prices, by price id: on-demand (and monthly, and purchase) ones; a spot rate is in :func:`spot_prices`.

    Each price cites its provider's own page, or says ``third_party_source`` where a source is a third party's
    (:data:`PROVIDER_DOMAINS`); a mark on a price whose sources are all the provider's is refused as stale.
    """
    return {key: price for key, price in _all_prices().items() if not price.spot}


@cache
def spot_prices() -> dict[str, PriceRecord]:
    """Published spot rates of cloud instance types (``"capacity_type": "spot"``), by price id.

    The rate a spot pool of the type is rented at in the record's region, as the workload's ``<platform>@spot`` key
    prices it (review80 item 14); never an on-demand price, so no on-demand pool is priced at one.
    """
    return {key: price for key, price in _all_prices().items() if price.spot}


def _all_prices() -> dict[str, PriceRecord]:
    """Every ``prices.json`` record, checked: its platform, its sources' owner and, for a spot rate, its kind.

    Not cached itself (:func:`prices` and :func:`spot_prices` are): each reads the file's records once a process.
    """
    built: dict[str, PriceRecord] = _build("prices", PriceRecord.from_record)
    known = platforms()
    where = os.path.join(_CATALOG_DIR, "prices.json")
    for price in built.values():
        platform = known.get(price.platform_id)
        if platform is None:
            raise CatalogError(f"{where}: {price.id}: platform_id: unknown platform '{price.platform_id}'")
        seller = price_seller(price, platform)
        if seller not in PROVIDER_DOMAINS:
            raise CatalogError(f"{where}: {price.id}: no own domain known for its provider '{seller}' (PROVIDER_DOMAINS)")
        others = [url for url in price.source if not on_provider_domain(url, seller)]
        if others and not price.third_party:
            raise CatalogError(
                f"{where}: {price.id}: source: {others[0]} is not {seller}'s own page: cite the provider's page (the "
                'third party\'s in research_notes) or mark the record "third_party_source": true'
            )
        if price.third_party and not others:
            raise CatalogError(f"{where}: {price.id}: third_party_source: every source is {seller}'s own page")
        if price.spot and (platform.provider == "baremetal" or price.unit != "hour" or not price.region):
            raise CatalogError(
                f"{where}: {price.id}: capacity_type: a spot rate is a cloud instance type's, by the hour, in a region"
            )
    return built


@cache
def purchases() -> dict[str, PurchaseRecord]:
    """Purchase prices of owned hardware (systems, GPUs, hosts), by id."""
    return _build("purchases", PurchaseRecord.from_record)


@cache
def not_sold_new(platform_id: str, gpu_id: str) -> PurchaseRecord | None:
    """The purchase record that prices a node of ``gpu_id`` on ``platform_id`` and says it is not sold new, or None.

    A node is priced by its system record where one matches (that record alone says), else by its host and GPU records.
    """
    records = purchases().values()
    systems = [r for r in records if r.kind == "system" and r.platform_id == platform_id and r.gpu_id == gpu_id]
    parts = systems or [
        r for r in records if (r.kind, r.platform_id) == ("host", platform_id) or (r.kind, r.gpu_id) == ("gpu", gpu_id)
    ]
    return next((r for r in sorted(parts, key=lambda r: r.id) if not r.sold_new), None)


@cache
def host_minimums() -> dict[str, HostMinimum]:
    """Published minimums of host RAM and CPU cores per GPU, by record id."""
    return _build("host_minimums", HostMinimum.from_record)


@cache
def throughput_gaps() -> dict[str, ThroughputGap]:
    """Serving setups whose measured throughput the model over-predicts, by id (the plan warns and plans at the margin)."""
    return _build("throughput_gaps", ThroughputGap.from_record)


@cache
def unpriced() -> dict[str, str]:
    """Why a host (by platform id) or a GPU (by GPU id) has no purchase price: searched for, not found."""
    path = os.path.join(_CATALOG_DIR, "purchases.json")
    data = _read(path)
    out = {}
    for rec in data.get("unpriced") or ():
        key = rec.get("platform_id") if rec.get("kind") == "host" else rec.get("gpu_id")
        if not isinstance(key, str) or not isinstance(rec.get("why"), str):
            raise CatalogError(f"{path}: unpriced {rec.get('id')!r}: needs a platform_id or gpu_id and a 'why'")
        out[key] = rec["why"]
    return out


@cache
def models() -> dict[str, ModelRecord]:
    """Every catalog model, by Hugging Face id."""
    return _build("models", ModelRecord.from_record)


def publisher_fp8_note(model_id: str, precision: str) -> str | None:
    """What sizes the publisher's own FP8 checkpoint, where ``precision`` is plain ``fp8`` and that checkpoint differs.

    newuser59 item 6: Meta's 405B FP8 release keeps attention and the first and last layers in BF16, and sized as
    ``fp8`` its weights came out 17% light, its KV cache twice what vLLM has.
    """
    record = models().get(model_id)
    if precision != "fp8" or record is None or record.publisher_fp8 is None:
        return None
    checkpoint, sizing, page = record.publisher_fp8
    return (
        f"fp8 sizes {model_id} with every linear layer quantized to FP8 as vLLM does at load (--quantization fp8); "
        f"the publisher's own FP8 checkpoint, {checkpoint} ({page}), keeps layers in BF16: precision {sizing} sizes it"
    )


@cache
def _software() -> dict[str, Mapping[str, Any]]:
    return {rec["id"]: rec for rec in _records("software")}


def software(software_id: str) -> Mapping[str, Any]:
    """A software record (driver, operator, ...) by id; its fields carry their own sources."""
    try:
        return _software()[software_id]
    except KeyError:
        raise CatalogError(f"{os.path.join(_CATALOG_DIR, 'software.json')}: no record '{software_id}'") from None


@cache
def _model_index() -> dict[str, str]:
    index: dict[str, str] = {}
    for model_id, rec in models().items():
        for key in (model_id, model_id.split("/", 1)[-1], *rec.aliases):
            index.setdefault(key.lower(), model_id)
    return index


#: The likeness (difflib's ratio) at which an unknown id is taken for a typo of a known one.
TYPO_CUTOFF = 0.9


def likeness(name: str, choice: str) -> float:
    """How alike two ids are, case aside (difflib's ratio)."""
    import difflib

    return difflib.SequenceMatcher(None, name.lower(), choice.lower()).ratio()


def close_ids(name: str, choices: list[str], cutoff: float = 0.5) -> list[str]:
    """The (at most 3) ``choices`` at least ``cutoff`` alike ``name``, the likest first."""
    import difflib

    lookup = {c.lower(): c for c in choices}
    return [lookup[c] for c in difflib.get_close_matches(name.lower(), list(lookup), n=3, cutoff=cutoff)]


def suggest(name: str, choices: list[str]) -> str:
    """A ``did you mean`` suffix for an unknown id (empty when nothing is close)."""
    close = close_ids(name, choices)
    return f"; did you mean {', '.join(map(repr, close))}?" if close else ""


def unknown_id_message(what: str, value: str, choices: Mapping[str, object]) -> str:
    """``unknown <what> '<value>'`` (quoted and shortened), with the ids of its model in ``choices``, or that none is.

    ``what`` is ``GPU``, ``platform``, ``CPU`` or ``NIC``: the catalog table it names is counted (``choices`` may add
    a workload's own server names); see :mod:`generator.catalog.id_hints`.
    """
    from generator.catalog.id_hints import id_hint, lookalike_note
    from generator.input_files import short

    tables: dict[str, Callable[[], Mapping[str, object]]] = {"GPU": gpus, "platform": platforms, "CPU": cpus, "NIC": nics}
    size = len(tables[what]()) if what in tables else None
    return f"unknown {what} {short(value)}{lookalike_note(value)}{id_hint(what, value, sorted(choices), size)}"


def find_model(name: str) -> ModelRecord:
    """A catalog model by HF id, its name after the slash, or an alias (case-insensitive)."""
    model_id = _model_index().get(name.lower())
    if model_id is None:
        # newuser45 item 11: a base model's id left out its catalog variants (Llama-3.1-70B: -70B-Instruct), which no
        # close match found beside the 8B and 3B; the ids that extend the name come first
        extended = sorted(m for m in models() if m.lower().startswith(name.lower()))[:3]
        # newuser49 item 3: a variant of a catalog id (Qwen3-235B-A22B-Instruct-2507) got three Qwen2.5 models: the
        # catalog ids it extends and those it nearly spells, the likest first (review34 item 14: a near typo of a
        # larger model came before the id a short suffix extends)
        stems = [m for m in models() if name.lower().startswith(f"{m.lower()}-")]
        close = [*stems, *close_ids(name, sorted(models()), TYPO_CUTOFF)]
        likest = sorted(dict.fromkeys(close), key=lambda m: (-likeness(name, m), m))[:3]
        hint = f"; did you mean {', '.join(map(repr, extended or likest))}?" if extended or likest else ""
        hint = hint or suggest(name, sorted(models()))
        from generator.catalog.id_hints import lookalike_note

        raise UnknownIdError(f"unknown model '{name}'{lookalike_note(name)}{hint} (or give a path to a config.json)")
    return models()[model_id]


def gpu_id_for(name: str) -> str:
    """The catalog GPU id ``name`` names: itself (any case), or the one id it begins up to a hyphen.

    ``rtx-4090`` is ``rtx-4090-24gb`` (newuser45 item 11); a name of none or several ids (``h100``) is returned as given,
    for the lookup's error to list them.
    """
    key = name.lower()
    if key in gpus():
        return key
    found = [gpu_id for gpu_id in gpus() if gpu_id.startswith(f"{key}-")]
    return found[0] if len(found) == 1 else name


def find_gpu(name: str) -> GpuSpec:
    """A GPU by catalog id (case-insensitive)."""
    table = gpus()
    gpu = table.get(name.lower())
    if gpu is None:
        raise UnknownIdError(unknown_id_message("GPU", name, table))
    return gpu


@cache
def mig_profiles() -> dict[str, tuple[str, ...]]:
    """MIG profile names each MIG-capable GPU supports, by GPU id (a GPU missing here has no list)."""
    return {gpu: tuple(profiles) for gpu, profiles in mig_profile_specs().items()}


@cache
def mig_profile_specs() -> dict[str, dict[str, MigProfile]]:
    """Each MIG-capable GPU's profiles by name, by GPU id: the MIG user guide's table of it (``mig_profiles.json``)."""
    from fractions import Fraction  # not on the estimate's cold start unless MIG is asked for

    out: dict[str, dict[str, MigProfile]] = {}
    for rec in _records("mig_profiles"):
        out[rec["id"]] = {
            p["name"]: MigProfile(
                p["name"],
                Fraction(p["memory_fraction"]),
                Fraction(p["sm_fraction"]),
                int(p["instances"]),
                p.get("memory_gib"),
                tuple(rec["source"]),
            )
            for p in rec["profiles"]
        }
    return out
