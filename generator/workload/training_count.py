"""The number of training jobs a workload may hold, and its located error (hostile93).

Each training deployment is sized over every server kind and layout the workload allows (``training_options``): about
5 s of CPU and 20 MB each for a LoRA of an 8B model on bare metal, all server kinds open. At the 64 deployments the
schema allows, a workload of training jobs alone ran ``plan`` past 5 minutes at 1.2 GB, which a CI job reads as a hang.
"""

from __future__ import annotations

from generator.errors import InputError
from generator.workload.loader import Document
from generator.workload.models import TrainingDeployment, Workload

MAX_TRAINING_JOBS = 16


def training_count_errors(doc: Document, wl: Workload) -> list[InputError]:
    """More than :data:`MAX_TRAINING_JOBS` training deployments, refused at the first past the limit."""
    jobs = [i for i, dep in enumerate(wl.deployments) if isinstance(dep, TrainingDeployment)]
    if len(jobs) <= MAX_TRAINING_JOBS:
        return []
    return [
        InputError(
            f"the workload has {len(jobs)} training jobs, more than the {MAX_TRAINING_JOBS} allowed: each is sized "
            "over every server kind and layout the workload allows (seconds of CPU each), so many would keep a plan "
            "running for minutes; split them over several workload files (a run_after chain stays in one)",
            doc.locate(("deployments", jobs[MAX_TRAINING_JOBS], "training"), key=True),
        )
    ]
