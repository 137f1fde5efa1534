"""The tuning log: JSON lines, one record per tuned workload, applied by compile and run.

A record::

    {"key": "<hash of the workload>", "workload": {"op", "tensors", "attrs", "cpu"},
     "config": {"variant": ..., <knobs>}, "cost": {"instructions": N} (QEMU) or {"cycles": N} (device),
     "default": {"config": {...}, "instructions": M}, "trials": T, "board": "mps2/an386",
     "measured_on": "qemu" | "device", "toolchain": "...", "utvm": "0.1.0"}

A record applies to an operator whose workload (see :mod:`utvm.configs.workload`) is the same,
the CPU included: a log tuned for one CPU is never applied to another.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import UtvmError
from ..ir import Graph
from .kernels import Config
from .workload import tunable, workload, workload_key

_REQUIRED = {"key": str, "workload": dict, "config": dict, "cost": dict}


def _check(rec: Any, where: str) -> dict[str, Any]:
    if not isinstance(rec, dict):
        raise UtvmError(f"{where}: a tuning record must be a JSON object")
    for field, kind in _REQUIRED.items():
        if not isinstance(rec.get(field), kind):
            raise UtvmError(f"{where}: tuning record without a valid '{field}'")
    if not isinstance(rec["workload"].get("cpu"), str) or not isinstance(rec["config"].get("variant"), str):
        raise UtvmError(f"{where}: tuning record without a CPU or a kernel variant")
    if not isinstance(cost(rec), int):
        raise UtvmError(f"{where}: tuning record without an instruction or cycle count")
    if workload_key(rec["workload"]) != rec["key"]:
        raise UtvmError(f"{where}: the record's key does not match its workload")
    return rec


def cost(rec: dict[str, Any]) -> Any:
    """The measured cost of a record: QEMU's instructions, or a device's cycles."""
    c = rec["cost"]
    return c.get("instructions", c.get("cycles"))


def read_log(path: Path) -> list[dict[str, Any]]:
    """Every record of a log; a file that is not one ends in one UtvmError line."""
    path = Path(path)
    if not path.is_file():
        raise UtvmError(f"{path}: no such tuning log")
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise UtvmError(f"{path}: cannot read the tuning log ({type(exc).__name__})") from None
    records = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            raise UtvmError(f"{path}:{n}: malformed tuning log (not JSON)") from None
        records.append(_check(rec, f"{path}:{n}"))
    return records


def write_log(path: Path, records: list[dict[str, Any]]) -> None:
    """Records sorted by key, one line each (the same tuning gives the same file)."""
    lines = [json.dumps(r, sort_keys=True, separators=(",", ":")) for r in sorted(records, key=lambda r: r["key"])]
    Path(path).write_text("".join(line + "\n" for line in lines))


def best_per_key(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The record with the fewest instructions for each workload (first of equals)."""
    best: dict[str, dict[str, Any]] = {}
    for rec in records:
        have = best.get(rec["key"])
        if have is None or cost(rec) < cost(have):
            best[rec["key"]] = rec
    return best


def merge_logs(paths: list[Path], out: Path) -> int:
    """``utvm tune --merge``: the best record per workload of all logs, into ``out``."""
    records = [r for p in paths for r in read_log(p)]
    best = best_per_key(records)
    write_log(out, list(best.values()))
    return len(best)


def _warn(msg: str) -> None:
    print(f"utvm: warning: {msg}", file=sys.stderr, flush=True)


def tuned_configs(graph: Graph, path: Path, cpu: str | None, warn: Callable[[str], None] = _warn) -> dict[int, Config]:
    """The configuration the log has for each tunable operator whose workload it has (operator
    index -> configuration; the graph is not changed). Records for other CPUs are ignored, with
    one warning line when none is for this CPU."""
    records = read_log(path)
    target = cpu or "any"
    best = best_per_key([r for r in records if r["workload"]["cpu"] == target])
    others = sorted({r["workload"]["cpu"] for r in records} - {target})
    if others and not best:
        warn(f"{path}: tuned for {', '.join(others)}, not {target}: ignored")
    configs = {}
    for index, op in enumerate(graph.ops):
        if not tunable(graph, op):
            continue
        rec = best.get(workload_key(workload(graph, op, cpu)))
        if rec is not None:
            configs[index] = dict(rec["config"])
    return configs
