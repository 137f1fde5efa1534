"""Write a Model Library Format (version 7) directory and its .tar."""

from __future__ import annotations

import datetime
import json
import re
import shutil
import tarfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..emit.aot import EmittedSources, pool_section
from ..errors import UtvmError
from ..ir import Graph
from ..lower.kernel_headers import UMBRELLAS, closure
from ..lower.lowering import Lowered
from ..lower.offload import ExternalModule, LibraryFiles
from ..paths import crt_dir
from ..plan.memory import MemoryPlan
from .constobj import write_constants_object
from .params import param_dict_bytes

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


def called_functions(c_source: str) -> set[str]:
    """Names of the functions a C source calls (and declares): what a module's library must
    provide for its glue."""
    return set(re.findall(r"\b([A-Za-z_]\w*)\s*\(", c_source))


def external_layout(name: str, modules: Sequence[ExternalModule], libraries: dict[str, LibraryFiles],
                    lowered: Lowered) -> dict[str, Any]:
    """metadata.json's "external_modules": where each module's glue and library are in the MLF
    (paths relative to the MLF root) and which operators it took."""
    out: dict[str, Any] = {}
    for m in modules:
        lib = libraries[m.name]
        base = f"codegen/{m.c_name}"
        out[m.name] = {
            "directory": base,
            "glue_sources": [f"{base}/src/{name}_{m.c_name}.c"],
            "library_sources": [f"{base}/lib/{s}" for s in lib.sources],
            "include_dirs": [f"{base}/lib/{d}" for d in lib.include_dirs],
            "operators": [
                {"operator": c.op_name, "function_name": c.symbol, "calls": c.external.function,
                 "workspace_size_bytes": c.scratch_bytes}
                for c in lowered.calls if c.module == m.name and c.external is not None
            ],
        }
    return out


def metadata(name: str, graph: Graph, lowered: Lowered, plan: MemoryPlan, sources: EmittedSources,
             io_in_pool: bool, target: str, external: dict[str, Any] | None = None) -> dict[str, Any]:
    from .. import __version__

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
                            {"function_name": c.symbol if c.external else f"__tvm_ffi_{c.symbol}",
                             "operator": c.op_name, **({"external_module": c.module} if c.module else {}),
                             "workspace": [{"device": 1, "workspace_size_bytes": c.scratch_bytes}]}
                            for c in lowered.calls
                        ],
                    },
                },
                "memory_plan": [
                    {"name": b.name, "kind": b.kind, "offset": b.offset, "size": b.size,
                     "first": b.first, "last": b.last, "pool": plan.pools[b.pool].name}
                    for b in plan.buffers
                ],
                # the workspace pools (one unnamed pool unless --pool NAME:BYTES was given)
                "pools": [
                    {"name": p.name, "size": p.size, "capacity": p.capacity,
                     "section": pool_section(p.name) if p.name else None}
                    for p in plan.pools
                ],
                # tensors sharing a buffer: RESHAPE aliases, concatenation slots written in place by
                # their producers, elementwise outputs written over their input (utvm.plan.sharing)
                "memory_sharing": [
                    {"name": t.name, "buffer": t.buffer, "how": t.how, "target": t.target,
                     "offset": t.offset, "size": t.byte_span(), "strided": t.strides is not None,
                     "first": t.first, "last": t.last}
                    for t in plan.tenants
                ],
                "external_modules": external or {},
                # as TVM 0.18 lists the runtime an MLF carries
                "external_dependencies": [{"short_name": "utvm_crt", "url": "./runtime", "url_type": "mlf_path",
                                           "version_spec": __version__}],
            }
        },
    }


def write_mlf(directory: Path, name: str, graph: Graph, lowered: Lowered, plan: MemoryPlan,
              sources: EmittedSources, meta: dict[str, Any],
              constants_object_target: str | None = None,
              modules: Sequence[ExternalModule] = (), libraries: dict[str, LibraryFiles] | None = None) -> None:
    """Fill ``directory`` (which must exist and be empty) with the MLF layout.

    With ``constants_object_target`` (``host`` or ``arm``) the constants are written as
    ``codegen/host/lib/<name>_constants_<arch>.o`` instead of ``<name>_lib2.c``.
    """
    src = directory / "codegen" / "host" / "src"
    inc = directory / "codegen" / "host" / "include"
    src.mkdir(parents=True)
    crt = crt_dir()
    # the headers the generated C includes, beside the model's own header: found through
    # codegen/host/include, and by the generated C itself through "../include/..." (TVM 0.18's
    # CRT host template compiles the model with no include directory of the MLF's)
    shutil.copytree(crt / "include", inc, ignore=_other_kernel_headers(lowered.c_source))
    (src / f"{name}_lib0.c").write_text(relative_includes(lowered.c_source))
    (src / f"{name}_lib1.c").write_text(relative_includes(sources.executor))
    if sources.system_lib:
        (src / f"{name}_lib3.c").write_text(sources.system_lib)
    if constants_object_target is None:
        (src / f"{name}_lib2.c").write_text(sources.constants)
    else:
        write_constants_object(directory / "codegen" / "host" / "lib", name, sources.constant_data,
                               constants_object_target)
    (inc / f"tvmgen_{name}.h").write_text(sources.header)
    for m in modules:
        base = directory / "codegen" / m.c_name
        (base / "src").mkdir(parents=True)
        (base / "src" / f"{name}_{m.c_name}.c").write_text(sources.glue[m.c_name])
        lib = (libraries or {})[m.name]
        for rel in (*lib.sources, *lib.headers):
            dest = base / "lib" / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(lib.root / rel, dest)
    (directory / "src").mkdir()
    (directory / "src" / f"{name}.graph.txt").write_text(graph.text(lowered.configs))
    (directory / "src" / f"{name}.tir").write_text(lowered.tir_text)
    (directory / "src" / f"{name}.relay").write_text(
        f"# Model '{name}'. TVM 0.18 wrote the model's Relay here; TVM 0.27, which utvm compiles\n"
        "# with, has no Relay (removed in TVM 0.20). What follows is utvm's graph of the model, as\n"
        f"# in {name}.graph.txt (and the TIR of its kernels in {name}.tir).\n\n" + graph.text(lowered.configs))
    (directory / "parameters").mkdir()
    (directory / "parameters" / f"{name}.params").write_bytes(param_dict_bytes(_parameters(graph, lowered)))
    shutil.copytree(crt / "templates", directory / "templates")
    runtime = directory / "runtime"
    runtime.mkdir()
    for part in ("include", "src", "ports"):
        shutil.copytree(crt / part, runtime / part)
    (directory / "metadata.json").write_text(json.dumps(meta, indent=2) + "\n")


