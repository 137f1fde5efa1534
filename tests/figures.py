"""Figures that tests measure along the way, printed once at the end of the run (conftest.py's
terminal summary) instead of by a test of their own."""

from __future__ import annotations

LINES: list[str] = []


def report(line: str) -> None:
    LINES.append(line)
