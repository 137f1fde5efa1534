"""The benchmarks are not tests, but they must keep running as the package moves under them:
each one's --help imports everything it uses (a moved module once left bench_flash.py failing
at its first import, unnoticed until someone wanted its figures)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = sorted((ROOT / "benchmarks").glob("*.py"))


def test_there_are_benchmarks() -> None:
    assert len(BENCHMARKS) >= 5, BENCHMARKS


@pytest.mark.parametrize("script", BENCHMARKS, ids=lambda p: p.stem)
def test_benchmark_imports_and_prints_its_help(script: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "scripts"))
    proc = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "usage:" in proc.stdout, proc.stdout[:500]


def test_bench_flash_max_flash_keeps_kws_within_the_budget(models_dir: Path) -> None:
    """bench_flash --max-flash takes every operator's leanest configuration for the CPU (OpDef.lean
    with the target: a changed signature left it failing with a TypeError) and reports KWS's
    constants within the budget on the Cortex-M4 and the M55."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "scripts"))
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_flash.py"), "--models", "kws_ref_model",
                           "--models-dir", str(models_dir), "--max-flash", "26812"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [ln.split() for ln in proc.stdout.splitlines() if ln.startswith("kws_ref_model")]
    assert sorted(r[1] for r in rows) == ["cortex-m4", "cortex-m55"], proc.stdout
    for r in rows:
        assert 0 < int(r[r.index("constants") + 1].replace(",", "")) <= 26812, r
