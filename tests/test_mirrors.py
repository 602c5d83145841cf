"""An air-gapped site's mirrors, declared once in the workload (newuser36 item 7: a sovereign colo GPU cloud).

* With ``mirrors``, no file of the rendered tree sends a pull to the internet: every public registry, Helm repository
  or Hub name left in it is a citation (a catalog ``source``) or the upstream a containerd ``hosts.toml`` redirects to
  the mirror, and every image repository is on the mirror. Walked over every file of the example's tree.
* The GPU Operator values, merged over the chart's own defaults as Helm merges them (the defaults carried here with
  their source), leave no image on a public registry and give every component the pull secret; they and the
  ``NVIDIADriver`` objects are valid against the operator's CRDs (``../shared/crds``, skipped without it).
* The containerd files a role writes from the group vars parse as TOML and resolve, by containerd's rule, to the
  mirror's path for every upstream image.
* Bad mirrors are refused at their field (file:line:col); without the block nothing changes (the goldens).
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from generator.api import render_file, render_files
from generator.errors import InputError, MultipleInputError
from generator.render.gpu_stack import GpuPoolStack, render_cluster
from generator.render.mirrors import NOT_COVERED, ClusterMirror, containerd_hosts, mirrored, split_registry
from generator.workload import load_workload
from tests.conftest import REPO, SHARED, require_shared
from tests.helpers import ansible_reader, edited_copy, specgen_in_process

EXAMPLE = REPO / "examples" / "colo-airgap.yaml"
REGISTRY = "reg.colo.example:5000/mirror"
SECRET = "colo-registry"
CA = "/etc/pki/colo/registry-ca.pem"
VALUES = "cluster/gpu-operator/values.yaml"

#: The public registries, Helm repositories and Hub an air-gapped site cannot reach, as whole host names.
PUBLIC = re.compile(
    r"(?<![A-Za-z0-9.-])(nvcr\.io|docker\.io|registry-1\.docker\.io|ghcr\.io|quay\.io|registry\.k8s\.io|k8s\.gcr\.io"
    r"|gcr\.io|huggingface\.co|hf\.co|helm\.ngc\.nvidia\.com|nvidia\.github\.io)(?![A-Za-z0-9-]|\.[A-Za-z0-9])"
)

#: The GPU Operator chart's own defaults for every key that names an image (and its pull secrets), as its values.yaml
#: gives them: https://github.com/NVIDIA/gpu-operator/blob/d7413be9727387537b654a25d25f932767794663/deployments/gpu-operator/values.yaml
#: (a 24.x chart; a 25.3.x copy has the same keys and repositories) and the node-feature-discovery sub-chart's
#: https://github.com/NVIDIA/gpu-operator/blob/17c0808606923914106359966de575233be60d51/deployments/gpu-operator/charts/node-feature-discovery/values.yaml
#: Kata's runtime-class artifacts are on nvcr.io too; the Kata manager is disabled by default.
CHART_DEFAULTS: dict[str, Any] = {
    "validator": {"repository": "nvcr.io/nvidia/cloud-native", "image": "gpu-operator-validator", "imagePullSecrets": []},
    "operator": {
        "repository": "nvcr.io/nvidia",
        "image": "gpu-operator",
        "imagePullSecrets": [],
        "initContainer": {"image": "cuda", "repository": "nvcr.io/nvidia", "version": "12.5.1-base-ubi8"},
    },
    "driver": {
        "repository": "nvcr.io/nvidia",
        "image": "driver",
        "imagePullSecrets": [],
        "manager": {"image": "k8s-driver-manager", "repository": "nvcr.io/nvidia/cloud-native", "version": "v0.6.10"},
    },
    "toolkit": {"repository": "nvcr.io/nvidia/k8s", "image": "container-toolkit", "imagePullSecrets": []},
    "devicePlugin": {"repository": "nvcr.io/nvidia", "image": "k8s-device-plugin", "imagePullSecrets": []},
    "dcgm": {"enabled": False, "repository": "nvcr.io/nvidia/cloud-native", "image": "dcgm"},
    "dcgmExporter": {"repository": "nvcr.io/nvidia/k8s", "image": "dcgm-exporter"},
    "gfd": {"repository": "nvcr.io/nvidia", "image": "k8s-device-plugin", "imagePullSecrets": []},
    "migManager": {"repository": "nvcr.io/nvidia/cloud-native", "image": "k8s-mig-manager", "imagePullSecrets": []},
    "nodeStatusExporter": {
        "repository": "nvcr.io/nvidia/cloud-native",
        "image": "gpu-operator-validator",
        "imagePullSecrets": [],
    },
    "gds": {"repository": "nvcr.io/nvidia/cloud-native", "image": "nvidia-fs", "imagePullSecrets": []},
    "gdrcopy": {"repository": "nvcr.io/nvidia/cloud-native", "image": "gdrdrv", "imagePullSecrets": []},
    "vgpuManager": {
        "repository": "",  # the site builds the vGPU manager image: no default to mirror
        "image": "vgpu-manager",
        "imagePullSecrets": [],
        "driverManager": {"image": "k8s-driver-manager", "repository": "nvcr.io/nvidia/cloud-native"},
    },
    "vgpuDeviceManager": {"repository": "nvcr.io/nvidia/cloud-native", "image": "vgpu-device-manager", "imagePullSecrets": []},
    "vfioManager": {
        "repository": "nvcr.io/nvidia",
        "image": "cuda",
        "imagePullSecrets": [],
        "driverManager": {"image": "k8s-driver-manager", "repository": "nvcr.io/nvidia/cloud-native"},
    },
    "kataManager": {
        "enabled": False,
        "config": {
            "runtimeClasses": [
                {
                    "name": "kata-nvidia-gpu",
                    "artifacts": {"url": "nvcr.io/nvidia/cloud-native/kata-gpu-artifacts:ubuntu22.04-535.54.03"},
                },
                {
                    "name": "kata-nvidia-gpu-snp",
                    "artifacts": {"url": "nvcr.io/nvidia/cloud-native/kata-gpu-artifacts:ubuntu22.04-535.86.10-snp"},
                },
            ]
        },
        "repository": "nvcr.io/nvidia/cloud-native",
        "image": "k8s-kata-manager",
        "imagePullSecrets": [],
    },
    "sandboxDevicePlugin": {"repository": "nvcr.io/nvidia", "image": "kubevirt-gpu-device-plugin", "imagePullSecrets": []},
    "ccManager": {"repository": "nvcr.io/nvidia/cloud-native", "image": "k8s-cc-manager", "imagePullSecrets": []},
    "node-feature-discovery": {"image": {"repository": "registry.k8s.io/nfd/node-feature-discovery"}, "imagePullSecrets": []},
}
#: Keys whose imagePullSecrets the chart's clusterpolicy.yaml template passes on without a default in values.yaml
#: (https://github.com/NVIDIA/gpu-operator/blob/01549ba78f0e4820d9ddea97ee18a8a00a3bb4fd/deployments/gpu-operator/templates/clusterpolicy.yaml).
TEMPLATE_PULL_SECRETS = ("dcgmExporter", "operator.initContainer")


def helm_merge(base: Any, overlay: Any) -> Any:
    """Helm's merge of a values file over the chart's defaults: maps key by key, anything else replaced."""
    if isinstance(base, dict) and isinstance(overlay, dict):
        return {key: helm_merge(base[key], overlay[key]) if key in base and key in overlay else overlay.get(key, base.get(key))
                for key in base.keys() | overlay.keys()}  # fmt: skip
    return overlay


def strings(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], str]]:
    """Every string in ``value`` with its path."""
    if isinstance(value, str):
        return [(path, value)]
    if isinstance(value, dict):
        return [found for key, item in value.items() for found in strings(item, (*path, key))]
    if isinstance(value, list):
        return [found for i, item in enumerate(value) for found in strings(item, (*path, i))]
    return []


def _allowed(file: str, path: tuple[Any, ...], text: str, data: Any) -> bool:
    """Whether a public name at ``path`` of ``file``'s data sends no pull to the internet (see the module docstring)."""
    if file.endswith("spec.json"):  # a catalog model's citation
        return path[-1] == "model_source" and text.startswith("catalog: https://huggingface.co/")
    if "/group_vars/" in file and path[:3] == ("specgen_mirrors", "containerd", "hosts") and path[-1] in ("registry", "path"):
        entry = data["specgen_mirrors"]["containerd"]["hosts"][path[3]]
        return str(entry["server"]).startswith(f"https://{REGISTRY.partition('/')[0]}")
    return False


