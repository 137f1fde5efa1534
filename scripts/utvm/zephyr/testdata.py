"""Test data for a compiled model: one input and the output TFLite Micro computes for it.

Writes a C header ``tvmgen_<name>_testdata.h`` that firmware (samples/utvm_inference, the
host test in tests/cmake) compares its own inference with::

    python -m utvm.zephyr.testdata MODEL.tflite --name NAME -o tvmgen_NAME_testdata.h

The input is pseudo-random with a fixed seed, so the header is the same on every build:
quantized inputs are normal around their zero point (20 quantization steps of spread, which
keeps the KWS reference model's outputs away from saturation), float inputs standard normal.
The input is made from the model file alone; the outputs need TFLite Micro (the tflite-micro
package, whose wheels exist for Linux x86-64 only). Without it the header holds the input
and ``TVMGEN_<NAME>_TEST_HAS_REFERENCE 0``, and one line says so.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from utvm.errors import UtvmError

#: C element type and utvm_dtype_t name per numpy dtype.
_C_TYPES: dict[str, tuple[str, str]] = {
    "int8": ("int8_t", "UTVM_DTYPE_INT8"),
    "uint8": ("uint8_t", "UTVM_DTYPE_UINT8"),
    "int16": ("int16_t", "UTVM_DTYPE_INT16"),
    "int32": ("int32_t", "UTVM_DTYPE_INT32"),
    "float32": ("float", "UTVM_DTYPE_FLOAT32"),
    "bool": ("uint8_t", "UTVM_DTYPE_BOOL"),
    "int64": ("int64_t", "UTVM_DTYPE_INT64"),
}

QUANT_SPREAD = 20.0


@dataclass(frozen=True)
class TestVectors:
    """Inputs and the reference outputs, in the model's tensor order."""

    inputs: list[np.ndarray]
    #: TFLite Micro's outputs for the inputs; empty when tflite-micro is not installed
    outputs: list[np.ndarray]
    #: bytes of each model output (known with or without the reference)
    output_bytes: list[int]


def _make_input(shape: tuple[int, ...], dtype: np.dtype, zero_point: int,
                rng: np.random.Generator) -> np.ndarray:
    if dtype.kind == "f":
        return rng.standard_normal(size=shape).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, size=shape).astype(dtype)
    info = np.iinfo(dtype)
    values = np.round(rng.normal(zero_point, QUANT_SPREAD, size=shape))
    return np.clip(values, info.min, info.max).astype(dtype)


#: numpy dtype of each TFLite TensorType the test data supports (schema enum values).
_TFLITE_DTYPES = {0: "float32", 2: "int32", 3: "uint8", 6: "bool", 7: "int16", 9: "int8"}


@dataclass(frozen=True)
class _Tensor:
    shape: tuple[int, ...]
    dtype: np.dtype
    zero_point: int


def _io_tensors(data: bytes, model: Path) -> tuple[list[_Tensor], list[_Tensor]]:
    """The inputs and outputs of the model's main subgraph, read from the flatbuffer."""
    import tflite

    def tensor(graph: tflite.SubGraph, index: int, what: str) -> _Tensor:
        t = graph.Tensors(index)
        shape = tuple(int(d) for d in t.ShapeAsNumpy()) if t.ShapeLength() else ()
        q = t.Quantization()
        zero_point = int(q.ZeroPoint(0)) if q is not None and q.ZeroPointLength() else 0
        type_name = _TFLITE_DTYPES.get(int(t.Type()))
        if type_name is None:
            raise UtvmError(f"{model}: {what} has a tensor type test data does not support")
        return _Tensor(shape, np.dtype(type_name), zero_point)

    try:
        graph = tflite.Model.GetRootAsModel(data, 0).Subgraphs(0)
        inputs = [tensor(graph, graph.Inputs(i), f"input {i}") for i in range(graph.InputsLength())]
        outputs = [tensor(graph, graph.Outputs(i), f"output {i}") for i in range(graph.OutputsLength())]
    except UtvmError:
        raise
    except Exception as e:
        raise UtvmError(f"{model}: not a TFLite flatbuffer: {e}") from e
    return inputs, outputs


def _nbytes(t: _Tensor) -> int:
    return int(np.prod(t.shape, dtype=np.int64)) * t.dtype.itemsize


def reference(model: Path, seed: int = 0) -> TestVectors:
    """A seeded input for a .tflite model and, where TFLite Micro is installed, its outputs
    (``outputs`` is empty without it)."""
    from utvm.run.reference import tflm_runtime

    if model.suffix.lower() != ".tflite":
        raise UtvmError(f"{model}: test data needs a .tflite model (TFLite Micro is the reference)")
    try:
        data = model.read_bytes()
    except OSError as e:
        raise UtvmError(f"cannot read {model}: {e.strerror}") from e
    tensors, output_tensors = _io_tensors(data, model)
    output_bytes = [_nbytes(t) for t in output_tensors]
    rng = np.random.default_rng(seed)
    inputs = [_make_input(t.shape, t.dtype, t.zero_point, rng) for t in tensors]
    runtime = tflm_runtime()
    if runtime is None:
        return TestVectors(inputs=inputs, outputs=[], output_bytes=output_bytes)
    try:
        interp = runtime.Interpreter.from_bytes(data)
    except Exception as e:  # TFLite Micro raises RuntimeError/ValueError variously
        raise UtvmError(f"{model}: TFLite Micro cannot load the model: {e}") from e
    for index, x in enumerate(inputs):
        interp.set_input(x, index)
    interp.invoke()
    outputs = [np.array(interp.get_output(index)) for index in range(len(output_tensors))]
    return TestVectors(inputs=inputs, outputs=outputs, output_bytes=output_bytes)


