"""review100: bugs found reviewing the fifty-fifth session's merged diff (hostile95's Hub reads, fix194's detect).

1. A ``Retry-After`` (or ``Content-Range`` total) of characters Python's ``str.isdigit`` takes but ``float`` / ``int``
   refuse (``²``, a header byte 0xB2 read as Latin-1) raised ValueError inside the HTTP client's response hook: a
   rate-limited Hub read "cannot read ... ValueError" (exit 1, not 75), and a file's size said so dropped every
   safetensors header of the model (sized from the config, a note quoting the ValueError).
2. detect's address advice offered the machine's full host name as ``address:`` where the workload's own check of an
   address (:func:`generator.workload.fixed_host.address_problem`) refuses it (``gpubox.300``: its last label all
   digits): the pasted advice failed to load. The advice now asks that check, not the schema's looser pattern.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from generator.calculator.detect import address_advice, host_name_facts
from generator.calculator.hub_file_sizes import data_section_bytes, file_sizes
from generator.calculator.hub_wait import asked_wait_s
from generator.errors import InputError
from generator.workload.fixed_host import address_problem


@pytest.mark.parametrize("value", ["²", "³0", "1²"])
def test_a_retry_after_of_other_digits_asks_no_wait(value: str) -> None:
    assert asked_wait_s({"Retry-After": value}, 429) is None


def test_a_retry_after_of_ascii_digits_is_read() -> None:
    assert asked_wait_s({"Retry-After": "3600"}, 429) == 3600.0
    assert asked_wait_s({"RateLimit": '"api";r=0;t=55'}, 429) == 55.0
    assert asked_wait_s({"RateLimit": '"api";r=1;t=55'}, 429) is None  # requests remain: no wait


def _hub(headers: dict[str, str], status: int = 206) -> Any:
    """A huggingface_hub stand-in whose ranged read answers ``status`` with ``headers`` and a 4,096-byte header length."""
    response = SimpleNamespace(status_code=status, headers=headers, content=(4096).to_bytes(8, "little"))
    utils = SimpleNamespace(
        http_backoff=lambda *args, **kwargs: response, build_hf_headers=dict, hf_raise_for_status=lambda answer: None
    )
    return SimpleNamespace(utils=utils, hf_hub_url=lambda *args, **kwargs: "https://hub.invalid/f")


@pytest.mark.parametrize(
    ("headers", "status", "size"),
    [
        ({"Content-Range": "bytes 0-7/10000"}, 206, (10000, 4096)),
        ({"Content-Length": "10000"}, 200, (10000, 4096)),  # the file whole: its length
        ({"Content-Range": "bytes 0-7/*"}, 206, None),  # no size said
        ({"Content-Range": "bytes 0-7/1²"}, 206, None),  # not a number: no size said, not a ValueError
        ({"Content-Length": "²"}, 200, None),
    ],
)
def test_a_file_size_is_read_from_the_answer_or_none(headers: dict[str, str], status: int, size: Any) -> None:
    assert file_sizes(_hub(headers, status), "fz/m", "5" * 40, ["model.safetensors"]) == {"model.safetensors": size}


@pytest.mark.parametrize("given", ["gpubox.300", "gpubox.-lan", "gpubox..lan"])
def test_the_address_advice_never_offers_an_address_the_workload_refuses(given: str) -> None:
    facts = host_name_facts(given)
    assert facts["host_name"].value == "gpubox"
    assert address_problem(given) is not None
    assert f"'{given}'" not in address_advice(facts)


def test_the_address_advice_offers_the_full_name_the_workload_takes() -> None:
    assert "('GPUBox.lan' where it resolves)" in address_advice(host_name_facts("GPUBox.lan"))


def test_a_header_longer_than_its_file_is_refused() -> None:
    """The size may come from a Content-Length (a server that sends the file whole): said as the answer's size."""
    assert data_section_bytes("fz/m@c/model.safetensors", (10000, 4096)) == 10000 - 8 - 4096
    assert data_section_bytes("fz/m@c/model.safetensors", None) is None
    with pytest.raises(InputError, match=r"its header is 4,096 bytes by its first 8 .* more than the file's 4,000 bytes"):
        data_section_bytes("fz/m@c/model.safetensors", (4000, 4096))