def _loaded(file: str, text: str) -> list[Any]:
    if file.endswith(".json"):
        return [json.loads(text)]
    if file.endswith((".yaml", ".yml", ".example")):
        return [doc for doc in ansible_reader().load_all(text) if doc is not None]
    return []


#: A catalog model's citation in SPEC.md's deployment lines.
SPEC_CITATION = re.compile(r"^- Model: .*; catalog: https://huggingface\.co/\S+/blob/main/config\.json$")


def public_pulls(files: dict[str, str]) -> list[str]:
    """Every public name in ``files`` that is not a citation or a redirect to the mirror (the tree's oracle).

    Each file's raw text is searched (comments included); a name counts as accounted for only where its file's parsed
    data (or, in SPEC.md, a citation line) holds it in an allowed place, as many times as the text holds it.
    """
    problems = []
    for file, text in sorted(files.items()):
        found = len(PUBLIC.findall(text))
        if not found:
            continue
        allowed = 0
        if file.endswith("SPEC.md"):
            allowed = sum(len(PUBLIC.findall(line)) for line in text.splitlines() if SPEC_CITATION.match(line))
        for data in _loaded(file, text):
            allowed += sum(
                len(PUBLIC.findall(s)) for path, s in strings(data) if PUBLIC.search(s) and _allowed(file, path, s, data)
            )
        if found != allowed:
            lines = [f"{file}:{n}: {line.strip()}" for n, line in enumerate(text.splitlines(), 1) if PUBLIC.search(line)]
            problems.append(f"{found - allowed} public name(s) not accounted for in {file}:\n" + "\n".join(lines))
    return problems


