"""Checks of a workload's values against each other and the model: token counts, precision names, an existing machine's RAM.

Every problem is located at the field that causes it (file:line:col):

- an average request (``avg_input_tokens + avg_output_tokens``) longer than ``max_context_tokens`` would not fit
  the window the plan sizes;
- ``max_context_tokens`` above the model's ``max_model_len`` (:mod:`generator.sizing.context_limit`): vLLM and
  SGLang refuse a longer context unless told to by an environment variable, so the rendered servers would not start
  (and the model was not trained on such positions); on ``hardware.fixed``, what its llama.cpp-family server does;
- ``task: generate`` with an encoder-only model (BERT / RoBERTa / XLM-RoBERTa: no LM head to generate with);
- ``p95_input_tokens`` below ``avg_input_tokens``, above 20 times it, or with ``avg_output_tokens`` past
  ``max_context_tokens``; on a pooling service or ``hardware.fixed``, where it is not planned;
- ``average_requests_per_second`` above ``requests_per_second`` (the peak the replicas are sized for);
- a batch job's fields (``requests_per_run``, ``deadline_hours``, ``runs_per_month``) apart, beside a rate given, or
  with runs that do not fit in a month;
- ``allowed_precisions`` naming one format twice, through an alias (``fp4`` and ``nvfp4``);
- ``hardware.fixed.reserved_ram_gib`` (8 GiB when not given) at or above ``ram_gib`` leaves no RAM to plan with;
- ``hardware.buy: false`` with no owned servers (``inventory``) to plan on, or ``buy: true`` on an existing machine;
- a pooling service's (``task: embed`` / ``score``) decode fields (``avg_output_tokens``, ``slo.tpot_ms``), which mean
  nothing for one forward pass over the input;
- a training job's settings that contradict each other (:mod:`generator.sizing.training_conflicts`), and LoRA
  fields on a full fine-tune, which would be ignored.
"""

from __future__ import annotations

from typing import Any

from generator.calculator.machine import (
    FixedSpec,
    channels_problem,
    module_on_a_desktop,
    ram_beyond_slots,
    reserve_leaves_no_ram,
    threads_problem,
)
from generator.calculator.model_source import ResolvedModel
from generator.errors import InputError
from generator.sizing.context_limit import (
    llama_cpp_unscaled_limit,
    llama_cpp_unscaled_phrase,
    longer_context_wording,
    served_limit_phrase,
)
from generator.sizing.electrical import splits_evenly, usable_power_w
from generator.sizing.encoder import ENCODER_LONGER_REFUSED
from generator.sizing.precision import WEIGHT_FORMAT_ALIASES
from generator.sizing.serving_queue import tail_problem
from generator.sizing.training_conflicts import training_conflicts
from generator.units import HOURS_PER_MONTH
from generator.workload.loader import Document
from generator.workload.models import Hardware, InferenceDeployment, InferenceSpec, TrainingSpec, Workload

Path = tuple[str | int, ...]


def given_in(doc: Document, path: Path) -> bool:
    """Whether the document itself holds ``path`` (not a default)."""
    node: Any = doc.data
    for part in path:
        if isinstance(part, int):
            if not isinstance(node, list) or part >= len(node):
                return False
        elif not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def _first_given(doc: Document, paths: tuple[Path, ...]) -> Path:
    """The first of ``paths`` the document holds, else the last (its parent is located then)."""
    return next((p for p in paths if given_in(doc, p)), paths[-1])


#: Fields of a LoRA / QLoRA job that a full fine-tune has no use for.
LORA_FIELDS = ("lora_rank", "lora_dropout", "lora_target_modules")


def training_setting_errors(doc: Document, i: int, spec: TrainingSpec) -> list[InputError]:
    """Deployment ``i``'s training settings that contradict each other, each at the field that breaks the pair."""
    at: Path = ("deployments", i, "training")
    errors = [
        InputError(f"{field} applies to method lora or qlora, not full: it would be ignored", doc.locate((*at, field)))
        for field in LORA_FIELDS
        if spec.method == "full" and given_in(doc, (*at, field))
    ]
    conflicts = spec_conflicts(spec, _pinned_pipeline(doc, i))
    errors += [InputError(why, doc.locate((*at, field))) for field, why in conflicts]
    return errors


