"""Zephyr's own files for the tests, taken from the tree that $ZEPHYR_BASE names.

Nothing of Zephyr is kept in this project or beside it: a test that reads Zephyr's files
(scripts/zephyr_module.py, twister's schemas, board metadata, the pytest-twister-harness)
skips, with one clear reason, when ZEPHYR_BASE is unset or is not a Zephyr tree.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def zephyr_base() -> Path | None:
    """The Zephyr tree of $ZEPHYR_BASE, or None when unset or not a Zephyr tree."""
    value = os.environ.get("ZEPHYR_BASE")
    if not value:
        return None
    base = Path(value)
    return base if (base / "VERSION").is_file() and (base / "scripts").is_dir() else None


def skip_reason() -> str:
    value = os.environ.get("ZEPHYR_BASE")
    if not value:
        return "ZEPHYR_BASE is not set (a Zephyr tree, 3.4 or later)"
    return f"ZEPHYR_BASE={value} is not a Zephyr tree (no VERSION and scripts/)"


def require_zephyr() -> Path:
    base = zephyr_base()
    if base is None:
        pytest.skip(skip_reason())
    return base


def zephyr_file(relative: str) -> Path:
    """A file of the Zephyr tree, or a skip naming the file this Zephyr lacks."""
    path = require_zephyr() / relative
    if not path.is_file():
        pytest.skip(f"{path} is not in this Zephyr tree")
    return path


def version() -> tuple[int, int]:
    """MAJOR.MINOR of the tree (its VERSION file)."""
    fields = {}
    for line in (require_zephyr() / "VERSION").read_text().splitlines():
        if "=" in line:
            key, value = line.split("=", 1)
            fields[key.strip()] = value.strip()
    return int(fields["VERSION_MAJOR"]), int(fields["VERSION_MINOR"])
