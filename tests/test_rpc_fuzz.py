"""Smoke run (15 s) of the libFuzzer target for the RPC frame parser (tests/fuzz/).

The long run (10 minutes or more) is manual: see tests/fuzz/README.md.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FUZZ = ROOT / "tests" / "fuzz"
SMOKE_SECONDS = 15


def _load_corpus_writer():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "rpc_make_corpus", FUZZ / "make_corpus.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.write_corpus


def test_fuzz_rpc_frame_smoke(tmp_path: Path) -> None:
    if shutil.which("clang") is None:
        pytest.skip(
            "clang is not installed (apt-get install clang): no libFuzzer smoke run"
        )
    exe = tmp_path / "fuzz_rpc_frame"
    build = subprocess.run(
        ["bash", str(FUZZ / "build.sh"), str(exe)],
        capture_output=True,
        text=True,
        check=False,
    )
    if (
        build.returncode != 0
        and "fuzzer" in build.stderr
        and "not found" in build.stderr
    ):
        pytest.skip(f"clang has no libFuzzer runtime: {build.stderr.strip()[:200]}")
    assert build.returncode == 0, build.stderr
    corpus = tmp_path / "corpus"
    _load_corpus_writer()(corpus)
    run = subprocess.run(
        [
            str(exe),
            f"-dict={FUZZ / 'rpc.dict'}",
            "-max_len=4096",
            f"-max_total_time={SMOKE_SECONDS}",
            "-print_final_stats=1",
            f"-artifact_prefix={tmp_path}/",
            str(corpus),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=SMOKE_SECONDS + 60,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    stats = [
        ln
        for ln in run.stderr.splitlines()
        if ln.startswith("stat::number_of_executed_units")
    ]
    assert stats and int(stats[0].split(":")[-1]) > 1000
