"""Measure fine-tuning memory and speed of Hugging Face Trainer / PEFT runs on one GPU, random weights.

Each run builds a catalog model from its ``config.json`` (``generator/catalog/models.json``) with random bf16 or fp32
weights on the GPU, wraps it in PEFT LoRA where asked, and trains a few steps through ``transformers.Trainer`` on
random token ids (every sequence the full length, no padding), as ``TrainingArguments(bf16=True)`` does for a user.
Peak memory is PyTorch's (``max_memory_reserved`` and ``max_memory_allocated``) over the run, the model's own weights
included; the CUDA context is read once before anything is allocated. Tokens per second are timed over the steps after
the first. One JSON line per run goes to the file given (``--out``), written as each run ends, so a run cut short
keeps what it measured.

Needs torch, transformers, peft and accelerate (and bitsandbytes for the ``qlora`` set), nothing of specgen's (it runs
where specgen is not installed): ``python benchmarks/measure_finetune.py --out results.jsonl [--set fit|check|qlora]
[--deadline-s 400] [--only NAME]``. The ``qlora`` set (NF4 bases, 8-bit and paged optimizers) was dry-run on a CPU
with 2-layer models and has not run on a GPU yet.
``--rows results.jsonl`` turns a results file into calibration rows (``training_memory`` and ``training_throughput``
of ``tests/data/calibration.json``, printed as JSON); the rows whose ``source`` names a file under
``benchmarks/measurements/`` came from it, and their ``setup`` says where and with which versions.
"""

from __future__ import annotations

import argparse
import gc
import json
import pathlib
import platform
import time
from typing import Any, NamedTuple

CATALOG = pathlib.Path(__file__).resolve().parent.parent / "generator" / "catalog" / "models.json"
GB = 1e9


class Run(NamedTuple):
    """One measured fine-tuning run."""

    name: str
    model: str
    method: str  # "full", "lora" or "qlora"
    #: "bf16": the model's weights in bf16 (AdamW states in bf16 too: specgen's adamw-bf16 for full runs);
    #: "fp32": weights in fp32 under bf16 autocast (specgen's adamw-torch-amp).
    weights: str
    checkpointing: bool
    micro_batch: int
    seq_len: int
    lora_rank: int = 16
    lora_dropout: float = 0.0
    lora_targets: tuple[str, ...] = ("all-linear",)
    #: "fp32": PEFT's default (``autocast_adapter_dtype=True`` upcasts bf16 adapters to fp32, AdamW states fp32);
    #: "bf16": adapters left in the base's bf16 (``autocast_adapter_dtype=False``; specgen's adamw-bf16).
    adapters: str = "fp32"
    #: The frozen base: "bf16" (LoRA, full), or "nf4" (QLoRA: bitsandbytes 4-bit NF4 with double quantization and bf16
    #: compute, loaded through ``from_pretrained`` and prepared by PEFT's ``prepare_model_for_kbit_training``).
    base: str = "bf16"
    #: The Trainer's ``optim`` (None: its default, ``adamw_torch_fused``); bitsandbytes' ``adamw_8bit`` or
    #: ``paged_adamw_8bit`` (states in CUDA managed memory, outside PyTorch's allocator).
    optim: str | None = None


LLAMA_8B = "meta-llama/Llama-3.1-8B"
LLAMA_1B = "meta-llama/Llama-3.2-1B"
LLAMA_3B = "meta-llama/Llama-3.2-3B"
ATTENTION = ("q_proj", "k_proj", "v_proj", "o_proj")