def spec_conflicts(spec: TrainingSpec, pipeline_parallel: int | None = None) -> list[tuple[str, str]]:
    """(field, why) for each contradiction among a job's training settings, as a workload giving them is refused."""
    return training_conflicts(
        method=spec.method,
        framework=spec.framework,
        zero_stage=spec.zero_stage,
        offload_params=bool(spec.offload_params),
        pipeline_parallel=pipeline_parallel,
        optimizer_in_backward=spec.optimizer_in_backward,
        activation_offload=spec.activation_offload,
        checkpointing=spec.gradient_checkpointing,
        optimizer=spec.optimizer,
        offload_optimizer=bool(spec.offload_optimizer),  # data parallel unknown: refused here under DeepSpeed only
        paged_optimizer=bool(spec.paged_optimizer),
        compute_precision=spec.compute_precision,
    )


def _pinned_pipeline(doc: Document, i: int) -> int | None:
    """Deployment ``i``'s pinned pipeline depth (``parallelism.pp``), None where the planner chooses it."""
    at: Path = ("deployments", i, "parallelism", "pp")
    pp = doc.data["deployments"][i]["parallelism"]["pp"] if given_in(doc, at) else None
    return pp if isinstance(pp, int) else None


def _not_lower_errors(doc: Document, at: Path, spec: InferenceSpec, model: ResolvedModel) -> list[InputError]:
    """Allowed precisions whose weights are no smaller than the precision asked.

    fuzz16 item 9: fp16 beside bf16 was taken as "the smallest allowed", and fp32 was accepted as a fallback.
    """
    from generator.calculator.model_source import fixed_format_problem, serving_format
    from generator.sizing.loadability import dense_format_problem
    from generator.sizing.weights import size_weights

    arch = model.architecture
    if spec.precision and (fixed := fixed_format_problem(model, spec.precision)):  # newuser29 item 1: a GGUF's own type
        return [InputError(fixed, doc.locate((*at, "precision")))]
    if arch.file_weights is not None and arch.file_weights.fixed_format:
        # a file has no lower precision to fall back to: each allowed one is another file (newuser29 item 1: -ngl 69 of
        # a Q4_K_M file planned at q2_k)
        return [
            InputError(
                f"{fixed_format_problem(model, name) or f'{model.id} already holds {name} weights'}; allowed_precisions "
                "are fallbacks the planner quantizes to, and a GGUF file is planned only at its own type: drop "
                "allowed_precisions",
                doc.locate((*at, "allowed_precisions", j)),
            )
            for j, name in enumerate(spec.allowed_precisions)
        ]
    asked = serving_format(model, spec.precision)
    asked_bytes = size_weights(arch, asked).total_bytes
    errors = []
    if spec.precision and (dense := dense_format_problem(asked, arch)):  # review 16 item 2: refused at the field
        errors.append(InputError(dense, doc.locate((*at, "precision"))))
    for j, name in enumerate(spec.allowed_precisions):
        fmt = serving_format(model, name)
        if dense := dense_format_problem(fmt, arch):
            errors.append(InputError(dense, doc.locate((*at, "allowed_precisions", j))))
        elif fmt.name != asked.name and size_weights(arch, fmt).total_bytes >= asked_bytes:
            errors.append(
                InputError(
                    f"'{name}' stores this model's weights in no fewer bytes than {asked.name}, the precision asked: "
                    "allowed_precisions are lower precisions to fall back to",
                    doc.locate((*at, "allowed_precisions", j)),
                )
            )
    return errors


def engine_gguf_errors(doc: Document, i: int, spec: InferenceSpec, model: ResolvedModel) -> list[InputError]:
    """Deployment ``i``'s precisions that vLLM and SGLang cannot load as GGUF files, each at its field (review26 item 3).

    For a service those engines run (servers bought, rented or owned; not ``hardware.fixed``, which llama.cpp runs):
    ``mxfp4_moe``, llama.cpp's gpt-oss file type, and any GGUF of an MXFP4 checkpoint hold MXFP4 tensors their GGUF
    loaders have no kernel for (:func:`~generator.sizing.loadability.engine_gguf_problem`). The precision asked stands
    at ``precision`` (a GGUF file's own type, none given, at ``model``); each fallback at its ``allowed_precisions`` item.
    """
    from generator.calculator.model_source import serving_format
    from generator.sizing.loadability import engine_gguf_problem

    at: Path = ("deployments", i, "inference")
    arch = model.architecture
    errors = []
    if problem := engine_gguf_problem(serving_format(model, spec.precision), arch):
        where = (*at, "precision") if spec.precision else ("deployments", i, "model")
        errors.append(InputError(problem, doc.locate(where)))
    if arch.file_weights is not None and arch.file_weights.fixed_format:
        return errors  # a file has no fallback precisions (refused at allowed_precisions already)
    for j, name in enumerate(spec.allowed_precisions):
        if problem := engine_gguf_problem(serving_format(model, name), arch):
            errors.append(InputError(problem, doc.locate((*at, "allowed_precisions", j))))
    return errors