def image_keys_off_mirror(files: dict[str, str]) -> list[str]:
    """Every image repository or registry server in a YAML or JSON file that is not on the mirror."""
    host = REGISTRY.partition("/")[0]
    bad = []
    for file, text in sorted(files.items()):
        for data in _loaded(file, text):
            for path, value in strings(data):
                key = next((p for p in reversed(path) if isinstance(p, str)), "")
                if key in ("repository", "image_repository") and not value.startswith(REGISTRY + "/"):
                    bad.append(f"{file}: {'.'.join(map(str, path))}: {value}")
                if key == "server" and not value.startswith(f"https://{host}"):
                    bad.append(f"{file}: {'.'.join(map(str, path))}: {value}")
    return bad


@pytest.fixture(scope="module")
def tree() -> dict[str, str]:
    return render_file(str(EXAMPLE))


def _without_mirrors(tmp_path: Path) -> Path:
    text = EXAMPLE.read_text(encoding="utf-8")
    path = tmp_path / "w.yaml"
    path.write_text(text[: text.index("mirrors:\n")], encoding="utf-8")
    return path


def test_no_file_of_the_tree_pulls_from_the_internet(tree: dict[str, str]) -> None:
    assert VALUES in tree and any(p.startswith("ansible/group_vars/") for p in tree)  # the files that pull are there
    assert public_pulls(tree) == []
    assert image_keys_off_mirror(tree) == []


def test_the_tree_oracle_catches_a_public_pull(tree: dict[str, str]) -> None:
    """A public name anywhere else, in a comment too, or an image off the mirror, is caught."""
    for path, old, new in (
        (VALUES, "  repository: reg.colo.example:5000/mirror/nvidia/k8s\n", "  repository: nvcr.io/nvidia/k8s\n"),
        (VALUES, "# kubectl apply", "# helm repo add nvidia https://helm.ngc.nvidia.com/nvidia; kubectl apply"),
        (
            "spec.json",
            '"model_source": "catalog: https://',
            '"model": "https://huggingface.co/x", "model_source": "catalog: https://',
        ),
    ):
        assert old in tree[path], old
        assert public_pulls({**tree, path: tree[path].replace(old, new, 1)}), new
    vars_file = next(p for p in tree if p.startswith("ansible/group_vars/"))
    unmirrored = tree[vars_file].replace("reg.colo.example:5000/mirror/vllm/vllm-openai", "vllm/vllm-openai")
    assert image_keys_off_mirror({vars_file: unmirrored})


def test_without_mirrors_the_same_plan_pulls_from_public_registries(tmp_path: Path, tree: dict[str, str]) -> None:
    """The block changes only where things are pulled from: the plan is the same, the chart defaults come back."""
    plain = render_file(str(_without_mirrors(tmp_path)))
    spec, plain_spec = json.loads(tree["spec.json"]), json.loads(plain["spec.json"])
    (gaps,) = [f for f in spec["plan"]["findings"] if f["code"] == NOT_COVERED]
    spec["plan"]["findings"].remove(gaps)
    assert spec == plain_spec  # the same plan: only where things come from differs
    assert sorted(plain) == sorted(tree)
    values = YAML(typ="safe", pure=True).load(plain[VALUES])
    assert "repository" not in values["operator"]  # the chart's nvcr.io default then applies
    merged = helm_merge(CHART_DEFAULTS, values)
    assert merged["operator"]["repository"] == "nvcr.io/nvidia"
    assert "nvidia/gpu-operator" in plain[VALUES]
    assert "specgen_mirrors" not in next(t for p, t in plain.items() if p.startswith("ansible/group_vars/"))


def test_every_chart_image_is_on_the_mirror_with_the_pull_secret(tree: dict[str, str]) -> None:
    values = YAML(typ="safe", pure=True).load(tree[VALUES])
    merged = helm_merge(CHART_DEFAULTS, values)
    for path, value in strings(merged):
        if path[-1] == "repository" and value:  # vgpuManager's "" is the site's own build: nothing public to pull
            upstream = next(v for p, v in strings(CHART_DEFAULTS) if p == path)
            assert value == f"{REGISTRY}/{split_registry(upstream)[1]}", path  # at its upstream path
        elif PUBLIC.search(value):  # only Kata's artifacts, while the Kata manager stays disabled
            assert path[:2] == ("kataManager", "config") and merged["kataManager"]["enabled"] is False, (path, value)
    for key, component in CHART_DEFAULTS.items():
        if "imagePullSecrets" in component and key != "node-feature-discovery":
            assert merged[key]["imagePullSecrets"] == [SECRET], key
    for dotted in TEMPLATE_PULL_SECRETS:
        node = merged
        for part in dotted.split("."):
            node = node[part]
        assert node["imagePullSecrets"] == [SECRET], dotted
    assert merged["node-feature-discovery"]["imagePullSecrets"] == [{"name": SECRET}]
    # what specgen decides for the pools is untouched
    assert values["driver"]["enabled"] is False and values["devicePlugin"]["config"]["name"] == "specgen-device-plugin"