def _root_owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


def write_tar(directory: Path, tar_path: Path) -> None:
    """The MLF as TVM 0.18 tars it: every member under "./" (the directory itself is "."),
    owned by root, in sorted order."""
    with tarfile.open(tar_path, "w") as tar:
        tar.add(directory, arcname=".", recursive=False, filter=_root_owned)
        for path in sorted(directory.rglob("*")):
            tar.add(path, arcname="./" + str(path.relative_to(directory)), recursive=False, filter=_root_owned)


#: the headers of lib/crt/include that generated C includes by name
_RUNTIME_HEADER_RE = re.compile(r'^#include "((?:tvm|utvm|dlpack)/[\w/.]+\.h|tvmgen_\w+\.h)"', re.M)


def _other_kernel_headers(c_source: str) -> Callable[[str, list[str]], set[str]]:
    """copytree's filter for codegen/host/include: of utvm/kernels/ only the headers the kernels
    include (and what those include); not the umbrellas kernels.h, kernels_dsp.h, kernels_mve.h,
    which include them all (runtime/include holds the whole runtime)."""
    keep = closure(re.findall(r'^#include "utvm/kernels/([\w.]+\.h)"', c_source, re.M))

    def ignore(directory: str, names: list[str]) -> set[str]:
        path = Path(directory)
        if path.name == "kernels" and path.parent.name == "utvm":
            return {n for n in names if n not in keep}
        if path.name == "utvm":
            return {n for n in names if n in UMBRELLAS}
        return set()

    return ignore


def relative_includes(source: str) -> str:
    """Generated C includes the runtime's headers (and the model's header) as
    "../include/<header>": codegen/host/include holds them, and the C finds them there with or
    without include directories."""
    return _RUNTIME_HEADER_RE.sub(r'#include "../include/\1"', source)


def _parameters(graph: Graph, lowered: Lowered) -> dict[str, Any]:
    """The constants the kernels read, by name, as stored in the C arrays (TVM 0.18's
    parameters/<name>.params held the model's weights by name)."""
    import numpy as np

    params: dict[str, Any] = {}
    for call in lowered.calls:
        for arg in call.args:
            t = graph.tensors.get(arg)
            if t is not None and t.is_constant and t.name not in params:
                assert t.data is not None
                params[t.name] = np.ascontiguousarray(t.data.astype(t.dtype))
    return params


@dataclass
class ModelSources:
    """What a build of a compiled model compiles and links (the runtime aside)."""

    sources: list[Path]       # kernels, executor, constants C, external glue and libraries
    objects: list[Path]       # prebuilt objects (the constants of --constants object)
    include_dirs: list[Path]


def model_sources(mlf: Path) -> ModelSources:
    """The C sources, objects and include directories of the model in an MLF directory."""
    mlf = Path(mlf)
    host = mlf / "codegen" / "host"
    sources = sorted((host / "src").glob("*.c"))
    objects = sorted((host / "lib").glob("*.o"))
    includes = [host / "include"]
    for module, layout in _external_modules(mlf).items():
        for rel in (*layout.get("glue_sources", []), *layout.get("library_sources", [])):
            if not (mlf / rel).is_file():
                raise UtvmError(f"{mlf}: external module {module}: {rel} is missing")
            sources.append(mlf / rel)
        includes += [mlf / rel for rel in layout.get("include_dirs", [])]
    return ModelSources(sources, objects, includes)


def _external_modules(mlf: Path) -> dict[str, Any]:
    meta_path = mlf / "metadata.json"
    if not meta_path.is_file():
        return {}
    try:
        modules = json.loads(meta_path.read_text())["modules"]
    except (ValueError, KeyError) as exc:
        raise UtvmError(f"{meta_path}: not valid MLF metadata ({exc})") from None
    out: dict[str, Any] = {}
    for entry in modules.values():
        out.update(entry.get("external_modules", {}))
    return out