#: Fields of a generating service that a pooling one (task embed / score) has no use for, and why.
DECODE_FIELDS: dict[tuple[str, ...], str] = {
    ("avg_output_tokens",): "a pooling request generates no tokens",
    ("slo", "tpot_ms"): "a pooling request has no decode steps to time (slo.ttft_p95_ms is its whole request's p95)",
}


def pooling_field_errors(doc: Document, i: int, spec: InferenceSpec, *, fixed: bool) -> list[InputError]:
    """Deployment ``i``'s decode fields under a pooling task, each at the field; a pooling task on an existing machine.

    A pooling service (vLLM ``--runner pooling``) runs one forward pass over each request's input and returns its
    embedding or score: it has no output tokens and no decode steps.
    """
    if not spec.pooling:
        return []
    at: Path = ("deployments", i, "inference")
    errors = [
        InputError(
            f"{'.'.join(field)} means nothing for task: {spec.task}: {why}; drop it or set task: generate",
            doc.locate((*at, *field)),
        )
        for field, why in DECODE_FIELDS.items()
        if given_in(doc, (*at, *field))
    ]
    if fixed:
        errors.append(
            InputError(
                f"task: {spec.task} is not planned on hardware.fixed: the existing-machine planner places one "
                "llama.cpp-style generating stream over GPU, RAM and NVMe; a pooling service is planned on bought, "
                "rented or owned (inventory) servers: drop task or hardware.fixed",
                doc.locate((*at, "task")),
            )
        )
    return errors


def inference_limit_errors(
    doc: Document, i: int, spec: InferenceSpec, model: ResolvedModel | None, fixed_engine: str | None = None
) -> list[InputError]:
    """Problems of deployment ``i``'s token counts against its context window and its model's.

    ``fixed_engine``: the llama.cpp-family server of ``hardware.fixed`` that serves it (its ``offload_engine``), whose
    own handling of a context past the model's limit is said; None: vLLM / SGLang's refusal.
    """
    at: Path = ("deployments", i, "inference")
    errors: list[InputError] = []
    request = spec.avg_input_tokens + (0 if spec.pooling else spec.avg_output_tokens)
    if request > spec.max_context_tokens:
        where = _first_given(doc, ((*at, "avg_input_tokens"), (*at, "avg_output_tokens"), (*at, "max_context_tokens")))
        errors.append(InputError(_request_over_window(doc, at, spec, request), doc.locate(where)))
    seen: dict[str, str] = {}
    for j, name in enumerate(spec.allowed_precisions):
        canonical = WEIGHT_FORMAT_ALIASES.get(name, name)
        if canonical in seen:
            errors.append(
                InputError(
                    f"'{name}' and '{seen[canonical]}' are the same format ({canonical}): list it once",
                    doc.locate((*at, "allowed_precisions", j)),
                )
            )
        seen.setdefault(canonical, name)
    if model is not None:
        errors += _not_lower_errors(doc, at, spec, model)
    if model is not None and model.architecture.encoder_only and not spec.pooling:
        errors.append(
            InputError(
                f"task: {spec.task} needs a model that generates tokens, and {model.name} is an encoder-only "
                f"({model.architecture.model_type}) model with no LM head: it embeds (task: embed) or, as a sequence "
                "classifier, scores (task: score)",
                doc.locate((*at, "task")),
            )
        )
    limit = model.architecture.max_model_len if model is not None else 0
    engine = fixed_engine or "vllm"
    if model is not None and limit and spec.max_context_tokens > limit:
        errors.append(
            InputError(
                f"max_context_tokens {spec.max_context_tokens:,} is more than {served_limit_phrase(model.name, limit)}; "
                f"{ENCODER_LONGER_REFUSED if model.architecture.encoder_only else longer_context_wording(engine)}",
                doc.locate((*at, "max_context_tokens")),
            )
        )
    elif (
        model is not None
        and fixed_engine
        and (rope := model.architecture.llama_cpp_rope) is not None
        and spec.max_context_tokens > llama_cpp_unscaled_limit(rope, limit)
    ):
        # fix159: a RoPE scaling llama.cpp has no flag for (dynamic) leaves its limit at the GGUF's context_length
        errors.append(
            InputError(
                f"max_context_tokens {spec.max_context_tokens:,} is more than "
                f"{llama_cpp_unscaled_phrase(model.name, rope)}; {longer_context_wording(fixed_engine)}",
                doc.locate((*at, "max_context_tokens")),
            )
        )
    return errors