def test_the_helm_command_names_the_sites_chart_repository(tree: dict[str, str], tmp_path: Path) -> None:
    head = tree[VALUES].split("# Generated by specgen")[0]
    assert head.splitlines()[2:] == [
        "#   kubectl -n gpu-operator create secret docker-registry colo-registry ...",
        "#   helm upgrade --install gpu-operator gpu-operator \\",
        "#     --repo https://charts.colo.example/nvidia \\",
        "#     --version v25.10.1 -n gpu-operator -f values.yaml",
    ]
    path = tmp_path / "w.yaml"
    path.write_text(
        EXAMPLE.read_text().replace("https://charts.colo.example/nvidia", "oci://reg.colo.example:5000/charts/"),
        encoding="utf-8",
    )
    head = render_file(str(path))[VALUES].split("# Generated by specgen")[0]
    assert head.splitlines()[2:] == [
        "#   kubectl -n gpu-operator create secret docker-registry colo-registry ...",
        "#   helm upgrade --install gpu-operator \\",
        "#     oci://reg.colo.example:5000/charts/gpu-operator \\",
        "#     --version v25.10.1 -n gpu-operator -f values.yaml",
    ]


def _group_vars(tree: dict[str, str]) -> dict[str, Any]:
    (path,) = [p for p in tree if p.startswith("ansible/group_vars/")]
    data: dict[str, Any] = ansible_reader().load(tree[path])
    return data


def test_group_vars_give_the_engines_their_images_and_models_from_the_mirrors(tree: dict[str, str]) -> None:
    data = _group_vars(tree)
    engines = {d["name"]: d["engine"] for d in data["specgen_deployments"]}
    assert engines["chat"]["image_repository"] == f"{REGISTRY}/vllm/vllm-openai"
    assert engines["summarise"]["image_repository"] == f"{REGISTRY}/lmsysorg/sglang"
    mirrors = data["specgen_mirrors"]
    assert mirrors["container_registry"] == REGISTRY and mirrors["image_pull_secret"] == SECRET
    assert mirrors["model_hub_env"] == {"HF_ENDPOINT": "https://hf.colo.example"}


def _hosts_toml(entry: dict[str, Any]) -> str:
    """The file a role writes from one ``specgen_mirrors.containerd.hosts`` entry (its root-level keys)."""
    lines = [f"{key} = {json.dumps(entry[key])}" for key in ("server", "capabilities", "ca") if key in entry]
    lines.append(f"override_path = {'true' if entry['override_path'] else 'false'}")
    return "\n".join(lines) + "\n"


def containerd_url(entry: dict[str, Any], repository: str) -> str:
    """The manifest URL containerd asks for an image of ``repository`` through ``entry`` (``parseHostConfig``'s rule)."""
    config = tomllib.loads(_hosts_toml(entry))
    server = str(config["server"])
    scheme, _, rest = server.partition("://")
    host, _, path = rest.partition("/")
    path = "/" + path if path else ""
    if not config.get("override_path") and not path.endswith("/v2"):
        path += "/v2"
    return f"{scheme}://{host}{path}/{repository}/manifests/latest"


@pytest.mark.parametrize(
    "image",
    [
        "nvcr.io/nvidia/driver",
        "registry.k8s.io/pause",
        "registry.k8s.io/nfd/node-feature-discovery",
        "vllm/vllm-openai",
        "ubuntu",
    ],
)
def test_containerd_sends_each_upstream_image_to_its_mirror_path(tree: dict[str, str], image: str) -> None:
    hosts = {e["registry"]: e for e in _group_vars(tree)["specgen_mirrors"]["containerd"]["hosts"]}
    registry, path = split_registry(image)
    entry = hosts[registry]
    assert entry["path"] == f"/etc/containerd/certs.d/{registry}/hosts.toml"
    assert entry["ca"] == CA and entry["capabilities"] == ["pull", "resolve"]
    # the image named on the mirror, as the Helm values name it, is the same URL: one copy serves both
    direct = hosts["reg.colo.example:5000"]
    mirrored_path = mirrored(image, REGISTRY).partition("/")[2]
    assert containerd_url(entry, path) == containerd_url(direct, mirrored_path)
    assert containerd_url(entry, path) == f"https://reg.colo.example:5000/v2/mirror/{path}/manifests/latest"


def test_a_mirror_without_a_path_or_ca_keeps_containerds_v2_root() -> None:
    entries = containerd_hosts("registry.colo.example", None)
    assert [e["registry"] for e in entries] == ["docker.io", "nvcr.io", "registry.k8s.io"]  # no CA: no own file
    assert all(e["server"] == "https://registry.colo.example" and not e["override_path"] and "ca" not in e for e in entries)
    assert containerd_url(entries[1], "nvidia/driver") == "https://registry.colo.example/v2/nvidia/driver/manifests/latest"


def _stack(key: str, version: str, mirror: ClusterMirror | None, workload: str = "w1") -> GpuPoolStack:
    return GpuPoolStack(key, workload, "baremetal", "operator", version, False, "version: v1\n", mirror=mirror)


MIRROR = ClusterMirror(REGISTRY, SECRET, "oci://reg.colo.example:5000/charts")


