"""What would make a training estimate fit: the memory levers a job has not turned on, and those it has.

The estimate's "does NOT fit" advice names only the settings that are off (newuser25 item 11: it offered
``--gradient-checkpointing full`` and ``--loss chunked`` to a job running both) and says which are on already. Levers on
the model states of a full fine-tune include stepping the optimizer in backward and an 8-bit optimizer (newuser25 item 3:
neither was ever offered), where the job's framework has them.
"""

from __future__ import annotations

from generator.named_tuple import NamedTuple
from generator.sizing.frameworks import framework_profile, recomputes_ops
from generator.sizing.training_conflicts import OWN_OPTIMIZER_OFFLOAD
from generator.words import listed

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from generator.sizing.training import TrainingSetup


class Lever(NamedTuple):
    """One memory setting: the option that turns it on, how it is named when on, and whether it is on."""

    flag: str
    label: str
    on: bool


def activation_levers(setup: TrainingSetup) -> list[Lever]:
    """The settings that shrink a job's activations: checkpointing, a loss that is not over full logits, offload.

    Op-level selective checkpointing where the framework runs it (review40 item 11: FSDP2's, faster than full), short
    of full checkpointing.
    """
    loss, offload, _ = setup.techniques()
    selective = []
    if recomputes_ops(setup.framework, "selective") and setup.checkpointing != "full":
        on = setup.checkpointing == "selective"
        selective = [Lever("--gradient-checkpointing selective", "op-level selective checkpointing", on)]
    return [
        *selective,
        Lever("--gradient-checkpointing full", "full gradient checkpointing", setup.checkpointing == "full"),
        Lever("--loss chunked", f"the {loss} loss", loss != "standard"),
        Lever("--activation-offload", "activation offload", offload),
    ]


def state_levers(setup: TrainingSetup) -> list[Lever]:
    """The settings that shrink a full fine-tune's gradients and optimizer states on the GPU, where its framework has them.

    Stepping in backward where the framework has it (with one micro-batch a step: it takes no accumulation); an 8-bit
    optimizer where the framework trains in one (Megatron-LM does not).
    """
    if setup.method != "full":
        return []
    profile = framework_profile(setup.framework) if setup.framework else None
    _, _, in_backward = setup.techniques()
    levers = []
    if profile is None or profile.has_optimizer_in_backward:
        # it takes no accumulation: offered with one micro-batch a step where the job accumulates
        flag = "--optimizer-in-backward" + (" with --accumulation 1" if setup.accumulation_steps > 1 else "")
        levers.append(Lever(flag, "the optimizer stepped in backward", in_backward))
    if (eight_bit := _eight_bit_regime(setup)) is not None:
        levers.append(Lever(f"--optimizer {eight_bit}", f"the 8-bit optimizer {setup.optimizer}", "8bit" in setup.optimizer))
    return levers


def offload_levers(setup: TrainingSetup) -> list[Lever]:
    """Optimizer and parameter offload to host RAM (paged optimizer states count as offloaded)."""
    states = "paged optimizer states" if setup.paged_optimizer else "optimizer offload"
    # at ZeRO-0 it is ZeRO-Offload's, stage 1-3, outside torchtune's / a PyTorch loop's own (newuser43 item 7)
    zero_offload = setup.zero_stage == 0 and setup.framework not in OWN_OPTIMIZER_OFFLOAD
    return [
        Lever(
            "--zero 1 --offload-optimizer" if zero_offload else "--offload-optimizer",
            states,
            setup.offloads_optimizer() or setup.paged_optimizer,
        ),
        Lever("--offload-params", "parameter offload", setup.offload_params),
    ]


def _eight_bit_regime(setup: TrainingSetup) -> str | None:
    """The 8-bit optimizer regime the job's framework trains in (its bf16 one under a pure-bf16 regime); None: none."""
    profile = framework_profile(setup.framework) if setup.framework else None
    if profile is not None and profile.regimes is not None:
        return next((r for r in profile.regimes if "8bit" in r), None)
    return "adamw-8bit-bf16" if setup.optimizer.endswith("-bf16") else "adamw-8bit"


def flags_off(levers: list[Lever]) -> str:
    """The options of the levers that are off, as a list ending in 'or'; empty where every one is on."""
    flags = [lever.flag for lever in levers if not lever.on]
    return listed(flags, "or")


def already_on(setup: TrainingSetup, *, activations: bool = True, states: bool = True) -> str:
    """'already on: ...' naming the levers in effect (the activations' and the states', as asked); empty: none."""
    levers = (activation_levers(setup) if activations else []) + (state_levers(setup) + offload_levers(setup) if states else [])
    labels = [lever.label for lever in levers if lever.on]
    return f"already on: {', '.join(labels)}" if labels else ""


def lighter_activations(setup: TrainingSetup) -> str:
    """The activation levers still off, as the advice offers them; empty where every one is on."""
    levers = activation_levers(setup)
    off = flags_off(levers)
    if not off:
        return ""
    return f"{off} {'shrinks' if sum(not lever.on for lever in levers) == 1 else 'shrink'} the activations"


def lighter_states(setup: TrainingSetup) -> str:
    """How the model states could shrink: the state levers still off, sharding, the offloads still off."""
    parts = []
    if states := flags_off(state_levers(setup)):
        parts.append(f"shrink the model states ({states})")
    profile = framework_profile(setup.framework) if setup.framework else None
    stages = profile.zero_stages if profile is not None and profile.zero_stages is not None else (3,)
    # Megatron-LM shards its optimizer states only (ZeRO-1): the rest splits by --tp / --pp (newuser35 item 2)
    how = "--zero 3 with more --gpus" if 3 in stages else f"--zero {max(stages)} with more --gpus, or more --tp / --pp"
    parts.append(f"shard {'them' if parts else 'the model states'} ({how})")
    if offload := flags_off(offload_levers(setup)):
        parts.append(f"offload them ({offload.replace(' or ', ', ')})")
    return ", ".join(parts)
