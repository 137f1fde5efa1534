"""Reference outputs: the TFLite Micro interpreter for .tflite, ONNX's reference evaluator for .onnx.

TFLite Micro comes from the tflite-micro package, whose wheels exist for Linux x86-64 only
(pyproject.toml installs it there). Elsewhere there is no reference for .tflite models:
:func:`tflm_runtime` is None, :func:`run_reference` returns None, and callers say so in one
line (:data:`NO_TFLM`) instead of comparing.
"""

from __future__ import annotations

import time
from pathlib import Path
from types import ModuleType

import numpy as np

from ..errors import UtvmError
from ..ir import Graph


def random_inputs(graph: Graph, seed: int = 0) -> list[np.ndarray]:
    """A deterministic random input for every model input."""
    rng = np.random.default_rng(seed)
    out = []
    for name in graph.inputs:
        t = graph.tensors[name]
        if t.dtype == "int8":
            out.append(rng.integers(-128, 128, size=t.shape, dtype=np.int8))
        elif t.dtype == "uint8":
            out.append(rng.integers(0, 256, size=t.shape, dtype=np.uint8))
        elif t.dtype in ("int16", "int32"):
            info = np.iinfo(t.dtype)
            out.append(rng.integers(info.min, info.max, size=t.shape, endpoint=True, dtype=t.dtype))
        elif t.dtype == "bool":
            out.append(rng.integers(0, 2, size=t.shape).astype(np.bool_))
        else:
            out.append(rng.uniform(-1.0, 1.0, size=t.shape).astype(t.dtype))
    return out


#: TFLite Micro's smallest tensor arena for reference runs (its own guess, a multiple of the file
#: size, is too small for models with large activations)
_TFLM_ARENA_BYTES = 16 << 20


#: The one line that says why a .tflite model's outputs are not compared.
NO_TFLM = ("no reference: the tflite-micro package is not installed (its wheels exist for "
           "Linux x86-64 only), so the outputs are not compared with TFLite Micro's")


def tflm_runtime() -> ModuleType | None:
    """TFLite Micro's Python runtime module, or None where tflite-micro is not installed."""
    try:
        from tflite_micro.python.tflite_micro import runtime
    except ImportError:
        return None
    return runtime


def reference_name(model: Path) -> str | None:
    """The reference that checks ``model``'s outputs here, or None when there is none."""
    if model.suffix.lower() == ".tflite":
        return "tflite-micro" if tflm_runtime() is not None else None
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return "onnx-reference"
    return "onnxruntime"


def run_reference(model: Path, inputs: list[np.ndarray], n_outputs: int,
                  repeats: int = 1) -> tuple[list[np.ndarray], list[float]] | None:
    """Outputs and wall seconds per invocation; None when no reference is installed."""
    if model.suffix.lower() == ".tflite":
        runtime = tflm_runtime()
        if runtime is None:
            return None
        return _run_tflm(runtime, model, inputs, n_outputs, repeats)
    return _run_onnx(model, inputs, repeats)


def _run_tflm(runtime: ModuleType, model: Path, inputs: list[np.ndarray], n_outputs: int,
              repeats: int) -> tuple[list[np.ndarray], list[float]]:
    data = model.read_bytes()
    # room for large inputs (e.g. two 128x128 images) several times over
    arena = max(_TFLM_ARENA_BYTES, (1 << 20) + 8 * sum(int(x.nbytes) for x in inputs))
    try:
        interp = runtime.Interpreter.from_bytes(data, arena_size=arena)
    except Exception as exc:  # its errors are RuntimeErrors with long texts
        raise UtvmError(f"TFLite Micro refused {model.name}: {str(exc).splitlines()[0][:200]}") from None
    times = []
    for _ in range(repeats):
        for i, x in enumerate(inputs):
            interp.set_input(x, i)
        t0 = time.perf_counter()
        interp.invoke()
        times.append(time.perf_counter() - t0)
    return [np.array(interp.get_output(i)) for i in range(n_outputs)], times


def _run_onnx(model: Path, inputs: list[np.ndarray], repeats: int) -> tuple[list[np.ndarray], list[float]]:
    """onnxruntime (CPU, default optimisations: QDQ groups run as its integer kernels), or ONNX's
    own reference evaluator where onnxruntime is not installed."""
    import onnx

    m = onnx.load(str(model))
    init = {i.name for i in m.graph.initializer}
    names = [i.name for i in m.graph.input if i.name not in init]
    feed = dict(zip(names, inputs))
    try:
        import onnxruntime as ort
    except ImportError:
        from onnx.reference import ReferenceEvaluator

        run = ReferenceEvaluator(m).run
    else:
        try:
            run = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run
        except Exception as exc:
            raise UtvmError(f"onnxruntime refused {model.name}: {str(exc).splitlines()[0][:200]}") from None
    times = []
    outs: list[np.ndarray] = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        outs = [np.asarray(o) for o in run(None, feed)]
        times.append(time.perf_counter() - t0)
    return outs, times