def _c_array(decl: str, data: np.ndarray) -> str:
    raw = np.ascontiguousarray(data).tobytes()
    lines = []
    for start in range(0, len(raw), 16):
        chunk = raw[start:start + 16]
        lines.append("  " + ", ".join(f"0x{b:02x}" for b in chunk) + ",")
    body = "\n".join(lines) if lines else "  0,"
    return f"{decl} = {{\n{body}\n}};\n"


def _dtype_info(a: np.ndarray) -> tuple[str, str]:
    try:
        return _C_TYPES[str(a.dtype)]
    except KeyError:
        raise UtvmError(f"unsupported tensor type {a.dtype} in test data") from None


def _align16(n: int) -> int:
    return (n + 15) & ~15


def render_header(name: str, vectors: TestVectors, model: Path, seed: int) -> str:
    """The C header text for the test vectors of model ``name``."""
    upper = name.upper()
    guard = f"TVMGEN_{upper}_TESTDATA_H_"
    io_bytes = sum(_align16(n) for n in [*(a.nbytes for a in vectors.inputs), *vectors.output_bytes])
    out = [
        "/*",
        f" * Test data for model {name}: generated by `python -m utvm.zephyr.testdata`, do not edit.",
        f" * Model: {model.name}; input: seeded pseudo-random (seed {seed});",
        (" * outputs: computed by TFLite Micro (tflite-micro package) on that input."
         if vectors.outputs else
         " * outputs: none (tflite-micro was not installed): TEST_HAS_REFERENCE is 0."),
        " * Arrays hold the tensors' bytes in the target's (little-endian) order.",
        " */",
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
        "#include <stdint.h>",
        "",
        '#include "utvm/model.h"',
        "",
        "#ifndef UTVM_TESTDATA_ATTR",
        "#if defined(__GNUC__)",
        "#define UTVM_TESTDATA_ATTR __attribute__((aligned(16), unused))",
        "#else",
        "#define UTVM_TESTDATA_ATTR",
        "#endif",
        "#endif",
        "",
        "/** 1 when the outputs below are TFLite Micro's for the input, 0 when there are none. */",
        f"#define TVMGEN_{upper}_TEST_HAS_REFERENCE {1 if vectors.outputs else 0}",
        f"#define TVMGEN_{upper}_TEST_NUM_INPUTS {len(vectors.inputs)}u",
        f"#define TVMGEN_{upper}_TEST_NUM_OUTPUTS {len(vectors.output_bytes)}u",
        "/** Bytes of all inputs and outputs, each rounded up to 16: one buffer can hold them. */",
        f"#define TVMGEN_{upper}_TEST_IO_BYTES {io_bytes}u",
        "",
    ]
    tables: dict[str, list[str]] = {"input": [], "output": []}
    types: dict[str, list[str]] = {"input": [], "output": []}
    for kind, arrays in (("input", vectors.inputs), ("output", vectors.outputs)):
        for i, a in enumerate(arrays):
            _, utype = _dtype_info(a)
            shape = "x".join(str(d) for d in a.shape)
            var = f"tvmgen_{name}_test_{kind}{i}"
            out.append(f"/* {kind} {i}: {a.dtype} {shape} */")
            out.append(_c_array(
                f"static const uint8_t {var}[{a.nbytes}] UTVM_TESTDATA_ATTR", a))
            tables[kind].append(var)
            types[kind].append(utype)
    for kind in ("input", "output"):
        n = len(tables[kind])
        if n == 0:
            continue
        out.append(f"static const uint8_t* const tvmgen_{name}_test_{kind}s[{n}] UTVM_TESTDATA_ATTR"
                   " = {" + ", ".join(tables[kind]) + "};")
        out.append(f"static const utvm_dtype_t tvmgen_{name}_test_{kind}_dtypes[{n}] UTVM_TESTDATA_ATTR"
                   " = {" + ", ".join(types[kind]) + "};")
    out += ["", f"#endif /* {guard} */", ""]
    return "\n".join(out)


def write_header(model: Path, name: str, output: Path, seed: int = 0) -> None:
    from utvm.run.reference import NO_TFLM

    vectors = reference(model, seed)
    if not vectors.outputs:
        print(f"utvm: test data for {name} has no reference output: {NO_TFLM}", flush=True)
    text = render_header(name, vectors, model, seed)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text)  # always: the build compares its time stamp with the model's


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m utvm.zephyr.testdata",
        description="Write a C header with one input of a .tflite model and the output "
        "TFLite Micro computes for it.")
    parser.add_argument("model", type=Path, help=".tflite model")
    parser.add_argument("--name", required=True, help="model name (as in utvm compile --name)")
    parser.add_argument("-o", "--output", type=Path, required=True, help="header to write")
    parser.add_argument("--seed", type=int, default=0, help="seed of the input (default 0)")
    args = parser.parse_args(argv)
    try:
        write_header(args.model, args.name, args.output, args.seed)
    except UtvmError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