def test_nvidia_drivers_pull_the_driver_and_its_manager_from_the_mirror() -> None:
    files = render_cluster([_stack("a", "580.105.08", MIRROR), _stack("b", "570.133.20", MIRROR)])
    reader = YAML(typ="safe", pure=True)
    drivers = [reader.load(text) for path, text in sorted(files.items()) if "/nvidiadriver-" in path]
    assert len(drivers) == 2
    for driver in drivers:
        spec = driver["spec"]
        assert spec["repository"] == f"{REGISTRY}/nvidia" and spec["imagePullSecrets"] == [SECRET]
        assert spec["manager"] == {
            "repository": f"{REGISTRY}/nvidia/cloud-native",
            "image": "k8s-driver-manager",
            "version": "v0.9.1",  # the 25.10.1 release notes' NVIDIA Driver Manager for Kubernetes
        }
    assert public_pulls(files) == [] and image_keys_off_mirror(files) == []
    plain = [
        reader.load(t)
        for p, t in render_cluster([_stack("a", "580.105.08", None), _stack("b", "570.133.20", None)]).items()
        if "/nvidiadriver-" in p
    ]
    assert {d["spec"]["repository"] for d in plain} == {"nvcr.io/nvidia"} and "manager" not in plain[0]["spec"]


def test_one_cluster_pulls_from_one_place(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="share one cluster, whose GPU Operator pulls from one registry"):
        render_cluster([_stack("a", "580.105.08", MIRROR), _stack("b", "580.105.08", None, workload="w2")])
    # the AMD pools' device plugin (newuser103) pulls from one place too, even with no NVIDIA pool beside it
    amd = [_stack("a", "", MIRROR)._replace(vendor="amd"), _stack("b", "", None, workload="w2")._replace(vendor="amd")]
    with pytest.raises(InputError, match=r"whose AMD device plugin pulls from one registry, .* \(registry reg\.colo"):
        render_cluster(amd)
    assert list(render_cluster(amd[:1])) == ["cluster/amd-gpu/values.yaml"]
    other = tmp_path / "other.yaml"
    text = EXAMPLE.read_text().replace("name: colo-airgap", "name: colo-airgap-b").replace("gpu-a0", "gpu-b0")
    text = text.replace("  - name: chat\n", "  - name: chat-b\n").replace("  - name: summarise\n", "  - name: summarise-b\n")
    other.write_text(text.replace("image_pull_secret: colo-registry", "image_pull_secret: other-secret"), encoding="utf-8")
    with pytest.raises(InputError, match=r"the cluster's pull secret is (other-secret|colo-registry) here but"):
        render_files([str(EXAMPLE), str(other)])
    same = tmp_path / "same.yaml"
    same.write_text(text, encoding="utf-8")
    together = render_files([str(EXAMPLE), str(same)])
    assert public_pulls(together) == [] and image_keys_off_mirror(together) == []


#: Two workloads of one tree: an 8B service each on bare metal, the second's GPU and registry given by the test.
TREE_FILE = """version: 1
name: {name}
deployments:
  - name: {deployment}
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {{precision: bf16, max_context_tokens: 8192, requests_per_second: 2}}
hardware:
  gpus: [{gpu}]
  provider: baremetal
mirrors:
  container_registry: {registry}
"""


def _tree_file(tmp_path: Path, file: str, name: str, gpu: str, registry: str) -> Path:
    path = tmp_path / file
    path.write_text(TREE_FILE.format(name=name, deployment=f"chat-{name}", gpu=gpu, registry=registry), encoding="utf-8")
    return path


@pytest.mark.parametrize("gpu", ["h100-sxm5-80gb", "mi300x-192gb"], ids=["nvidia", "amd"])
def test_validate_together_refuses_mirrors_two_files_differ_in_as_render_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], gpu: str
) -> None:
    """review26 item 2: validate --together passed two files whose registries differ, which render refused at no file
    or line (and a tree whose second workload's pools are AMD's was not compared at all)."""
    a = _tree_file(tmp_path, "a.yaml", "aa", "h100-sxm5-80gb", "reg.a.example")
    b = _tree_file(tmp_path, "b.yaml", "bb", gpu, "reg.b.example")
    expected = (
        f"{b}:11:23: mirrors.container_registry: the cluster's registry is reg.b.example here but reg.a.example in {a}: "
        "workloads rendered into one tree share one cluster, whose GPU stack is pulled from one registry: give every "
        "file the same mirrors.container_registry, image_pull_secret and helm_repository, or render them into trees of "
        "their own (-o)"
    )
    code, out, err = specgen_in_process(capsys, "validate", "--together", str(a), str(b))
    assert (code, out, err) == (1, "", f"specgen: error: {expected}\n")
    output = tmp_path / "out"
    code, _, err = specgen_in_process(capsys, "render", str(a), str(b), "-o", str(output))
    assert (code, err.splitlines()[-1]) == (1, f"specgen: error: {expected}")  # after the plans' warnings, if any
    assert not output.exists()  # nothing half-written
    with pytest.raises(InputError) as refused:  # the library's render of several files, as the CLI's
        render_files([str(a), str(b)])
    assert str(refused.value) == expected
    # each alone is valid, and with the same registry they render together
    code, out, _ = specgen_in_process(capsys, "validate", str(a), str(b))
    assert (code, out.splitlines()) == (0, [f"{a}: ok", f"{b}: ok"])
    same = _tree_file(tmp_path, "c.yaml", "cc", gpu, "reg.a.example")
    code, out, _ = specgen_in_process(capsys, "validate", "--together", str(a), str(same))
    assert (code, out.splitlines()) == (0, [f"{a}: ok", f"{same}: ok"])


