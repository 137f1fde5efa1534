"""compile --shared-pool: several models that run one after the other, in one pool.

The output directory holds one Model Library Format directory per model and the group's own
files::

    DIR/<model>/...                     each model's MLF (its executor uses the group's pool)
    DIR/include/tvmgen_<group>.h        TVMGEN_<GROUP>_POOL_SIZE (the largest need) and the pool
    DIR/src/<group>_pool.c              the pool itself (UTVM_POOL_SECTION places it)
    DIR/group.json                      the models, their own pool needs, the kept outputs

``--keep MODEL:OUTPUT`` keeps an output of one model alive while the models after it run: with
``--io-in-pool`` the output lives in the pool, and the later models' plans leave its bytes alone.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .compiler import CompileOptions, CompileResult, Progress, _quiet, compile_model
from .emit.aot import POOL_ATTR
from .errors import UtvmError
from .importer import c_identifier

GROUP_FILE = "group.json"


@dataclass
class GroupResult:
    group: str
    out_dir: Path
    pool_size: int
    models: list[CompileResult]
    #: model name -> output tensor names kept alive until the group's last model has run
    kept: dict[str, list[str]]


def model_names(models: list[Path]) -> list[str]:
    """The C names of the models of a group (their file stems), which must differ."""
    names = [c_identifier(Path(m).stem) for m in models]
    if len(set(names)) != len(names):
        raise UtvmError(f"--shared-pool: two models have the same name ({', '.join(names)}); rename a file")
    return names


def parse_keep(specs: list[str], names: list[str]) -> dict[str, list[str]]:
    """``MODEL:OUTPUT`` -> {model name: [output]}; the model must not be the group's last."""
    kept: dict[str, list[str]] = {}
    for spec in specs:
        model, sep, output = spec.partition(":")
        name = c_identifier(Path(model).stem) if model not in names else model
        if not sep or not output:
            raise UtvmError(f"--keep '{spec}' is not MODEL:OUTPUT")
        if name not in names:
            raise UtvmError(f"--keep: no model '{model}' in the group ({', '.join(names)})")
        if name == names[-1]:
            raise UtvmError(f"--keep: '{model}' runs last, nothing runs after it")
        kept.setdefault(name, []).append(output)
    return kept


def _output_tensor(result: CompileResult, output: str) -> str:
    """The graph output named ``output`` (its tensor name or its C field name)."""
    for name in result.graph.outputs:
        if output in (name, result.sources.io_names[name]):
            return name
    raise UtvmError(f"--keep: model {result.name} has no output '{output}' "
                    f"(outputs: {', '.join(result.sources.io_names[n] for n in result.graph.outputs)})")


def compile_group(models: list[Path], out_dir: Path, group: str, options: CompileOptions | None = None,
                  keep: list[str] | None = None, progress: Progress = _quiet) -> GroupResult:
    """Compile ``models`` (run in this order) into ``out_dir`` with one pool for all of them."""
    options = options or CompileOptions()
    if group != c_identifier(group):
        raise UtvmError(f"--group '{group}' is not a C identifier (try '{c_identifier(group)}')")
    if options.pools:
        raise UtvmError("--pool cannot be combined with --shared-pool")
    names = model_names(models)
    kept = parse_keep(keep or [], names)
    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        stage = tmp / "group"
        results: list[CompileResult] = []
        reserved: list[tuple[int, int]] = []
        kept_tensors: dict[str, list[str]] = {}
        for model, name in zip(models, names):
            opts = dataclasses.replace(options, name=name, shared_pool=group, reserved=tuple(reserved))
            progress(f"model {name} ({model})")
            result = compile_model(model, stage / name, opts, progress)
            (stage / f"{name}.tar").unlink()
            results.append(result)
            for output in kept.get(name, []):
                tensor = _output_tensor(result, output)
                kept_tensors.setdefault(name, []).append(tensor)
                if tensor in result.plan.offsets:  # in the pool (--io-in-pool): later plans keep off it
                    reserved.append((result.plan.offsets[tensor], result.graph.tensors[tensor].nbytes))
        pool_size = max(r.plan.pool_size for r in results)
        _write_group_files(stage, group, pool_size, results, kept_tensors, models)
        if out_dir.exists():
            shutil.rmtree(out_dir)
        os.replace(stage, out_dir)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    results = [dataclasses.replace(r, mlf_dir=out_dir / r.name) for r in results]
    progress(f"wrote {out_dir}: {len(results)} models in one pool of {pool_size} bytes")
    return GroupResult(group, out_dir, pool_size, results, kept_tensors)


def _write_group_files(stage: Path, group: str, pool_size: int, results: list[CompileResult],
                       kept: dict[str, list[str]], models: list[Path]) -> None:
    upper = group.upper()
    (stage / "include").mkdir()
    (stage / "src").mkdir()
    lines = [f"/* Model group '{group}', generated by utvm: {len(results)} models that run one after the",
             "   other in one workspace pool (compile --shared-pool). */",
             f"#ifndef TVMGEN_{upper}_H_", f"#define TVMGEN_{upper}_H_", "", "#include <stdint.h>", "",
             "/* Bytes of the shared pool: the largest of the models' needs. */",
             f"#define TVMGEN_{upper}_POOL_SIZE {pool_size}",
             f"#define TVMGEN_{upper}_NUM_MODELS {len(results)}", ""]
    for r in results:
        lines.append(f"/* model '{r.name}' (tvmgen_{r.name}.h): needs {r.plan.pool_size} bytes of the pool"
                     + (f"; keeps {', '.join(kept[r.name])} for the models after it" if r.name in kept else "")
                     + " */")
        lines.append(f"#define TVMGEN_{upper}_{r.name.upper()}_POOL_SIZE {r.plan.pool_size}")
    lines += ["", "/* The pool (src/" + f"{group}_pool.c), used by every model's _run(). */",
              f"extern uint8_t tvmgen_{group}_pool[TVMGEN_{upper}_POOL_SIZE > 0 ? TVMGEN_{upper}_POOL_SIZE : 1];",
              "", f"#endif /* TVMGEN_{upper}_H_ */", ""]
    (stage / "include" / f"tvmgen_{group}.h").write_text("\n".join(lines))
    (stage / "src" / f"{group}_pool.c").write_text("\n".join([
        f"/* The workspace pool of model group '{group}', generated by utvm. */",
        "#include <stdint.h>", "",
        f'#include "../include/tvmgen_{group}.h"', "",
        *POOL_ATTR, "",
        f"uint8_t tvmgen_{group}_pool[TVMGEN_{upper}_POOL_SIZE > 0 ? TVMGEN_{upper}_POOL_SIZE : 1] UTVM_POOL_ATTR;",
        ""]))
    meta: dict[str, Any] = {
        "group": group, "pool_size": pool_size, "pool_symbol": f"tvmgen_{group}_pool",
        "models": [{"name": r.name, "model": str(m), "directory": r.name, "pool_size": r.plan.pool_size,
                    "kept_outputs": kept.get(r.name, [])} for r, m in zip(results, models)],
    }
    (stage / GROUP_FILE).write_text(json.dumps(meta, indent=2) + "\n")


def group_sources(out_dir: Path) -> tuple[list[Path], list[Path]]:
    """(sources, include dirs) of the group's own files (the pool), beside its models' MLFs."""
    return sorted((Path(out_dir) / "src").glob("*.c")), [Path(out_dir) / "include"]