def _request_over_window(doc: Document, at: Path, spec: InferenceSpec, request: int) -> str:
    """An average request longer than the context window, each count said as given or as the default it fell back to.

    fuzz33 item 11: a default the user never wrote was quoted as theirs ("avg_input_tokens (1,000) exceeds ...").
    """
    counted = {"avg_input_tokens": spec.avg_input_tokens}
    if not spec.pooling:  # a pooling request has no output
        counted["avg_output_tokens"] = spec.avg_output_tokens
    defaults = [name for name in counted if not given_in(doc, (*at, name))]
    window = f"max_context_tokens ({spec.max_context_tokens:,}): an average request would not fit its context window"
    if not defaults:
        return f"{' + '.join(counted)} ({request:,}) exceeds {window}"
    terms = " + ".join(
        f"{name} (default {value:,}, not given)" if name in defaults else f"{name} ({value:,})" for name, value in counted.items()
    )
    total = f" = {request:,}" if len(counted) > 1 else ""
    give = f"; give {' and '.join(defaults)}" if len(defaults) == len(counted) else ""  # the window alone is the user's
    return f"{terms}{total} exceeds {window}{give}"


def prompt_tail_errors(doc: Document, i: int, spec: InferenceSpec, *, fixed: bool) -> list[InputError]:
    """Deployment ``i``'s ``p95_input_tokens`` against its average prompt and its context window, at the field.

    The TTFT p95 is taken over a mix of two prompt lengths with the given mean and p95
    (:func:`generator.sizing.serving_queue.least_spread_mix`): a p95 below the mean, or above 20 times it (Markov's
    inequality: a mean of ``avg`` leaves fewer than one prompt in twenty ``20 avg`` long), describes no such mix; a p95
    prompt with the average output must fit ``max_context_tokens``, or the engine refuses those requests.
    """
    tail = spec.p95_input_tokens
    if tail is None:
        return []
    at: Path = ("deployments", i, "inference", "p95_input_tokens")
    where = doc.locate(at)
    if spec.pooling or fixed:
        kind = f"a pooling service (task: {spec.task})" if spec.pooling else "hardware.fixed (one llama.cpp-style stream)"
        unplanned = f"p95_input_tokens is not planned for {kind}: its latency is sized for the average input; drop it"
        return [InputError(unplanned, where)]
    if why := tail_problem(tail, spec.avg_input_tokens, "p95_input_tokens", "avg_input_tokens"):
        return [InputError(why, where)]
    if tail + spec.avg_output_tokens > spec.max_context_tokens:
        return [
            InputError(
                f"p95_input_tokens + avg_output_tokens ({tail + spec.avg_output_tokens:,}) exceeds max_context_tokens "
                f"({spec.max_context_tokens:,}): one request in twenty would not fit its context window",
                where,
            )
        ]
    return []


def average_rate_errors(doc: Document, i: int, spec: InferenceSpec) -> list[InputError]:
    """Deployment ``i``'s ``average_requests_per_second`` above its ``requests_per_second``, at the average's field.

    ``requests_per_second`` is the rate the replicas are sized for, the peak where the rate varies: an average above
    it would price tokens the fleet cannot serve.
    """
    average = spec.average_requests_per_second
    if average is None or average <= spec.requests_per_second or spec.job:  # a job's: refused as a job's field
        return []
    at: Path = ("deployments", i, "inference", "average_requests_per_second")
    return [
        InputError(
            f"average_requests_per_second {average:g} is more than requests_per_second {spec.requests_per_second:g}: "
            "requests_per_second is the rate the replicas are sized for (the peak), the average at most that; raise "
            "requests_per_second to the peak or lower the average",
            doc.locate(at),
        )
    ]