def test_a_file_without_the_field_is_refused_at_its_mirrors_or_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _tree_file(tmp_path, "a.yaml", "aa", "h100-sxm5-80gb", "reg.a.example")
    b = tmp_path / "b.yaml"
    b.write_text(a.read_text().replace("name: aa", "name: bb").replace("chat-aa", "chat-bb").split("mirrors:")[0])
    code, _, err = specgen_in_process(capsys, "validate", "--together", str(a), str(b))
    assert code == 1 and err.startswith(
        f"specgen: error: {b}:2:7: name: the cluster's registry is (unset) here but reg.a.example in {a}: "
    )
    secret = tmp_path / "b2.yaml"
    secret.write_text(a.read_text().replace("name: aa", "name: bb").replace("chat-aa", "chat-bb") + "  image_pull_secret: s\n")
    code, _, err = specgen_in_process(capsys, "validate", "--together", str(a), str(secret))
    assert code == 1 and err.startswith(
        f"specgen: error: {secret}:12:22: mirrors.image_pull_secret: the cluster's pull secret is s here but (unset) in {a}: "
    )


def test_plans_rendered_together_by_the_library_say_the_workload_and_field(tmp_path: Path) -> None:
    from generator.api import plan_file
    from generator.render import render_plans

    paths = [_tree_file(tmp_path, f"{n}.yaml", n, "h100-sxm5-80gb", f"reg.{n}.example") for n in ("bb", "aa")]
    planned = [plan_file(str(path), for_render=True) for path in paths]
    with pytest.raises(InputError) as refused:
        render_plans([(plan, loaded.workload) for loaded, plan in planned])
    assert str(refused.value).startswith(
        "bb: mirrors.container_registry: the cluster's registry is reg.bb.example here but reg.aa.example in aa: "
    )


def _crd_spec(name: str) -> dict[str, Any]:
    path = SHARED / "crds" / name
    require_shared(path)
    crd = YAML(typ="safe", pure=True).load(path.read_text())
    spec: dict[str, Any] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    return spec


