"""TFLite Micro's SEANet layer tests (../shared/models/tflm/seanet): each layer model with the
inputs TFLite Micro's test feeds it and the output it expects, bit for bit."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from op_check import check_model
from utvm.importer import load_model


def layers(models_dir: Path, op: str) -> list[str]:
    """The layer names of one operator family, e.g. ``conv/conv0`` ... (sorted by number)."""
    folder = models_dir / "tflm" / "seanet" / op
    names = [p.stem for p in folder.glob("*.tflite")]
    return [f"{op}/{n}" for n in sorted(names, key=lambda n: int("".join(c for c in n if c.isdigit()) or 0))]


def _csv(path: Path, dtype: str) -> np.ndarray:
    return np.array([int(v) for v in path.read_text().replace("\n", ",").split(",") if v.strip()], dtype=dtype)


def check_layer(models_dir: Path, tmp_path: Path, name: str, board: str, golden_mismatches: int = 0) -> None:
    """Run one layer on ``board`` with TFLite Micro's inputs: the output equals TFLite Micro's own
    output for the same inputs and the golden CSV (but for ``golden_mismatches`` elements, each
    one step away, where the TFLite Micro we compare with differs from the golden output too)."""
    base = models_dir / "tflm" / "seanet" / name
    model = Path(f"{base}.tflite")
    graph = load_model(model)
    inputs = []
    for k, tensor in enumerate(graph.inputs):
        t = graph.tensors[tensor]
        inputs.append(_csv(Path(f"{base}_input{k}_{t.dtype}.csv"), t.dtype).reshape(t.shape))
    out = graph.tensors[graph.outputs[0]]
    golden = _csv(Path(f"{base}_golden_{out.dtype}.csv"), out.dtype)
    report = check_model(model, tmp_path, board, inputs=inputs)
    diff = np.abs(report.outputs[0].reshape(-1).astype(np.int64) - golden)
    assert np.count_nonzero(diff) == golden_mismatches and diff.max(initial=0) <= 1, (
        f"{name} on {board}: differs from the golden output in {np.count_nonzero(diff)} elements")
