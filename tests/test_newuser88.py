"""newuser88: a hostile pass over the CPU-only llama.cpp estimate (``--ram-gib`` without ``--gpu``).

Item 1: a server's memory given without its CPU (``--memory-channels 8``, no ``--cpu``) had its RAM capped as the
assumed desktop's: "--ram-gib 2048 is more than the machine assumed without a CPU (like the Intel Core i9-14900K ...
desktop LGA1700) holds: 1 socket(s) x 8 channels x 2 DIMMs a channel x 64 GiB, the largest UDIMM it takes". A desktop
socket has 2 channels and takes unbuffered DIMMs; 8 or 12 channels a socket are a server board's, whose registered
DIMMs go to 256 GiB (an EPYC 7773X with 16 x 128 GB, 2 TB, was refused).
"""

from __future__ import annotations

import json

import pytest

from generator.catalog.dimms import RDIMM_SIZES_GIB, UDIMM_SIZES_GIB
from tests.helpers import run_estimate

MODEL = ("Qwen/Qwen3-30B-A3B", "--precision", "q4_k_m")


#: (channels given over the machine, sockets, RAM GiB, accepted, the DIMM named in the refusal)
#: 8 channels x 2 DIMMs x 256 GiB RDIMM = 4,096 GiB a socket; a desktop's 2 channels x 2 x 64 GiB UDIMM = 256 GiB.
RAM_CASES = [
    (8, 1, 2048, True, ""),
    (8, 1, 2 * 8 * max(RDIMM_SIZES_GIB), True, ""),
    (8, 1, 2 * 8 * max(RDIMM_SIZES_GIB) + 1, False, "RDIMM"),
    (12, 1, 3072, True, ""),
    (24, 2, 6144, True, ""),
    (2, 1, 2 * 2 * max(UDIMM_SIZES_GIB), True, ""),
    (2, 1, 2 * 2 * max(UDIMM_SIZES_GIB) + 1, False, "UDIMM"),  # a desktop's two channels: still its UDIMMs
]


@pytest.mark.parametrize(("channels", "sockets", "ram", "accepted", "dimm"), RAM_CASES)
def test_a_servers_channels_without_its_cpu_take_a_servers_dimms(
    channels: int, sockets: int, ram: int, accepted: bool, dimm: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = (*MODEL, "--ram-gib", str(ram), "--memory-channels", str(channels), "--ddr-mt-per-s", "4800")
    code, text = run_estimate(*args, "--cpu-sockets", str(sockets), "--json")
    if accepted:
        assert code == 0, text
        assert json.loads(text)["cpu_only"]["decode_tokens_per_s"] > 0
    else:
        assert code == 1, text  # an input error, as before
        err = capsys.readouterr().err
        assert f"the largest {dimm} it takes" in err
        assert err.count("\n") == 1 and "Traceback" not in err
        if dimm == "RDIMM":  # the machine said is a server's, not a desktop with 8 channels
            assert "desktop" not in err


def test_a_server_channel_count_with_a_gpu_is_judged_alike() -> None:
    """The same check guards a machine with a GPU: 2 TB over 8 channels beside one RTX 4090 is a workstation's."""
    args = ("--gpu", "rtx-4090-24gb", "--ram-gib", "2048", "--memory-channels", "8", "--ddr-mt-per-s", "3200")
    code, text = run_estimate(*MODEL, *args)
    assert code == 0, text