#: The least rate the schema allows ``requests_per_second`` (a rate below overflows the cost per token, fuzz29 item 5).
LEAST_RATE = 1e-6


def batch_job_errors(doc: Document, i: int, spec: InferenceSpec) -> list[InputError]:
    """Deployment ``i``'s batch job fields: together, instead of a rate, and with runs that fit in a month.

    ``requests_per_run`` and ``deadline_hours`` give the rate (their quotient) that ``requests_per_second`` otherwise
    gives: one without the other, or either beside a rate, leaves the rate ambiguous; ``runs_per_month`` counts runs of
    a job. Runs whose deadlines together exceed a month overlap: the replicas would serve all month, as a service.
    """
    at: Path = ("deployments", i, "inference")
    given = {f for f in ("requests_per_run", "deadline_hours", "runs_per_month") if given_in(doc, (*at, f))}
    if not given:
        return []
    if "requests_per_run" not in given or "deadline_hours" not in given:
        field = "deadline_hours" if "deadline_hours" in given else "runs_per_month"
        field = "requests_per_run" if "requests_per_run" in given else field
        missing = "deadline_hours" if "requests_per_run" in given else "requests_per_run"
        return [
            InputError(
                f"{field} belongs to a batch job, which gives requests_per_run and deadline_hours together (the rate "
                f"sized for is their quotient): add {missing}, or give a service's requests_per_second instead",
                doc.locate((*at, field)),
            )
        ]
    errors = [
        InputError(
            f"{field} does not go with a batch job (requests_per_run, deadline_hours): the job's rate is "
            "requests_per_run / (deadline_hours x 3600) while it runs, runs_per_month times; give the job's fields or "
            "a service's rates, not both",
            doc.locate((*at, field)),
        )
        for field in ("requests_per_second", "average_requests_per_second")
        if given_in(doc, (*at, field))
    ]
    hours, runs = spec.deadline_hours or 0.0, spec.runs_per_month or 1.0
    if runs * hours > HOURS_PER_MONTH:
        errors.append(
            InputError(
                f"{runs:g} run(s) a month of up to {hours:g} h take up to {runs * hours:,.0f} h, more than a month "
                f"({HOURS_PER_MONTH} h): the replicas would serve without a break, as a service; fewer runs_per_month, a "
                f"deadline_hours of at most {HOURS_PER_MONTH / runs:.4g} h, or a service's requests_per_second",
                doc.locate((*at, "runs_per_month" if "runs_per_month" in given else "deadline_hours")),
            )
        )
    return errors


def fixed_ram_errors(doc: Document, spec: FixedSpec) -> list[InputError]:
    """An existing machine must keep some RAM after the reservation for the OS and the engine."""
    at: Path = ("hardware", "fixed")
    if given_in(doc, (*at, "reserved_ram_gib")):
        where: Path = (*at, "reserved_ram_gib")
        told = f"reserved_ram_gib {spec.reserved_ram_gib:g}"
    else:
        where, told = (*at, "ram_gib"), f"the default reserved_ram_gib {spec.reserved_ram_gib:g}"
    problem = reserve_leaves_no_ram(spec, told, "ram_gib")
    errors = [] if problem is None else [InputError(problem, doc.locate(where))]
    if channels := channels_problem(spec):
        errors.append(InputError(channels, doc.locate((*at, "memory_channels"))))
    elif slots := ram_beyond_slots(spec, "ram_gib"):
        errors.append(InputError(slots, doc.locate((*at, "ram_gib"))))
    if module := module_on_a_desktop(spec):
        errors.append(InputError(module, doc.locate((*at, "gpu"))))
    if threads := threads_problem(spec, lambda field: field):  # fix159: as the estimate's --threads
        errors.append(InputError(threads, doc.locate((*at, "threads"))))
    if spec.cpu and spec.cpu_cores:  # newuser107: as the estimate's --cpu-cores, for a CPU the catalog lacks
        told = f"cpu_cores is for a CPU the catalog lacks: cpu {spec.cpu} counts its own cores"
        errors.append(InputError(told, doc.locate((*at, "cpu_cores"))))
    return errors


