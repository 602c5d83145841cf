"""``specgen estimate`` takes a workload's field name for the KV cache precision and names the closest option for an
unknown one (newuser79 item 10: ``--kv-cache-precision fp8`` was refused with "unrecognized arguments" alone)."""

from __future__ import annotations

import pytest

from generator.calculator.cli import build_parser, main

MODEL = "meta-llama/Llama-3.1-8B-Instruct"


def test_kv_cache_precision_is_the_kv_precision() -> None:
    parser = build_parser()
    by_field = parser.parse_args([MODEL, "--kv-cache-precision", "fp8"])
    by_flag = parser.parse_args([MODEL, "--kv-precision", "fp8"])
    assert by_field.kv_precision == by_flag.kv_precision == "fp8"


def test_an_estimate_with_the_workloads_name_says_the_kv_cache_is_fp8(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([MODEL, "--kv-cache-precision", "fp8"]) == 0
    assert "KV cache fp8" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("given", "meant"),
    [
        (["--kv-cache-precison", "fp8"], "--kv-cache-precison: did you mean --kv-cache-precision?"),
        (["--contxt=8000"], "--contxt: did you mean --context?"),
        (["--ouput-tokens", "100"], "--ouput-tokens: did you mean --output-tokens?"),
    ],
)
def test_an_unknown_option_is_told_the_closest_one(given: list[str], meant: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([MODEL, *given])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "specgen estimate: error: unrecognized arguments: " in err and meant in err


def test_an_option_like_none_of_its_own_gets_no_guess(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main([MODEL, "--zzzzzz"])
    assert "did you mean" not in capsys.readouterr().err