#: The runs of each set, in the order they run (the most telling first, so a deadline cuts the least): ``fit``, the
#: first set (its rows fitted the allocator's reserve and checked PEFT's traffic), ``check``, other models and
#: settings measured after those mechanisms were in the engine (out of sample), and ``qlora``, bitsandbytes NF4 bases
#: and 8-bit optimizers (not yet measured).
RUNS: dict[str, tuple[Run, ...]] = {}
RUNS["fit"] = (
    Run("llama8b-lora-ckpt-b1-s2048", LLAMA_8B, "lora", "bf16", True, 1, 2048),
    Run("llama8b-lora-ckpt-b1-s8192", LLAMA_8B, "lora", "bf16", True, 1, 8192),
    Run("llama8b-lora-nockpt-b1-s2048", LLAMA_8B, "lora", "bf16", False, 1, 2048),
    Run("llama1b-full-fp32-nockpt-b4-s2048", LLAMA_1B, "full", "fp32", False, 4, 2048),
    Run("llama1b-full-bf16-ckpt-b8-s2048", LLAMA_1B, "full", "bf16", True, 8, 2048),
    Run("llama8b-full-bf16-ckpt-b1-s4096", LLAMA_8B, "full", "bf16", True, 1, 4096),
    Run("llama3b-full-fp32-ckpt-b4-s2048", LLAMA_3B, "full", "fp32", True, 4, 2048),
    Run("llama8b-lora-ckpt-b4-s4096", LLAMA_8B, "lora", "bf16", True, 4, 4096),
    Run("llama8b-lora-ckpt-b1-s16384", LLAMA_8B, "lora", "bf16", True, 1, 16384),
    Run("llama8b-lora-nockpt-b1-s4096", LLAMA_8B, "lora", "bf16", False, 1, 4096),
    Run("llama8b-lora-drop01-ckpt-b1-s8192", LLAMA_8B, "lora", "bf16", True, 1, 8192, lora_dropout=0.1),
    Run("llama8b-lora-r64-ckpt-b1-s4096", LLAMA_8B, "lora", "bf16", True, 1, 4096, lora_rank=64),
    Run("mistral7b-lora-ckpt-b4-s4096", "mistralai/Mistral-7B-v0.1", "lora", "bf16", True, 4, 4096),
    Run("mistral7b-lora-nockpt-b1-s4096", "mistralai/Mistral-7B-v0.1", "lora", "bf16", False, 1, 4096),
    Run("qwen7b-lora-ckpt-b1-s4096", "Qwen/Qwen2.5-7B", "lora", "bf16", True, 1, 4096),
    Run("qwen7b-lora-nockpt-b1-s2048", "Qwen/Qwen2.5-7B", "lora", "bf16", False, 1, 2048),
    Run("gemma9b-lora-ckpt-b1-s4096", "google/gemma-2-9b-it", "lora", "bf16", True, 1, 4096),
    Run("gemma9b-lora-ckpt-b2-s2048", "google/gemma-2-9b-it", "lora", "bf16", True, 2, 2048),
    Run("llama1b-full-fp32-ckpt-b8-s2048", LLAMA_1B, "full", "fp32", True, 8, 2048),
    Run("llama1b-full-bf16-nockpt-b4-s4096", LLAMA_1B, "full", "bf16", False, 4, 4096),
    Run("llama3b-full-bf16-ckpt-b1-s8192", LLAMA_3B, "full", "bf16", True, 1, 8192),
    Run("llama8b-full-bf16-ckpt-b2-s8192", LLAMA_8B, "full", "bf16", True, 2, 8192),
    Run("qwen3moe-lora-attn-ckpt-b1-s2048", "Qwen/Qwen3-30B-A3B", "lora", "bf16", True, 1, 2048, lora_targets=ATTENTION),
    Run("qwen3moe-lora-attn-ckpt-b1-s8192", "Qwen/Qwen3-30B-A3B", "lora", "bf16", True, 1, 8192, lora_targets=ATTENTION),
)
QWEN3_8B = "Qwen/Qwen3-8B"
PHI3 = "microsoft/Phi-3-mini-4k-instruct"
MISTRAL_V03 = "mistralai/Mistral-7B-Instruct-v0.3"
RUNS["check"] = (
    Run("qwen3-8b-lora-ckpt-b2-s4096", QWEN3_8B, "lora", "bf16", True, 2, 4096),
    Run("qwen3-8b-lora-nockpt-b1-s4096", QWEN3_8B, "lora", "bf16", False, 1, 4096),
    Run("llama8b-lora-bf16adapters-ckpt-b1-s8192", LLAMA_8B, "lora", "bf16", True, 1, 8192, adapters="bf16"),
    Run("llama8b-lora-bf16adapters-nockpt-b1-s4096", LLAMA_8B, "lora", "bf16", False, 1, 4096, adapters="bf16"),
    Run("phi3mini-lora-nockpt-b2-s2048", PHI3, "lora", "bf16", False, 2, 2048),
    Run("phi3mini-lora-ckpt-b4-s4096", PHI3, "lora", "bf16", True, 4, 4096),
    Run("mistral7b-v03-lora-nockpt-b1-s4096", MISTRAL_V03, "lora", "bf16", False, 1, 4096),
    Run("mistral7b-v03-lora-ckpt-b4-s4096", MISTRAL_V03, "lora", "bf16", True, 4, 4096),
    Run("llama3b-lora-nockpt-b2-s4096", LLAMA_3B, "lora", "bf16", False, 2, 4096),
    Run("llama3b-lora-ckpt-b8-s2048", LLAMA_3B, "lora", "bf16", True, 8, 2048),
    Run("llama8b-lora-ckpt-b2-s2048", LLAMA_8B, "lora", "bf16", True, 2, 2048),
    Run("llama8b-lora-qv-ckpt-b1-s8192", LLAMA_8B, "lora", "bf16", True, 1, 8192, lora_targets=("q_proj", "v_proj")),
    Run("qwen3-8b-lora-drop005-ckpt-b1-s4096", QWEN3_8B, "lora", "bf16", True, 1, 4096, lora_dropout=0.05),
    Run("qwen14b-lora-ckpt-b1-s8192", "Qwen/Qwen2.5-14B", "lora", "bf16", True, 1, 8192),
    Run("qwen7b-full-bf16-ckpt-b1-s4096", "Qwen/Qwen2.5-7B", "full", "bf16", True, 1, 4096),
    Run("llama3b-full-fp32-nockpt-b2-s2048", LLAMA_3B, "full", "fp32", False, 2, 2048),
    Run("gemma3-1b-full-bf16-ckpt-b8-s2048", "google/gemma-3-1b-it", "full", "bf16", True, 8, 2048),
    Run("phi3mini-full-bf16-ckpt-b2-s4096", PHI3, "full", "bf16", True, 2, 4096),
)
RUNS["qlora"] = (
    Run("llama8b-qlora-ckpt-b1-s2048", LLAMA_8B, "qlora", "bf16", True, 1, 2048, base="nf4"),
    Run("llama8b-qlora-ckpt-b1-s8192", LLAMA_8B, "qlora", "bf16", True, 1, 8192, base="nf4"),
    Run("llama8b-qlora-nockpt-b1-s2048", LLAMA_8B, "qlora", "bf16", False, 1, 2048, base="nf4"),
    Run("llama8b-qlora-paged8bit-ckpt-b2-s4096", LLAMA_8B, "qlora", "bf16", True, 2, 4096, base="nf4", optim="paged_adamw_8bit"),
    Run("llama8b-qlora-r64-ckpt-b1-s4096", LLAMA_8B, "qlora", "bf16", True, 1, 4096, lora_rank=64, base="nf4"),
    Run("llama8b-lora-adamw8bit-ckpt-b1-s4096", LLAMA_8B, "lora", "bf16", True, 1, 4096, optim="adamw_8bit"),
    Run("llama3b-qlora-ckpt-b4-s2048", LLAMA_3B, "qlora", "bf16", True, 4, 2048, base="nf4"),
    Run("llama3b-qlora-nockpt-b2-s2048", LLAMA_3B, "qlora", "bf16", False, 2, 2048, base="nf4"),
)
#: Where a QLoRA run's random bf16 checkpoint is written once per model, for ``from_pretrained`` to quantize.
CHECKPOINTS = pathlib.Path("/tmp/measure_finetune_checkpoints")

