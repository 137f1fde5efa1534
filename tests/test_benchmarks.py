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
