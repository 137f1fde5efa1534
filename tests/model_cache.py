"""Compiled models shared by the tests of one session: the MLPerf Tiny models' runs
(test_models) and the MLFs the sanitizer builds reuse (test_sanitizers)."""

from __future__ import annotations

from pathlib import Path

from utvm.compiler import compile_model
from utvm.importer import c_identifier
from utvm.run.runner import RunReport, run_model

_RUNS: dict[str, tuple[RunReport, Path]] = {}
_MLFS: dict[Path, Path] = {}


def run_cached(models_dir: Path, tmp_root: Path, name: str) -> tuple[RunReport, Path]:
    """``utvm run`` of the shared model ``name`` on the host, once per session: (report, work
    directory with mlf/ and the host binary)."""
    if name not in _RUNS:
        work = tmp_root / name
        work.mkdir()
        report = run_model(models_dir / f"{name}.tflite", "host", workdir=work)
        _RUNS[name] = (report, work)
        _MLFS[models_dir / f"{name}.tflite"] = work / "mlf"
    return _RUNS[name]


def mlf_cached(model: Path, tmp_root: Path) -> tuple[str, Path]:
    """(C name, MLF directory) of ``model`` compiled with the default options, once per session
    (the MLF of :func:`run_cached` when that ran first). Raises UtvmError as compile does."""
    if model not in _MLFS:
        out = tmp_root / "mlf" / f"{model.parent.name}_{model.stem}"
        compile_model(model, out)
        _MLFS[model] = out
    return c_identifier(model.stem), _MLFS[model]