#: Hardware fields that choose or describe servers to plan: with ``hardware.fixed`` the machine is given, so they say
#: nothing (and a user who set them expects them to count).
_NOT_WITH_FIXED = (
    "gpus",
    "platforms",
    "inventory",
    "max_nodes",
    "max_racks",
    "max_budget_usd_per_month",
    "max_capex_usd",
)


#: Hardware fields about the racks servers stand in: a cloud instance stands in the provider's.
_RACK_FIELDS = ("rack_power_kw", "rack_circuits", "rack_units_reserved", "max_racks")
#: The rack fields that say nothing of an existing machine, which stands on an outlet, in no rack (fuzz30 item 9: a
#: 726 W machine on circuits worth 91 W planned with exit 0); ``max_racks`` is among :data:`_NOT_WITH_FIXED`.
_RACK_FIELDS_NOT_WITH_FIXED = ("rack_power_kw", "rack_circuits", "rack_units_reserved")


def cloud_rack_errors(doc: Document, hardware: Hardware) -> list[InputError]:
    """Rack limits on a cloud provider, which would rule out instance types for a rack they never stand in."""
    if hardware.provider == "baremetal":
        return []
    return [
        InputError(
            f"{field} describes racks of your own; {hardware.provider} instances stand in the provider's: drop it, or "
            "plan bare metal (provider: baremetal)",
            doc.locate(at),
        )
        for field in _RACK_FIELDS
        if given_in(doc, at := ("hardware", field))
    ]


def cloud_wall_circuit_errors(doc: Document, hardware: Hardware) -> list[InputError]:
    """``hardware.wall_circuit`` on a cloud provider, refused at its field as the rack fields are (fix168).

    It is the outlet a machine of the user's stands on at home or in an office; a cloud's instances stand in the
    provider's data centre, on no outlet of the user's, so nothing would read it.
    """
    at: Path = ("hardware", "wall_circuit")
    if hardware.provider == "baremetal" or not given_in(doc, at):
        return []
    why = (
        f"wall_circuit describes the wall outlet a machine of your own stands on at home or in an office; "
        f"{hardware.provider} instances stand in the provider's data centre, on no outlet of yours: drop it, or plan "
        "bare metal (provider: baremetal)"
    )
    return [InputError(why, doc.locate(at))]


def rack_circuit_errors(doc: Document, hardware: Hardware) -> list[InputError]:
    """``hardware.rack_circuits`` where it cannot hold: beside ``rack_power_kw``, or 2N over circuits it cannot halve.

    The rack's power is given once: as kW, or as the circuits it is derived from. 2N feeds a rack from an A and a B
    side of equal circuits, either of which carries it alone.
    """
    at: Path = ("hardware", "rack_circuits")
    circuits = hardware.rack_circuits
    if circuits is None or not given_in(doc, at):
        return []
    errors = []
    if given_in(doc, ("hardware", "rack_power_kw")):
        why = (
            "rack_circuits and rack_power_kw both give what a rack may draw: keep rack_circuits (the kW are derived "
            "from its circuits) or rack_power_kw, not both"
        )
        errors.append(InputError(why, doc.locate(at)))
    if not splits_evenly(circuits.circuits, circuits.redundancy):
        why = (
            f"redundancy {circuits.redundancy} feeds a rack from an A and a B side of equal circuits, either of which "
            f"carries it alone: {circuits.circuits} circuit(s) do not split so; give an even count (2: one circuit a side), or "
            "redundancy: none"
        )
        errors.append(InputError(why, doc.locate((*at, "circuits"))))
        return errors
    c = circuits
    watts = usable_power_w(
        c.voltage_v, c.phases, c.breaker_a, c.circuits, c.redundancy, c.continuous_load_fraction, c.power_factor
    )
    if watts < 1:  # fuzz30 item 11: breaker_a 0.001 gave "0 kW rack power", which rack_power_kw itself may not be
        why = (
            f"these circuits give a rack under a watt ({c.voltage_v:g} V x {c.breaker_a:g} A at "
            f"{c.continuous_load_fraction:g} of the breaker and power factor {c.power_factor:g}): no server runs on them; "
            "breaker_a is each circuit's rating in amperes"
        )
        errors.append(InputError(why, doc.locate((*at, "breaker_a"))))
    return errors


