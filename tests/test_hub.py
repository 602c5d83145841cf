"""Hub models through the real ``huggingface_hub`` client, against a local Hub on 127.0.0.1 (no internet).

Every run is a fresh ``specgen`` process with ``HF_ENDPOINT`` pointing at the local server and
``HF_HOME`` in a temporary folder, as a user's shell would have them.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.hub_server import TOKEN, FakeHub, Repo, VirtualFile, safetensors_bytes, serve

DATA = Path(__file__).parent / "data" / "hub"
QWEN = (DATA / "qwen2.5-7b.config.json").read_bytes()
LLAMA = (DATA / "llama-3.1-8b.config.json").read_bytes()
#: Parameters of the two configs (shared/reference/configs/param_counts.json).
QWEN_PARAMS = 7_615_616_512
LLAMA_PARAMS = 8_030_261_248
C1, C2 = "1" * 40, "2" * 40


def hf_tensors(config: dict[str, Any], dtype: str = "BF16", width: int = 2) -> dict[str, tuple[str, list[int], int]]:
    """Every tensor of a Llama / Qwen2 checkpoint, as transformers names them, from the config's shapes."""
    h, heads, kv = config["hidden_size"], config["num_attention_heads"], config["num_key_value_heads"]
    hd = config.get("head_dim") or h // heads
    inter, vocab = config["intermediate_size"], config["vocab_size"]
    bias = config["model_type"] == "qwen2"
    shapes: dict[str, list[int]] = {"model.embed_tokens.weight": [vocab, h], "model.norm.weight": [h]}
    if not config.get("tie_word_embeddings"):
        shapes["lm_head.weight"] = [vocab, h]
    for i in range(config["num_hidden_layers"]):
        p = f"model.layers.{i}."
        shapes |= {
            p + "self_attn.q_proj.weight": [heads * hd, h],
            p + "self_attn.k_proj.weight": [kv * hd, h],
            p + "self_attn.v_proj.weight": [kv * hd, h],
            p + "self_attn.o_proj.weight": [h, heads * hd],
            p + "mlp.gate_proj.weight": [inter, h],
            p + "mlp.up_proj.weight": [inter, h],
            p + "mlp.down_proj.weight": [h, inter],
            p + "input_layernorm.weight": [h],
            p + "post_attention_layernorm.weight": [h],
        }
        if bias:
            shapes |= {p + f"self_attn.{x}_proj.bias": [n] for x, n in (("q", heads * hd), ("k", kv * hd), ("v", kv * hd))}
    out = {}
    for name, shape in shapes.items():
        n = 1
        for d in shape:
            n *= d
        out[name] = (dtype, shape, n * width)
    return out


def single_file_repo(config: bytes, **kw: Any) -> dict[str, VirtualFile]:
    header, size = safetensors_bytes(hf_tensors(json.loads(config), **kw))
    return {"config.json": VirtualFile(config, len(config)), "model.safetensors": VirtualFile(header, size)}


def sharded_repo(config: bytes) -> dict[str, VirtualFile]:
    tensors = hf_tensors(json.loads(config))
    names = list(tensors)
    half = len(names) // 2
    shards = {"model-00001-of-00002.safetensors": names[:half], "model-00002-of-00002.safetensors": names[half:]}
    files = {"config.json": VirtualFile(config, len(config))}
    weight_map: dict[str, str] = {}
    for shard, members in shards.items():
        header, size = safetensors_bytes({n: tensors[n] for n in members})
        files[shard] = VirtualFile(header, size)
        weight_map |= dict.fromkeys(members, shard)
    index = json.dumps({"metadata": {"total_size": 0}, "weight_map": weight_map}).encode()
    files["model.safetensors.index.json"] = VirtualFile(index, len(index))
    return files


