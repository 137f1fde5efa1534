"""Every model of ../shared/models/corpus and ../shared/models/tflm, whole, against TFLite Micro.

On the host all of them; on the emulated Cortex-M4 (mps2/an386) and Cortex-M55 (mps3/an547) the
int8 and int16 ones (slow). Outputs are identical for integer outputs, float32 within 1e-5
relative (see :func:`op_check.check_model`). The models are globbed, so one added to ../shared
later is covered without touching this file; the SEANet layers (tflm/seanet) have their golden
outputs and their own tests (tests/seanet.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import op_check
from op_check import check_model

MODELS_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "models"
FOLDERS = ("corpus", "tflm")
#: TFLite tensor types of quantized activations: INT16, INT8
_QUANTIZED_TYPES = {7, 9}

#: models that do not match yet, with the reason (name relative to ../shared/models)
KNOWN_FAILURES: dict[str, str] = {}


def _models() -> list[Path]:
    return sorted(p for folder in FOLDERS for p in (MODELS_DIR / folder).glob("*.tflite"))


def _quantized(path: Path) -> bool:
    """True when the model's activations (tensors without constant data) include int8 or int16."""
    import tflite

    model = tflite.Model.GetRootAsModel(path.read_bytes(), 0)
    graph = model.Subgraphs(0)
    for i in range(graph.TensorsLength()):
        tensor = graph.Tensors(i)
        if not model.Buffers(tensor.Buffer()).DataLength() and tensor.Type() in _QUANTIZED_TYPES:
            return True
    return False


def _params(paths: list[Path]) -> list[object]:
    params: list[object] = []
    for path in paths:
        name = f"{path.parent.name}/{path.stem}"
        marks = [pytest.mark.xfail(reason=KNOWN_FAILURES[name], strict=True)] if name in KNOWN_FAILURES else []
        params.append(pytest.param(path, id=name, marks=marks))
    if not params:  # no ../shared: one test that says why
        params.append(pytest.param(None, id="missing", marks=pytest.mark.skip(
            reason=f"the shared models are not at {MODELS_DIR}")))
    return params


ALL = _models()
QUANTIZED = [p for p in ALL if _quantized(p)]


def test_shared_models_are_found(models_dir: Path) -> None:
    """The glob sees the shared folders' models (a moved folder would silently test nothing)."""
    assert {p.parent.name for p in ALL} == set(FOLDERS)
    assert QUANTIZED and len(QUANTIZED) < len(ALL)


@pytest.mark.parametrize("path", _params(ALL))
def test_model_on_host(path: Path, tmp_path: Path) -> None:
    check_model(path, tmp_path)


@op_check.on_boards
@pytest.mark.parametrize("path", _params(QUANTIZED))
def test_quantized_model_on_board(path: Path, tmp_path: Path, board: str) -> None:
    check_model(path, tmp_path, board)
