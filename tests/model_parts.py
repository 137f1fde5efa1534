"""Models made of one operator: each operator of a corpus model as a case of its own
(:func:`extract_ops`), and one operator alone with given tensors (:func:`one_op_model`), for
the operator tests."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

import op_check
from tflite_builder import ModelBuilder

_TYPES = {0: "float32", 2: "int32", 6: "bool", 7: "int16", 9: "int8"}
_ACTIVATION_NAMES = {0: "NONE", 1: "RELU", 2: "RELU_N1_TO_1", 3: "RELU6"}


def values(rng: np.random.Generator, shape: Sequence[int], dtype: str, few: bool = False) -> np.ndarray:
    """Random data of ``dtype`` (from a few values when ``few``)."""
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if few:
        return rng.integers(-3, 4, size=shape).astype(dtype) * (1 if dtype != "float32" else 0.5)
    if dtype == "float32":
        return rng.uniform(-2.0, 2.0, size=shape).astype(np.float32)
    info = np.iinfo(dtype)
    data = rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)
    flat = data.reshape(-1)  # the extremes, where the arithmetic's bounds are tight
    flat[: min(flat.size, 2)] = info.min
    flat[-1:] = info.max
    return data


class OperandCases(op_check.Cases):
    """Cases whose operands are constants or model inputs of random data (:func:`values`)."""

    def tensor(self, m: ModelBuilder, name: str, shape: Sequence[int], dtype: str, rng: np.random.Generator,
               ins: list[int], constant: bool = False, quant: tuple[float, int] | None = None,
               few: bool = False, data: np.ndarray | None = None) -> int:
        """An operand: a constant or a model input with its data recorded."""
        q = {"scale": quant[0], "zero_point": quant[1]} if quant else {}
        data = values(rng, shape, dtype, few) if data is None else data
        if constant:
            return m.add_tensor(name, shape, dtype, data=data, **q)
        index = m.add_tensor(name, shape, dtype, **q)
        ins.append(index)
        self.inputs.append(data)
        return index


def extract_ops(path: Path, ops: set[str]) -> OperandCases:
    """Every operator of ``ops`` in the model at ``path`` as a case of its own: the inputs that
    are not constant become model inputs (random data)."""
    import tflite
    from tflite.BuiltinOperator import BuiltinOperator

    names = {v: k for k, v in vars(BuiltinOperator).items() if not k.startswith("_")}
    model = tflite.Model.GetRootAsModel(path.read_bytes(), 0)
    sg = model.Subgraphs(0)
    cases = OperandCases()
    for i in range(sg.OperatorsLength()):
        raw = sg.Operators(i)
        code = model.OperatorCodes(raw.OpcodeIndex())
        name = names[max(code.BuiltinCode(), code.DeprecatedBuiltinCode())]
        if name not in ops:
            continue

        def build(m: ModelBuilder, raw=raw, name=name, i=i) -> tuple[list[int], list[int]]:  # type: ignore[no-untyped-def]
            rng = np.random.default_rng(i)
            ins: list[int] = []
            indices = []
            for k in [*raw.InputsAsNumpy(), *raw.OutputsAsNumpy()]:
                t = sg.Tensors(int(k))
                shape = [int(d) for d in t.ShapeAsNumpy()] if t.ShapeLength() else []
                dtype = _TYPES[t.Type()]
                q = t.Quantization()
                quant = (float(q.ScaleAsNumpy()[0]), int(q.ZeroPointAsNumpy()[0])) if q and q.ScaleLength() else None
                buf = model.Buffers(t.Buffer())
                tag = f"{name.lower()}{i}_{len(indices)}"
                if buf.DataLength():
                    data = np.frombuffer(buf.DataAsNumpy().tobytes(), dtype=dtype).reshape(shape)
                    indices.append(cases.tensor(m, tag, shape, dtype, rng, ins, True, quant, data=data))
                elif len(indices) < raw.InputsLength():
                    indices.append(cases.tensor(m, tag, shape, dtype, rng, ins, quant=quant))
                else:
                    indices.append(m.add_tensor(tag, shape, dtype, **({"scale": quant[0], "zero_point": quant[1]}
                                                                      if quant else {})))
            options = None
            if name in ("ADD", "SUB", "MUL", "DIV"):
                table = getattr(tflite, f"{name.capitalize()}Options")()
                table.Init(raw.BuiltinOptions().Bytes, raw.BuiltinOptions().Pos)
                options = {"fused_activation_function": _ACTIVATION_NAMES[table.FusedActivationFunction()]}
            elif name in ("MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN"):
                table = tflite.ReducerOptions()
                table.Init(raw.BuiltinOptions().Bytes, raw.BuiltinOptions().Pos)
                options = {"keep_dims": bool(table.KeepDims())}
            m.add_operator(name, indices[:-1], [indices[-1]], options)
            return ins, [indices[-1]]
        cases.cases.append(build)
    return cases


def one_op_model(op: str, tensors: list[tuple[Sequence[int], str, tuple[float, int] | None]],
            options: dict[str, object] | None = None) -> bytes:
    m = ModelBuilder()
    idx = [m.add_tensor(f"t{k}", shape, dtype, **({"scale": q[0], "zero_point": q[1]} if q else {}))
           for k, (shape, dtype, q) in enumerate(tensors)]
    m.add_operator(op, idx[:-1], idx[-1:], options)
    return m.finish(idx[:-1], idx[-1:])