#: Trainer steps a run takes; the first is not timed (kernels chosen, optimizer states created).
STEPS = 4


def catalog_config(model_id: str) -> dict[str, Any]:
    """The catalog's copy of a model's config.json."""
    models = json.loads(CATALOG.read_text())["models"]
    return next(m["config"] for m in models if m["id"] == model_id)


def build_model(run: Run, device: str, layers: int | None = None) -> Any:
    """The run's model with random weights on ``device`` (PEFT-wrapped for LoRA); ``layers``: cut to that many."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    raw = {k: v for k, v in catalog_config(run.model).items() if k not in ("torch_dtype", "dtype")}
    if layers is not None:
        raw["num_hidden_layers"] = layers
        raw.pop("layer_types", None)
    config = AutoConfig.for_model(raw.pop("model_type"), **raw)
    dtype = torch.bfloat16 if run.weights == "bf16" else torch.float32
    if run.base == "nf4":
        model = _quantized(run.model, config, device)
    else:
        with torch.device(device):
            model = AutoModelForCausalLM.from_config(config, dtype=dtype, attn_implementation="sdpa")
    model.config.use_cache = False
    if run.method in ("lora", "qlora"):
        from peft import LoraConfig, get_peft_model

        targets: Any = "all-linear" if run.lora_targets == ("all-linear",) else list(run.lora_targets)
        lora = LoraConfig(
            r=run.lora_rank,
            lora_alpha=2 * run.lora_rank,
            lora_dropout=run.lora_dropout,
            target_modules=targets,
            task_type="CAUSAL_LM",
        )
        model = get_peft_model(model, lora, autocast_adapter_dtype=run.adapters == "fp32")
    return model


def _quantized(model_id: str, config: Any, device: str) -> Any:
    """The model loaded as bitsandbytes NF4 from a random bf16 checkpoint (written once), prepared for k-bit training."""
    import torch
    from peft import prepare_model_for_kbit_training
    from transformers import AutoModelForCausalLM, BitsAndBytesConfig

    folder = CHECKPOINTS / f"{model_id.replace('/', '--')}-{config.num_hidden_layers}"
    if not (folder / "config.json").exists():
        with torch.device(device):
            dense = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
        dense.save_pretrained(folder)
        del dense
        torch.cuda.empty_cache()
    quant = BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_quant_type="nf4",
        bnb_4bit_use_double_quant=True,
        bnb_4bit_compute_dtype=torch.bfloat16,
    )
    model = AutoModelForCausalLM.from_pretrained(
        folder, quantization_config=quant, dtype=torch.bfloat16, device_map={"": device}, attn_implementation="sdpa"
    )
    # the Trainer turns checkpointing on or off from its own arguments
    return prepare_model_for_kbit_training(model, use_gradient_checkpointing=False)


class TokenSet:
    """Random token ids, every sequence ``seq_len`` long, labels = inputs (the model shifts them)."""

    def __init__(self, vocab: int, seq_len: int, count: int) -> None:
        import torch

        generator = torch.Generator().manual_seed(0)
        self.ids = torch.randint(0, vocab, (count, seq_len), generator=generator)

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i: int) -> dict[str, Any]:
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


def measure(run: Run, work_dir: str, layers: int | None = None) -> dict[str, Any]:
    """Train ``run`` for :data:`STEPS` steps; its peak memory, step times and what the Trainer chose."""
    import torch
    from transformers import Trainer, TrainerCallback, TrainingArguments

    on_gpu = torch.cuda.is_available()
    model = build_model(run, "cuda" if on_gpu else "cpu", layers)
    params = sum(p.numel() for p in model.parameters())
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    vocab = model.config.vocab_size if hasattr(model.config, "vocab_size") else model.base_model.config.vocab_size
    step_s: list[float] = []

    class StepClock(TrainerCallback):  # type: ignore[misc]  # transformers is not installed where mypy runs
        started = 0.0

        def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if on_gpu:
                torch.cuda.synchronize()
            self.started = time.perf_counter()

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if on_gpu:
                torch.cuda.synchronize()
            step_s.append(time.perf_counter() - self.started)

    args = TrainingArguments(
        output_dir=work_dir,
        per_device_train_batch_size=run.micro_batch,
        max_steps=STEPS,
        bf16=on_gpu,
        use_cpu=not on_gpu,
        gradient_checkpointing=run.checkpointing,
        gradient_checkpointing_kwargs={"use_reentrant": False} if run.checkpointing else None,
        learning_rate=1e-5,
        save_strategy="no",
        logging_strategy="no",
        report_to="none",
        disable_tqdm=True,
        dataloader_num_workers=0,
        seed=0,
        **({"optim": run.optim} if run.optim else {}),
    )
    trainer = Trainer(
        model=model, args=args, train_dataset=TokenSet(vocab, run.seq_len, STEPS * run.micro_batch), callbacks=[StepClock()]
    )
    if on_gpu:
        torch.cuda.reset_peak_memory_stats()
    trainer.train()
    timed = step_s[1:]
    result: dict[str, Any] = {
        **run._asdict(),
        "params": params,
        "trainable_params": trainable,
        "optim": str(args.optim),
        "attn_implementation": getattr(model.config, "_attn_implementation", None),
        "experts_implementation": getattr(model.config, "_experts_implementation", None),
        "step_s": [round(s, 4) for s in step_s],
        "tokens_per_s": round(run.micro_batch * run.seq_len * len(timed) / sum(timed), 1) if timed else None,
    }
    if on_gpu:
        result["peak_reserved_gb"] = round(torch.cuda.max_memory_reserved() / GB, 3)
        result["peak_allocated_gb"] = round(torch.cuda.max_memory_allocated() / GB, 3)
    del trainer, model
    gc.collect()
    if on_gpu:
        torch.cuda.empty_cache()
    return result


def environment() -> dict[str, Any]:
    """Versions and the GPU the runs ran on, and the memory the CUDA context takes before any allocation."""
    import accelerate
    import peft
    import torch
    import transformers

    env: dict[str, Any] = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "peft": peft.__version__,
        "accelerate": accelerate.__version__,
    }
    if torch.cuda.is_available():
        free, total = torch.cuda.mem_get_info()
        env |= {
            "gpu": torch.cuda.get_device_name(),
            "gpu_total_gb": round(total / GB, 3),
            "cuda_context_gb": round((total - free) / GB, 3),
            "cuda": torch.version.cuda,
        }
    return env


def calibration_rows(results: pathlib.Path, gpu_id: str) -> dict[str, list[dict[str, Any]]]:
    """``training_memory`` and ``training_throughput`` rows of each measured run in ``results`` (a file of
    :func:`main`'s), on the catalog GPU ``gpu_id``; runs that failed or were skipped give none."""
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    env = lines[0]["environment"]
    versions = f"torch {env['torch']}, transformers {env['transformers']}, peft {env['peft']}, accelerate {env['accelerate']}"
    memory, speed = [], []
    for run in lines[1:]:
        if "peak_reserved_gb" not in run:
            continue
        lora = run["method"] in ("lora", "qlora")
        # PEFT keeps the adapters in fp32 (autocast_adapter_dtype) over the bf16 base: specgen's adamw (adamw-8bit with
        # bitsandbytes' 8-bit AdamW); a whole bf16 model's AdamW states are bf16 (adamw-bf16); an fp32 model under bf16
        # autocast is adamw-torch-amp
        optim = run.get("optim") or ""
        if lora:
            optimizer = "adamw" if run.get("adapters", "fp32") == "fp32" else "adamw-bf16"
            optimizer = "adamw-8bit" if "8bit" in optim else optimizer
        else:
            optimizer = {"bf16": "adamw-bf16", "fp32": "adamw-torch-amp"}[run["weights"]]
        rank = f" rank {run['lora_rank']} ({run.get('adapters', 'fp32')} adapters)" if lora else ""
        what = (
            f"{run['model']} {run['method']}{rank}, {run.get('base', 'bf16')} base, {run['weights']} weights, "
            f"batch {run['micro_batch']} x {run['seq_len']} tokens, checkpointing {'on' if run['checkpointing'] else 'off'}"
        )
        setup = (
            f"specgen's own run on one {env['gpu']} ({gpu_id}) lent to a session, 2026-12-04: {what}; "
            f"benchmarks/measure_finetune.py run '{run['name']}' (random weights from the catalog config, transformers "
            f"Trainer bf16=True, optim {run['optim'].split('.')[-1].lower()}, attention {run['attn_implementation']}, "
            f"{STEPS} steps on random token ids, no padding, lora_alpha 2 x rank); {versions}; CUDA context "
            f"{env['cuda_context_gb']} GB apart. Peak reserved {run['peak_reserved_gb']} GB, allocated "
            f"{run['peak_allocated_gb']} GB (torch.cuda.max_memory_*), the model's weights included"
        )
        common = {
            "framework": "hf",
            "framework_as_reported": f"Hugging Face Trainer + PEFT ({versions})",
            "profile": "hf",
            "model": run["model"],
            "method": run["method"],
            "gpu": gpu_id,
            "gpus": 1,
            "micro_batch": run["micro_batch"],
            "seq_len": run["seq_len"],
            "checkpointing": "full" if run["checkpointing"] else "none",
            "lora_rank": run["lora_rank"],
            "setup": setup,
            "measured_by": "specgen",
            "optimizer": optimizer,
            "run_set": env.get("set", "fit"),
            "source": f"benchmarks/measurements/{results.name}",
        }
        memory.append(
            common
            | {
                "zero_stage": 0,
                "flash_attention": True,
                "lora_targets": list(run["lora_targets"]),
                "lora_dropout": run["lora_dropout"],
                "offload_params": False,
                "offload_optimizer": False,
                "paged_optimizer": optim.startswith("paged_"),
                "measured_gb": run["peak_reserved_gb"],
                "measured_as": "reserved",
                "allocated_gb": run["peak_allocated_gb"],
            }
        )
        speed.append(
            common
            | {
                "accumulation": 1,
                "lora_targets": list(run["lora_targets"]),
                "lora_dropout": run["lora_dropout"],
                "tokens_per_gpu_per_sec": run["tokens_per_s"],
            }
        )
        # Transformers 5 runs the MoE runs' experts through grouped_mm (their results say so), which the step times: its
        # launches, routing passes and grouped GEMMs' rate (acc117); a dense model reports "eager" and has no experts
    return {"training_memory": memory, "training_throughput": speed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=pathlib.Path, help="print calibration rows of this results file and stop")
    parser.add_argument("--gpu", default="h200-sxm-141gb", help="the catalog id of the GPU the results ran on")
    parser.add_argument("--out", type=pathlib.Path)
    parser.add_argument("--deadline-s", type=float, default=400.0, help="start no run after this many seconds")
    parser.add_argument("--set", choices=sorted(RUNS), default="fit", help="which set of runs (default: fit)")
    parser.add_argument("--only", action="append", help="a run's name (repeatable); default all of the set")
    parser.add_argument("--tiny", action="store_true", help="shrink every model to 2 layers (a dry run on a CPU)")
    opts = parser.parse_args()
    if opts.rows:
        print(json.dumps(calibration_rows(opts.rows, opts.gpu), indent=1, sort_keys=True))
        return
    if opts.out is None:
        parser.error("--out is required to measure")
    started = time.perf_counter()
    runs = [r for r in RUNS[opts.set] if not opts.only or r.name in opts.only]
    with opts.out.open("w") as out:
        out.write(json.dumps({"environment": environment() | {"set": opts.set}}, sort_keys=True) + "\n")
        out.flush()
        for run in runs:
            if time.perf_counter() - started > opts.deadline_s:
                out.write(json.dumps({"name": run.name, "skipped": "deadline"}) + "\n")
                continue
            sized = run._replace(seq_len=min(run.seq_len, 64), micro_batch=1) if opts.tiny else run
            try:
                row = measure(sized, "/tmp/measure_finetune", 2 if opts.tiny else None)
            except Exception as exc:  # one run's failure (out of memory, an API change) must not lose the others
                row = {"name": run.name, "error": f"{type(exc).__name__}: {str(exc)[:400]}"}
                gc.collect()
                _empty_cache()
            row["elapsed_s"] = round(time.perf_counter() - started, 1)
            out.write(json.dumps(row, sort_keys=True) + "\n")
            out.flush()
            print(json.dumps(row, sort_keys=True), flush=True)


def _empty_cache() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
