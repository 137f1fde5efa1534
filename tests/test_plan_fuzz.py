"""Planner fuzz (issue 23): random DAGs of elementwise, concatenation, reshape, depthwise and other
in-place capable operators always get a valid memory plan, with and without depthwise
convolutions shifted in place; a subset is compiled and run against TFLite Micro.

Each graph is a seeded random int8 TFLite model (tests/tflite_builder.py): every operator takes
one or two live tensors of the graph (so tensors die at in-place operators, are read again
later, feed several consumers) and adds one. ``plan_memory`` keeps the smaller of its two plans;
here both (``_plan`` with shift False and True) must check clean, planned from the lowering
without TVM's C code generation (``lower_graph(compile_c=False)``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from op_check import check_model
from tflite_builder import ModelBuilder

#: graphs whose plans are checked without running (fast: 200; slow: the other 1,800)
FAST, TOTAL = 200, 2000
#: graphs of each part also compiled and run on the host against TFLite Micro
RUN_FAST, RUN_SLOW = 5, 40


def random_graph(seed: int) -> bytes:
    """One random DAG of 4..14 operators on [1, H, W, C] int8 tensors."""
    rng = np.random.default_rng(seed)
    m = ModelBuilder(f"plan fuzz {seed}")
    h = int(rng.choice([4, 6, 8]))
    c = int(rng.choice([3, 4, 5, 8]))

    def q() -> dict[str, Any]:
        return {"scale": float(rng.uniform(0.02, 0.1)), "zero_point": int(rng.integers(-20, 20))}

    live: list[tuple[int, list[int]]] = []
    x = m.add_tensor("input", [1, h, h, c], "int8", **q())
    live.append((x, [1, h, h, c]))
    count = 0

    def new(shape: list[int]) -> int:
        nonlocal count
        count += 1
        return m.add_tensor(f"t{count}", shape, "int8", **q())

    for _ in range(int(rng.integers(4, 15))):
        a, sa = live[int(rng.integers(len(live)))] if rng.random() < 0.5 else live[-1]
        kind = rng.choice(["ADD", "MUL", "RELU", "HARD_SWISH", "LOGISTIC", "RESHAPE", "CONCATENATION",
                           "DEPTHWISE_CONV_2D", "DEPTHWISE_CONV_2D", "MAXIMUM"])
        if kind in ("ADD", "MUL", "MAXIMUM"):
            same = [t for t in live if t[1] == sa]
            b = same[int(rng.integers(len(same)))][0]
            y = new(sa)
            if kind == "ADD":  # an output scale TFLite Micro takes (at least twice the inputs')
                m._tensors[y]["scale"] = [2.5 * max(m._tensors[a]["scale"][0], m._tensors[b]["scale"][0])]
            m.add_operator(kind, [a, b], [y], {"fused_activation_function": "NONE"} if kind != "MAXIMUM" else None)
        elif kind in ("RELU", "HARD_SWISH", "LOGISTIC"):
            y = new(sa)
            if kind == "LOGISTIC":
                m._tensors[y]["scale"], m._tensors[y]["zero_point"] = [1 / 256], [-128]
            m.add_operator(kind, [a], [y])
        elif kind == "RESHAPE":
            shape = [1, sa[1] * sa[2], 1, sa[3]] if sa[2] > 1 else [1, int(np.sqrt(sa[1])), int(np.sqrt(sa[1])), sa[3]]
            if int(np.prod(shape)) != int(np.prod(sa)):
                shape = list(sa)
            s = m.add_tensor(f"s{count}", [4], "int32", data=shape)
            y = new(shape)
            m._tensors[y].update(scale=m._tensors[a]["scale"], zero_point=m._tensors[a]["zero_point"])
            m.add_operator("RESHAPE", [a, s], [y], {"new_shape": shape})
            sa = shape
        elif kind == "CONCATENATION":
            axis = int(rng.choice([1, 3]))
            qa = (m._tensors[a]["scale"], m._tensors[a]["zero_point"])
            same = [t for t in live if t[1] == sa and (m._tensors[t[0]]["scale"], m._tensors[t[0]]["zero_point"]) == qa]
            b = same[int(rng.integers(len(same)))][0]
            shape = list(sa)
            shape[axis] *= 2
            y = new(shape)
            m._tensors[y].update(scale=qa[0], zero_point=qa[1])
            m.add_operator("CONCATENATION", [a, b], [y], {"axis": axis, "fused_activation_function": "NONE"})
            sa = shape
        else:
            n, hh, ww, cc = sa
            stride = int(rng.choice([1, 1, 2]))
            k = int(rng.choice([1, 3, 5]))
            ws = rng.uniform(0.002, 0.02, cc)
            sx = float(m._tensors[a]["scale"][0])
            wt = m.add_tensor(f"w{count}", [1, k, k, cc], "int8", data=rng.integers(-127, 128, (1, k, k, cc)),
                              scale=ws, zero_point=0, quantized_dimension=3)
            bt = m.add_tensor(f"b{count}", [cc], "int32", data=rng.integers(-500, 500, cc),
                              scale=sx * ws, zero_point=0)
            shape = [n, -(-hh // stride), -(-ww // stride), cc]
            y = new(shape)
            m.add_operator("DEPTHWISE_CONV_2D", [a, wt, bt], [y], {
                "padding": "SAME", "stride_w": stride, "stride_h": stride, "depth_multiplier": 1,
                "fused_activation_function": str(rng.choice(["NONE", "RELU6"])),
                "dilation_w_factor": 1, "dilation_h_factor": 1})
            sa = shape
        live.append((y, sa))
    # outputs: the last tensor and, sometimes, another one still live (read after the end)
    outs = [live[-1][0]]
    if rng.random() < 0.3 and len(live) > 2:
        other = live[int(rng.integers(1, len(live) - 1))][0]
        outs.append(other)
    return m.finish([x], outs)


def _plans(data: bytes, tmp_path: Path) -> tuple[int, int, set[str]]:
    """(plans checked, plans valid, kinds of sharing seen) of one graph: with and without
    shifted depthwise layers."""
    from utvm.importer import load_model
    from utvm.lower.lowering import lower_graph
    from utvm.plan.memory import _plan

    path = tmp_path / "fuzz.tflite"
    path.write_bytes(data)
    graph = load_model(path)
    valid = 0
    seen: set[str] = set()
    # the default CPU (DSP kernels: dsp_dwp runs in place) and a Cortex-M3 (generic depthwise
    # kernels writing rows in order: shifted)
    for cpu in (None, "cortex-m3"):
        lowered = lower_graph(graph, "tvmgen_f", cpu, compile_c=False)
        for shift in (False, True):
            plan = _plan(lowered, False, (), (), shift)
            problems = plan.check()
            assert problems == [], problems[0]
            valid += 1
            seen.update(t.how for t in plan.tenants)
    return 4, valid, seen


def _fuzz(seeds: range, runs: int, tmp_path: Path) -> None:
    tried = checked = valid = ran = identical = 0
    seen: dict[str, int] = {}
    for seed in seeds:
        data = random_graph(seed)
        tried += 1
        c, v, hows = _plans(data, tmp_path)
        checked, valid = checked + c, valid + v
        for how in hows:
            seen[how] = seen.get(how, 0) + 1
        if seed % (len(seeds) // runs) == 0 and ran < runs:
            work = tmp_path / f"run{seed}"
            work.mkdir()
            report = check_model(data, work)
            ran += 1
            identical += report.max_abs_diff == 0
    print(f"planner fuzz seeds {seeds.start}..{seeds.stop - 1}: {tried} graphs, {valid}/{checked} plans valid, "
          f"{identical}/{ran} run outputs identical to TFLite Micro; graphs sharing buffers by kind: "
          f"{dict(sorted(seen.items()))}")
    assert identical == ran == runs
    assert {"alias", "slot", "inplace", "shifted"} <= set(seen)  # the generator reaches every rule


def test_plan_fuzz(tmp_path: Path) -> None:
    _fuzz(range(FAST), RUN_FAST, tmp_path)


@pytest.mark.slow
def test_plan_fuzz_long(tmp_path: Path) -> None:
    _fuzz(range(FAST, TOTAL), RUN_SLOW, tmp_path)
