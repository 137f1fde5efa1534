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
