"""What `utvm run`, `run --rpc` and `profile` report: one JSON schema, and one clear line
where there is no reference to compare with (tflite-micro has wheels for Linux x86-64 only).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from utvm import cli

ROOT = Path(__file__).resolve().parents[1]
KWS = ROOT / "samples/utvm_inference/model/kws_ref_model.tflite"  # the sample's copy

#: RunReport keys every mode reports (None where they do not apply).
SHARED_KEYS = {"model", "board", "reference", "outputs_match_reference", "max_abs_diff", "max_rel_diff",
               "workspace_bytes", "io_bytes", "constants_bytes"}


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, object], str]:
    rc = cli.main([*args, "--json"])
    out, err = capsys.readouterr()
    return rc, json.loads(out.strip().splitlines()[-1]), err


def test_run_rpc_and_profile_share_one_schema(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    reports = {
        "run": _json(capsys, "run", str(KWS)),
        "run --rpc": _json(capsys, "run", str(KWS), "--rpc"),
        "profile": _json(capsys, "profile", str(KWS), "--work-dir", str(tmp_path / "p")),
    }
    for mode, (rc, data, _) in reports.items():
        assert rc == 0, mode
        assert SHARED_KEYS <= set(data), (mode, SHARED_KEYS - set(data))
        assert data["reference"] == "tflite-micro", mode
        assert data["outputs_match_reference"] is True and data["max_abs_diff"] == 0, mode
        assert "matches_tflite_micro" not in data
    sizes = {mode: (d["workspace_bytes"], d["io_bytes"], d["constants_bytes"]) for mode, (_, d, _) in reports.items()}
    assert len(set(sizes.values())) == 1, sizes  # the same compiled model
    assert reports["profile"][1]["operators"] and reports["profile"][1]["total_cycles"] > 0


def test_run_without_a_reference(no_tflite_micro: None, capsys: pytest.CaptureFixture[str]) -> None:
    from utvm.run.reference import NO_TFLM

    rc, data, err = _json(capsys, "run", str(KWS))
    assert rc == 0
    assert data["reference"] is None and data["outputs_match_reference"] is None
    assert data["max_abs_diff"] is None and data["workspace_bytes"] > 0
    assert err.strip().splitlines() == [f"utvm: {NO_TFLM}"]
    rc = cli.main(["run", str(KWS)])
    out, err = capsys.readouterr()
    assert rc == 0 and not err
    assert out.count(NO_TFLM) == 1 and "  outputs match    not compared" in out


def test_rpc_without_a_reference(no_tflite_micro: None, capsys: pytest.CaptureFixture[str]) -> None:
    rc, data, err = _json(capsys, "run", str(KWS), "--rpc")
    assert rc == 0
    assert data["reference"] is None and data["outputs_match_reference"] is None
    assert len(err.strip().splitlines()) == 1 and "tflite-micro" in err


def test_test_data_without_a_reference(no_tflite_micro: None, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """tvm_add_model(TEST_DATA) on a host without tflite-micro: the header has the input and
    says there is no reference; the build goes on."""
    from utvm.zephyr import testdata

    header = tmp_path / "tvmgen_kws_testdata.h"
    assert testdata.main([str(KWS), "--name", "kws", "-o", str(header)]) == 0
    out = capsys.readouterr().out
    assert out.count("no reference output") == 1
    text = header.read_text()
    assert "#define TVMGEN_KWS_TEST_HAS_REFERENCE 0" in text
    assert "#define TVMGEN_KWS_TEST_NUM_OUTPUTS 1u" in text
    assert "tvmgen_kws_test_input0" in text and "tvmgen_kws_test_output0" not in text