def make_hub() -> FakeHub:
    qwen_v1 = json.loads(QWEN) | {"num_hidden_layers": 20}
    v1 = json.dumps(qwen_v1, indent=2).encode()
    return FakeHub(
        repos={
            "acme/qwen-7b-chat": Repo({"main": C2, "v1": C1}, {C2: single_file_repo(QWEN), C1: single_file_repo(v1)}),
            "acme/qwen-7b-sharded": Repo({"main": C1}, {C1: sharded_repo(QWEN)}),
            "acme/llama-8b-gated": Repo({"main": C1}, {C1: single_file_repo(LLAMA)}, gated=True),
            "acme/qwen-7b-fp32": Repo({"main": C1}, {C1: single_file_repo(QWEN, dtype="F32", width=4)}),
            "Qwen/Qwen2.5-7B": Repo({"main": C1}, {C1: single_file_repo(QWEN)}),
        }
    )


def specgen(hub: FakeHub, home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE"))}
    environ |= {"HF_ENDPOINT": hub.url, "HF_HOME": str(home), "HF_HUB_DISABLE_TELEMETRY": "1", **env}
    return subprocess.run(
        [sys.executable, "-m", "generator", *args],
        check=False,
        capture_output=True,
        text=True,
        env=environ,
        cwd=REPO,
        timeout=120,
    )


def estimate(hub: FakeHub, home: Path, model: str, *args: str, **env: str) -> dict[str, Any]:
    run = specgen(hub, home, "estimate", model, "--json", *args, **env)
    assert run.returncode == 0, run.stderr
    data: dict[str, Any] = json.loads(run.stdout)
    return data


@pytest.fixture
def hub() -> Any:
    with serve(make_hub()) as running:
        yield running


def test_hub_model_sized_from_safetensors_headers_only(hub: FakeHub, tmp_path: Path) -> None:
    data = estimate(hub, tmp_path, "acme/qwen-7b-chat")
    assert data["params"]["total"] == QWEN_PARAMS
    assert data["weights"]["bytes"] == 2 * QWEN_PARAMS  # bf16 bytes from the headers, equal to the config's count
    assert data["weights_from"] == f"safetensors headers of acme/qwen-7b-chat@{C2}"
    assert data["model"]["source"] == f"hf: acme/qwen-7b-chat@{C2}; config.json sha256:{hashlib.sha256(QWEN).hexdigest()}"
    weights = [entry for entry in hub.log if entry[1].endswith(".safetensors")]
    assert weights, "the safetensors header was not read"
    assert all(entry[2] is not None or entry[0] == "HEAD" for entry in weights)  # range requests only
    # one range request of the header's first 100 kB, and one of its first 8 bytes for the file's size (hostile95)
    assert sum(entry[3] for entry in weights) <= 100_001 + 8


def test_sharded_checkpoint_reads_the_index_and_every_shard_header(hub: FakeHub, tmp_path: Path) -> None:
    data = estimate(hub, tmp_path, "hf:acme/qwen-7b-sharded")
    assert data["weights"]["bytes"] == 2 * QWEN_PARAMS
    shards = {e[1].rsplit("/", 1)[1] for e in hub.log if e[0] == "GET" and "-of-" in e[1]}
    assert shards == {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}


def test_revision_pins_the_commit_and_config(hub: FakeHub, tmp_path: Path) -> None:
    pinned = estimate(hub, tmp_path, "acme/qwen-7b-chat@v1")
    main = estimate(hub, tmp_path, "acme/qwen-7b-chat")
    assert pinned["model"]["layers"] == 20 and main["model"]["layers"] == 28
    assert pinned["model"]["source"].startswith(f"hf: acme/qwen-7b-chat@{C1} (revision v1); config.json sha256:")
    by_commit = estimate(hub, tmp_path, f"acme/qwen-7b-chat@{C1}")
    assert by_commit["params"] == pinned["params"]


def test_gated_model_names_hf_token(hub: FakeHub, tmp_path: Path) -> None:
    run = specgen(hub, tmp_path, "estimate", "acme/llama-8b-gated")
    assert run.returncode == 1
    # the reason to act on comes first, the catalog's close ids after it (newuser13 item 8)
    assert run.stderr.startswith("specgen estimate: error: 'acme/llama-8b-gated' is a gated model on the Hub")
    assert "HF_TOKEN" in run.stderr and "(nor is it a catalog id: unknown model" in run.stderr
    data = estimate(hub, tmp_path, "acme/llama-8b-gated", HF_TOKEN=TOKEN)
    assert data["params"]["total"] == LLAMA_PARAMS and data["weights"]["bytes"] == 2 * LLAMA_PARAMS


@pytest.mark.parametrize(
    ("model", "message"),
    [
        pytest.param("acme/no-such-model", "neither in the catalog nor on the Hub", id="missing-repo"),
        pytest.param("acme/qwen-7b-chat@v9", "revision 'v9' of 'acme/qwen-7b-chat' does not exist", id="missing-revision"),
        pytest.param("acme/qwen-7b-chat@", "names no revision after '@'", id="empty-revision"),
    ],
)
def test_missing_repo_or_revision_is_a_clear_error(hub: FakeHub, tmp_path: Path, model: str, message: str) -> None:
    run = specgen(hub, tmp_path, "estimate", model)
    assert run.returncode == 1, run.stdout
    assert message in run.stderr and "Traceback" not in run.stderr


def test_offline_cache_hit_sizes_as_online(hub: FakeHub, tmp_path: Path) -> None:
    online = estimate(hub, tmp_path, "acme/qwen-7b-chat@v1")
    requests = len(hub.log)
    offline = estimate(hub, tmp_path, "acme/qwen-7b-chat@v1", HF_HUB_OFFLINE="1")
    assert len(hub.log) == requests  # nothing asked of the Hub
    assert offline == online
    missing = specgen(hub, tmp_path, "estimate", "acme/qwen-7b-sharded", HF_HUB_OFFLINE="1")
    assert missing.returncode == 1 and "HF_HUB_OFFLINE is set" in missing.stderr


def test_a_hub_whose_name_does_not_resolve_is_read_from_the_cache_at_once(hub: FakeHub, tmp_path: Path) -> None:
    """newuser24 item 11: on a runner without network each model waited out huggingface_hub's five retries (23 s).

    A Hub host that does not resolve (``.invalid`` never does, RFC 6761) is not asked: the cache answers, as it
    does with HF_HUB_OFFLINE, and a model not in it is refused with the reason and the variable to set.
    """
    online = estimate(hub, tmp_path, "acme/qwen-7b-chat@v1")
    cut_off = {"HF_ENDPOINT": "http://specgen-hub.invalid"}
    assert estimate(hub, tmp_path, "acme/qwen-7b-chat@v1", **cut_off) == online
    missing = specgen(hub, tmp_path, "estimate", "acme/qwen-7b-sharded", **cut_off)
    assert missing.returncode == 75 and "Retry" not in missing.stderr  # out of reach: 75 (newuser82 item 7)
    assert (
        "cannot reach the Hub (http://specgen-hub.invalid: its name specgen-hub.invalid does not resolve) and "
        "'acme/qwen-7b-sharded' is not in the Hub cache"
    ) in missing.stderr
    assert missing.stderr.rstrip().endswith("on a runner without network set HF_HUB_OFFLINE=1 so that no request is tried")


def test_a_proxy_resolves_the_hubs_name_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    from generator.calculator.hub import _unresolvable_host

    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    assert _unresolvable_host("http://specgen-hub.invalid") == "specgen-hub.invalid"
    assert _unresolvable_host("http://127.0.0.1:8080") is None
    monkeypatch.setenv("https_proxy", "http://proxy.internal:3128")
    assert _unresolvable_host("http://specgen-hub.invalid") is None  # asked through the proxy, as huggingface_hub does


def test_catalog_stays_the_offline_default(hub: FakeHub, tmp_path: Path) -> None:
    catalog = estimate(hub, tmp_path, "Qwen/Qwen2.5-7B")
    assert not hub.log and catalog["model"]["source"].startswith("catalog: ")
    hub_read = estimate(hub, tmp_path, "Qwen/Qwen2.5-7B", "--from-hub")
    assert hub_read["model"]["source"].startswith(f"hf: Qwen/Qwen2.5-7B@{C1}")
    assert hub_read["params"] == catalog["params"]


def test_fp32_checkpoint_is_served_as_bf16_and_its_file_bytes_stay_unused(hub: FakeHub, tmp_path: Path) -> None:
    data = estimate(hub, tmp_path, "acme/qwen-7b-fp32")
    assert data["precision"]["weights"] == "bf16" and data["weights"]["bytes"] == 2 * QWEN_PARAMS
    assert data["weights_from"] == "computed from the config"
    fp32 = estimate(hub, tmp_path, "acme/qwen-7b-fp32", "--precision", "fp32")
    assert fp32["weights"]["bytes"] == 4 * QWEN_PARAMS and fp32["weights_from"].startswith("safetensors headers")


def test_workload_model_from_the_hub_is_recorded_in_spec_json(hub: FakeHub, tmp_path: Path) -> None:
    workload = tmp_path / "workload.yaml"
    workload.write_text(
        "version: 1\n"
        "name: hub-chat\n"
        "deployments:\n"
        "  - name: chat\n"
        "    model: hf:acme/qwen-7b-chat@v1\n"
        "    inference:\n"
        "      max_context_tokens: 8192\n"
        "      requests_per_second: 1\n"
        "hardware:\n"
        "  gpus: [h100-sxm5-80gb]\n"
    )
    run = specgen(hub, tmp_path / "home", "render", str(workload), "-o", str(tmp_path / "out"), "--target", "spec")
    assert run.returncode == 0, run.stderr
    spec = (tmp_path / "out" / "spec.json").read_text()
    assert f"acme/qwen-7b-chat@{C1} (revision v1); config.json sha256:" in spec


@pytest.mark.parametrize(
    ("model", "commit", "unpinned"),
    [
        pytest.param("acme/qwen-7b-chat", C2, True, id="unpinned"),
        pytest.param("hf:acme/qwen-7b-chat@v1", C1, True, id="branch"),  # review24 L4: a branch or tag moves too
        pytest.param(f"hf:acme/qwen-7b-chat@{C1}", C1, False, id="pinned"),
    ],
)
def test_the_engine_loads_the_commit_sized_and_an_unpinned_model_is_warned(
    hub: FakeHub, tmp_path: Path, model: str, commit: str, unpinned: bool
) -> None:
    """newuser33 item 5: the group vars named the repository without its revision (the engine loaded HEAD, not the
    checkpoint sized), and an unpinned id made the tree depend on the runner's Hub cache without a word."""
    workload = tmp_path / "workload.yaml"
    workload.write_text(
        f"version: 1\nname: hub-chat\ndeployments:\n  - name: chat\n    model: {model}\n    inference:\n"
        "      max_context_tokens: 8192\n      requests_per_second: 1\nhardware:\n  gpus: [h100-sxm5-80gb]\n"
    )
    run = specgen(hub, tmp_path / "home", "render", str(workload), "-o", str(tmp_path / "out"))
    assert run.returncode == 0, run.stderr
    warned = (
        f"workload.yaml:5:12: warning: model '{model}' is read from the Hub at the commit its branch names now, {commit[:12]}"
    )
    assert (warned in run.stderr) is unpinned
    if unpinned:
        assert f"pin it: model: hf:acme/qwen-7b-chat@{commit} [model-unpinned]" in run.stderr
    (group_vars,) = (tmp_path / "out" / "ansible" / "group_vars").glob("chat_*.yml")
    text = group_vars.read_text()
    assert f"    revision: '{commit}'\n" in text  # the deployment's, and the engine's argument
    assert f"        - !unsafe '--revision'\n        - '{commit}'\n" in text
