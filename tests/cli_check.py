"""Running ``utvm compile`` as a user does and checking that bad input ends in one error line,
exit 2, no traceback and nothing left behind (shared by the bad-input tests)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def compile_cli(model: Path, out: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "scripts"))
    return subprocess.run([sys.executable, "-m", "utvm", "compile", str(model), "-o", str(out)],
                          capture_output=True, text=True, env=env, timeout=300)


def assert_one_error(proc: subprocess.CompletedProcess[str], out: Path, *needles: str) -> None:
    assert proc.returncode == 2, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("error:")]
    assert len(errors) == 1 and len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in errors[0], errors[0]
    assert not out.exists()
    assert not out.with_name(out.name + ".tar").exists()
    assert [p for p in out.parent.iterdir() if p.name.startswith(".")] == []