def buy_errors(doc: Document, hardware: Hardware) -> list[InputError]:
    """``hardware.buy`` where it cannot hold: false with no owned servers to plan on, true on an existing machine."""
    at: Path = ("hardware", "buy")
    if not given_in(doc, at):
        return []
    if hardware.fixed is not None:  # buy: false there says what planning the machine does anyway
        why = "hardware.fixed plans the one machine given there and buys nothing; drop buy or hardware.fixed"
        return [InputError(why, doc.locate(at))] if hardware.buy else []
    nothing = "buy: false leaves nothing to plan on"
    if hardware.buy:
        return []
    if hardware.provider != "baremetal":
        why = f"{nothing}: {hardware.provider} instances are rented; plan servers you own as bare metal"
    elif not hardware.inventory:
        why = f"{nothing}: list the servers you own under hardware.inventory"
    else:
        return []
    return [InputError(why, doc.locate(at))]


def capacity_errors(doc: Document, wl: Workload) -> list[InputError]:
    """``objective: capacity`` where nothing bounds it: no capex cap, or nothing bought for one to bound.

    newuser42 item 8: capacity asks what ``hardware.max_capex_usd`` buys (:mod:`generator.planner.capacity`). A cloud
    rents, ``hardware.fixed`` is a machine already there and ``buy: false`` buys nothing, so no capex bounds their rates
    (a cap there would leave the scale unbounded); a workload of training jobs alone has no rate to scale. The first
    that applies is said, at ``objective``.
    """
    if wl.objective != "capacity":
        return []
    hw = wl.hardware
    why = "objective capacity finds the largest scale of the inference request rates a fleet within max_capex_usd serves"
    if hw.fixed is not None:
        why += "; hardware.fixed is one machine already there, nothing is bought: drop objective capacity or hardware.fixed"
    elif hw.provider != "baremetal":
        why += (
            f"; {hw.provider} instances are rented, nothing is bought, so no capex bounds the fleet: plan bare metal "
            "(provider: baremetal), or cap a cloud's month with objective cost and hardware.max_budget_usd_per_month"
        )
    elif not hw.buy:
        why += "; buy: false buys nothing, so no capex bounds the fleet: drop buy: false, or use another objective"
    elif not any(isinstance(dep, InferenceDeployment) for dep in wl.deployments):
        why += "; the workload has no inference deployment (training jobs keep their runs as given): use objective cost"
    elif hw.max_capex_usd is None:
        why += ": set hardware.max_capex_usd, the most the servers bought may cost up front"
    else:
        return []
    return [InputError(why, doc.locate(("objective",)))]


def fixed_conflict_errors(doc: Document, hardware: Hardware) -> list[InputError]:
    """``hardware.fixed`` is one existing machine: fields that choose servers, or another provider, do not go with it."""
    if hardware.fixed is None:
        return []
    errors = [
        InputError(f"{field} does not go with hardware.fixed (the machine is given there); drop one of them", doc.locate(at))
        for field in _NOT_WITH_FIXED
        if given_in(doc, at := ("hardware", field))
    ]
    errors += [
        InputError(
            f"{field} describes the colocation racks servers are packed into; hardware.fixed is one machine on an outlet, "
            "in no rack (the plan says what wall circuit it needs): drop one of them",
            doc.locate(at),
        )
        for field in _RACK_FIELDS_NOT_WITH_FIXED
        if given_in(doc, at := ("hardware", field))
    ]
    if hardware.provider != "baremetal":
        errors.append(
            InputError(
                f"provider {hardware.provider} does not go with hardware.fixed: an existing machine is planned as bare metal",
                doc.locate(("hardware", "provider")),
            )
        )
    return errors


def fixed_pool_errors(doc: Document, wl: Workload) -> list[InputError]:
    """A deployment's ``pool`` names a node pool; ``hardware.fixed`` is one machine, named after the workload."""
    if wl.hardware.fixed is None:
        return []
    return [
        InputError(
            "pool does not go with hardware.fixed: the one machine's pool is named after the workload; drop it",
            doc.locate(("deployments", i, "pool")),
        )
        for i, dep in enumerate(wl.deployments)
        if dep.pool is not None
    ]
