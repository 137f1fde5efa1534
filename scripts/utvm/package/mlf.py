"""Write a Model Library Format (version 7) directory and its .tar."""

from __future__ import annotations

import datetime
import json
import shutil
import tarfile
from pathlib import Path
from typing import Any

from ..emit.aot import EmittedSources
from ..ir import Graph
from ..lower.lowering import Lowered
from ..paths import crt_dir
from ..plan.memory import MemoryPlan
from .constobj import write_constants_object

MLF_VERSION = 7


def _io_entry(graph: Graph, names: list[str], fields: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for n in names:
        t = graph.tensors[n]
        entry: dict[str, Any] = {"size": t.nbytes, "dtype": t.dtype, "shape": list(t.shape),
                                 "c_name": fields[n]}
        if t.quant is not None:
            s, z = t.quant.scalar()
            entry["scale"] = s
            entry["zero_point"] = z
        out[n] = entry
    return out


def metadata(name: str, graph: Graph, lowered: Lowered, plan: MemoryPlan, sources: EmittedSources,
             io_in_pool: bool, target: str) -> dict[str, Any]:
    io_bytes = 0 if io_in_pool else sum(graph.tensors[n].nbytes for n in graph.inputs + graph.outputs)
    return {
        "version": MLF_VERSION,
        "modules": {
            name: {
                "model_name": name,
                "export_datetime": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%SZ"),
                "target": [target],
                "executors": ["aot"],
                "style": "full-model",
                "io_in_pool": io_in_pool,
                "memory": {
                    "functions": {
                        "main": [{
                            "device": 1,
                            "workspace_size_bytes": plan.pool_size,
                            "constants_size_bytes": sources.constants_bytes,
                            "io_size_bytes": io_bytes,
                            "inputs": _io_entry(graph, graph.inputs, sources.io_names),
                            "outputs": _io_entry(graph, graph.outputs, sources.io_names),
                        }],
                        "operator_functions": [
                            {"function_name": f"__tvm_ffi_{c.symbol}", "operator": c.op_name,
                             "workspace": [{"device": 1, "workspace_size_bytes": c.scratch_bytes}]}
                            for c in lowered.calls
                        ],
                    },
                },
                "memory_plan": [
                    {"name": b.name, "kind": b.kind, "offset": b.offset, "size": b.size,
                     "first": b.first, "last": b.last}
                    for b in plan.buffers
                ],
            }
        },
    }


def write_mlf(directory: Path, name: str, graph: Graph, lowered: Lowered, plan: MemoryPlan,
              sources: EmittedSources, meta: dict[str, Any],
              constants_object_target: str | None = None) -> None:
    """Fill ``directory`` (which must exist and be empty) with the MLF layout.

    With ``constants_object_target`` (``host`` or ``arm``) the constants are written as
    ``codegen/host/lib/<name>_constants_<arch>.o`` instead of ``<name>_lib2.c``.
    """
    src = directory / "codegen" / "host" / "src"
    inc = directory / "codegen" / "host" / "include"
    src.mkdir(parents=True)
    inc.mkdir(parents=True)
    (src / f"{name}_lib0.c").write_text(lowered.c_source)
    (src / f"{name}_lib1.c").write_text(sources.executor)
    if constants_object_target is None:
        (src / f"{name}_lib2.c").write_text(sources.constants)
    else:
        write_constants_object(directory / "codegen" / "host" / "lib", name, sources.constant_data,
                               constants_object_target)
    (inc / f"tvmgen_{name}.h").write_text(sources.header)
    (directory / "src").mkdir()
    (directory / "src" / f"{name}.graph.txt").write_text(graph.text())
    (directory / "src" / f"{name}.tir").write_text(lowered.tir_text)
    crt = crt_dir()
    runtime = directory / "runtime"
    runtime.mkdir()
    for part in ("include", "src", "ports"):
        shutil.copytree(crt / part, runtime / part)
    (directory / "metadata.json").write_text(json.dumps(meta, indent=2) + "\n")


def write_tar(directory: Path, tar_path: Path) -> None:
    with tarfile.open(tar_path, "w") as tar:
        for path in sorted(directory.rglob("*")):
            tar.add(path, arcname=str(path.relative_to(directory)), recursive=False)