def test_mirrored_values_and_drivers_are_valid_against_the_operator_crds(tree: dict[str, str]) -> None:
    """Each component the values point at the mirror is a ClusterPolicy component with those fields (ClusterPolicy
    is what the chart turns them into); the NVIDIADriver objects match their CRD whole."""
    import jsonschema

    from tests.test_oracles import to_json_schema

    policy = _crd_spec("nvidia.com_clusterpolicies.yaml")["properties"]
    values = YAML(typ="safe", pure=True).load(tree[VALUES])
    checked = 0
    for path, _ in strings(values):
        # node-feature-discovery is a sub-chart's and operator the chart's own Deployment: neither goes to ClusterPolicy
        if path[-1] != "repository" or path[0] == "node-feature-discovery" or path == ("operator", "repository"):
            continue
        node = policy
        for part in path[:-1]:
            node = node[part]["properties"]
        component = values
        for part in path[:-1]:
            component = component[part]
        fields = {k: component[k] for k in ("repository", "imagePullSecrets") if k in component}
        schema = to_json_schema({"type": "object", "properties": {k: node[k] for k in fields}})
        jsonschema.Draft4Validator(schema).validate(fields)
        checked += 1
    assert checked == 20  # every image key of the chart but node-feature-discovery's and the operator's own
    driver_crd = YAML(typ="safe", pure=True).load(
        (SHARED / "crds" / "nvidia-gpu-operator" / "nvidia.com_nvidiadrivers.yaml").read_text()
    )
    schema = to_json_schema(driver_crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"])
    files = render_cluster([_stack("a", "580.105.08", MIRROR), _stack("b", "570.133.20", MIRROR)])
    drivers = [YAML(typ="safe", pure=True).load(text) for name, text in files.items() if "/nvidiadriver-" in name]
    assert len(drivers) == 2
    for driver in drivers:
        jsonschema.Draft4Validator(schema).validate(driver)


# --------------------------------------------------------------------------------------------------------------
# bad mirrors, refused at their field
# --------------------------------------------------------------------------------------------------------------

BASE = """\
version: 1
name: w
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference:
      max_context_tokens: 8192
      requests_per_second: 2
mirrors:
"""


def _refused(tmp_path: Path, block: str) -> str:
    path = tmp_path / "w.yaml"
    path.write_text(BASE + block, encoding="utf-8")
    with pytest.raises((InputError, MultipleInputError)) as caught:
        load_workload(path)
    return str(caught.value).replace(str(tmp_path) + "/", "")


REFUSED = [
    pytest.param(
        "  container_registry: https://registry.colo.example/mirror\n",
        "w.yaml:10:23: mirrors.container_registry: 'https://registry.colo.example/mirror' does not match",
        id="registry-with-scheme",
    ),
    pytest.param(
        "  container_registry: mirror/nvidia\n",
        "w.yaml:10:23: mirrors.container_registry: an image reference reads 'mirror' as a Docker Hub namespace, not a "
        "registry (its first part names a registry only with a '.' or a ':port' in it, or as 'localhost'): give the "
        "registry's full name or its port",
        id="registry-read-as-docker-hub",
    ),
    pytest.param(
        "  container_registry: registry.colo.example:70000\n",
        "w.yaml:10:23: mirrors.container_registry: port 70000 is not in 1-65535",
        id="registry-port",
    ),
    pytest.param(
        "  container_registry: nvcr.io/nvidia\n",
        "w.yaml:10:23: mirrors.container_registry: nvcr.io is a public registry, which an air-gapped site does not "
        "reach: give the site's own mirror",
        id="registry-public",
    ),
    *(
        pytest.param(
            f"  container_registry: {registry}\n",
            f"w.yaml:10:23: mirrors.container_registry: {registry.partition('/')[0]} is a public registry, which an "
            "air-gapped site does not reach: give the site's own mirror",
            id=f"registry-public-{registry.partition('/')[0]}",
        )
        for registry in ("mirror.gcr.io/library", "k8s.gcr.io", "public.ecr.aws/nvidia", "mcr.microsoft.com/x")
    ),
    pytest.param(
        "  container_registry: registry.colo.example/Mirror\n",
        "w.yaml:10:23: mirrors.container_registry: 'registry.colo.example/Mirror' is written in lower case here",
        id="registry-upper-case-path",
    ),
    pytest.param(
        "  helm_repository: ftp://charts.colo.example/nvidia\n",
        "w.yaml:10:20: mirrors.helm_repository: 'ftp://charts.colo.example/nvidia' does not match",
        id="helm-scheme",
    ),
    pytest.param(
        "  helm_repository: https://user:pw@charts.colo.example/nvidia\n",
        "w.yaml:10:20: mirrors.helm_repository: 'https://user:pw@charts.colo.example/nvidia' does not match",
        id="helm-credentials",
    ),
    pytest.param(
        "  helm_repository: https://helm.ngc.nvidia.com/nvidia\n",
        "w.yaml:10:20: mirrors.helm_repository: helm.ngc.nvidia.com is the public Helm repository, which an air-gapped "
        "site does not reach: give the site's own mirror",
        id="helm-public",
    ),
    pytest.param(
        "  huggingface_endpoint: https://huggingface.co\n",
        "w.yaml:10:25: mirrors.huggingface_endpoint: huggingface.co is the public Hugging Face Hub, which an air-gapped "
        "site does not reach: give the site's own mirror",
        id="hub-public",
    ),
    pytest.param(
        "  huggingface_endpoint: https://hf.colo.example:0\n",
        "w.yaml:10:25: mirrors.huggingface_endpoint: port 0 is not in 1-65535",
        id="hub-port",
    ),
    pytest.param(
        "  huggingface_endpoint: https://hf.colo.example/?token=x\n",
        "w.yaml:10:25: mirrors.huggingface_endpoint: 'https://hf.colo.example/?token=x' does not match",
        id="hub-query",
    ),
    pytest.param(
        "  huggingface_endpoint: https://hf.colo.example\n  huggingface_cache: /srv/hf\n",
        "w.yaml:11:22: mirrors.huggingface_cache: huggingface_cache reads models offline (HF_HUB_OFFLINE=1), so "
        "huggingface_endpoint would never be asked: give one of them",
        id="hub-both",
    ),
    pytest.param(
        "  huggingface_cache: srv/hf\n",
        "w.yaml:10:22: mirrors.huggingface_cache: 'srv/hf' does not match",
        id="cache-relative",
    ),
    pytest.param(
        "  image_pull_secret: colo-registry\n",
        "w.yaml:10:22: mirrors.image_pull_secret: image_pull_secret is for container_registry, which is not given: give "
        "it or drop image_pull_secret",
        id="secret-without-registry",
    ),
    pytest.param(
        "  container_registry: registry.colo.example\n  image_pull_secret: Colo_Registry\n",
        "w.yaml:11:22: mirrors.image_pull_secret: 'Colo_Registry' is not a Kubernetes Secret name: lower-case letters, digits",
        id="secret-not-a-name",
    ),
    pytest.param(
        "  registry_ca_file: /etc/pki/ca.pem\n",
        "w.yaml:10:21: mirrors.registry_ca_file: registry_ca_file is for container_registry, which is not given: give "
        "it or drop registry_ca_file",
        id="ca-without-registry",
    ),
    pytest.param(
        "  container_registry: registry.colo.example\n  registry_ca_file: /etc/pki/../ca.pem\n",
        "w.yaml:11:21: mirrors.registry_ca_file: '/etc/pki/../ca.pem' does not match",
        id="ca-not-plain",
    ),
    pytest.param(
        "  container_registry: registry.colo.example\n  registry: other.example\n",
        "w.yaml:11:3: mirrors.registry: unknown field 'registry'",
        id="unknown-field",
    ),
]


@pytest.mark.parametrize(("block", "expected"), REFUSED)
def test_bad_mirrors_are_refused_at_their_field(tmp_path: Path, block: str, expected: str) -> None:
    assert _refused(tmp_path, block).startswith(expected)


@pytest.mark.parametrize(
    "registry",
    [
        "localhost:5000", "localhost/mirror", "10.20.0.5:5000/a/b_c", "registry.colo.example", "reg.example/a--b/c.d",
        # a cloud's per-project registries are private (review26 item 6: Artifact Registry and GCR were refused as public)
        "europe-docker.pkg.dev/my-proj/mirror", "gcr.io/my-proj", "eu.gcr.io/my-proj",
        "123456789012.dkr.ecr.eu-west-1.amazonaws.com/mirror", "colo.azurecr.io/mirror",
    ],
)  # fmt: skip
def test_registries_an_image_reference_reads_as_registries_are_taken(tmp_path: Path, registry: str) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(BASE + f"  container_registry: {registry}\n", encoding="utf-8")
    assert load_workload(path).workload.mirrors is not None
    assert split_registry(f"{registry}/nvidia/driver") == (
        registry.partition("/")[0],
        f"{registry.partition('/')[2]}/nvidia/driver".lstrip("/"),
    )


def test_the_hub_cache_is_read_offline(tmp_path: Path) -> None:
    text = EXAMPLE.read_text().replace("huggingface_endpoint: https://hf.colo.example", "huggingface_cache: /srv/hf-cache")
    path = tmp_path / "w.yaml"
    path.write_text(text, encoding="utf-8")
    files = render_file(str(path))
    assert _group_vars(files)["specgen_mirrors"]["model_hub_env"] == {"HF_HUB_CACHE": "/srv/hf-cache", "HF_HUB_OFFLINE": "1"}
    assert public_pulls(files) == []


def _example_with(tmp_path: Path, *replacements: tuple[str, str]) -> dict[str, Any]:
    path = edited_copy(EXAMPLE, tmp_path, *replacements)
    (finding,) = [f for f in json.loads(render_file(str(path))["spec.json"])["plan"]["findings"] if f["code"] == NOT_COVERED]
    assert finding["level"] == "info" and finding["path"] == "mirrors"
    message: str = finding["message"]
    return {"message": message}


def test_what_the_mirrors_leave_to_the_site_is_said(tmp_path: Path, tree: dict[str, str]) -> None:
    """The finding names what no rendered file can redirect: packages, the control plane's images, and any mirror the
    block leaves out."""
    (finding,) = [f for f in json.loads(tree["spec.json"])["plan"]["findings"] if f["code"] == NOT_COVERED]
    assert "packages Ansible installs (specgen_nvidia_driver)" in finding["message"]
    assert "kubeadm ClusterConfiguration, not rendered, needs imageRepository" in finding["message"]
    assert "(set " not in finding["message"]  # every mirror is given
    partial = _example_with(
        tmp_path,
        ("  helm_repository: https://charts.colo.example/nvidia\n", ""),
        ("  huggingface_endpoint: https://hf.colo.example\n", ""),
    )["message"]
    assert "(set helm_repository)" in partial and "(set huggingface_endpoint or huggingface_cache)" in partial
    operator_driver = _example_with(tmp_path, ("mirrors:\n", "outputs: [terraform, kubernetes]\nmirrors:\n"))["message"]
    assert "driver.repoConfig.configMapName" in operator_driver and "specgen_nvidia_driver" not in operator_driver


@pytest.mark.parametrize(
    ("removed", "opening"),
    [
        ((), "mirrors redirect the images, the GPU Operator chart and the model downloads the rendered files name; "),
        # review26 item 10: a Hub mirror alone was said to redirect the images and the chart as well
        (
            ("container_registry", "registry_ca_file", "image_pull_secret", "helm_repository"),
            "mirrors redirect the model downloads the rendered files name; the site still provides: container images "
            "come from their public registries (set container_registry); ",
        ),
        (("huggingface_endpoint", "helm_repository"), "mirrors redirect the images the rendered files name; "),
    ],
)
def test_the_finding_says_what_the_mirrors_given_redirect(tmp_path: Path, removed: tuple[str, ...], opening: str) -> None:
    lines = [line for line in EXAMPLE.read_text(encoding="utf-8").splitlines(keepends=True) if line.startswith("  ")]
    cut = [(line, "") for line in lines if line.strip().split(":")[0] in removed]
    assert len(cut) == len(removed)
    assert _example_with(tmp_path, *cut)["message"].startswith(opening)


def test_gke_nodes_get_no_containerd_files_to_write(tmp_path: Path) -> None:
    """GKE builds and runs its nodes (``specgen_host_management: gke``): no role writes their containerd files."""
    path = tmp_path / "w.yaml"
    block = f"mirrors:\n  container_registry: {REGISTRY}\n  huggingface_endpoint: https://hf.colo.example\n"
    path.write_text((REPO / "examples" / "chat-70b-fp8-gcp.yaml").read_text() + block, encoding="utf-8")
    files = render_file(str(path))
    data = _group_vars(files)
    assert data["specgen_host_management"] == "gke"
    assert data["specgen_mirrors"] == {
        "container_registry": REGISTRY,
        "model_hub_env": {"HF_ENDPOINT": "https://hf.colo.example"},
    }
    assert not any(p.startswith("cluster/") for p in files)  # GKE runs its GPU stack: no operator values to mirror
