"""Shared fixtures: the package on sys.path, the shared models, compiled-model caching."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "tests"))

MODELS_DIR = ROOT.parent / "shared" / "models"


@pytest.fixture(scope="session")
def models_dir() -> Path:
    if not MODELS_DIR.is_dir():
        pytest.skip(f"the shared models are not at {MODELS_DIR}")
    return MODELS_DIR


@pytest.fixture(scope="session")
def tmp_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory for the whole session (compiled models shared between test files)."""
    return tmp_path_factory.mktemp("models")


@pytest.fixture()
def no_tflite_micro(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on macOS, Windows or Linux aarch64, where tflite-micro has no wheels: importing it
    fails (also when an earlier test imported it already)."""
    for name in ("tflite_micro", "tflite_micro.python", "tflite_micro.python.tflite_micro",
                 "tflite_micro.python.tflite_micro.runtime"):
        monkeypatch.setitem(sys.modules, name, None)
    from utvm.run.reference import tflm_runtime

    assert tflm_runtime() is None


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    from figures import LINES

    if LINES:
        terminalreporter.section("figures")
        for line in LINES:
            terminalreporter.write_line(line)
