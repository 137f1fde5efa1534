"""SVDF: a singular-value-decomposition filter layer (keyword spotting models), with state.

Import: TFLite SVDF (int8 with an int16 or int8 state and time weights, float32). The layer
keeps, per batch row and filter, the last ``memory`` feature values in its activation state, a
variable tensor that survives between runs (utvm keeps it outside the pool; the generated
``tvmgen_<name>_reset()`` sets it to its zero point). It is imported as three operators:

- ``svdf_state``: the state shifted left by one step, each filter's newest value the input
  times its feature weights (int8: rescaled to the state's quantization, clamped to the state
  type, plus the state's zero point, wrapping like TFLite Micro's cast);
- ``svdf``: per filter the time weights dotted with its memory, the ``rank`` filters of each
  unit summed with the bias, rescaled to the output (float32: the fused activation);
- ``assign`` (ops/assign.py): the new state copied over the variable tensor.

Semantics: TFLite Micro's svdf_common.cc (EvalIntegerSvdfReference, EvalFloatSvdfReference):
effective scales computed in float32 as TFLite Micro does, QuantizeMultiplier, and
MultiplyByQuantizedMultiplier.
Kernel variants of the int8 layers on DSP and Helium CPUs (then generic, TE): svdf_state
(helium / dsp_mac4: the state shifted by one copy, the feature FC four filters per
utvm_mve_mac4_s8 / utvm_mac4_u_s8 call), svdf (helium / dsp: one utvm_dot_s16 / _s8 per unit).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tvm import te, tirx

from ..ir import Graph, Operator, Tensor
from ..kernels import fixedpoint as fp
from ..kernels import mac16
from ..kernels.kerneldef import KernelArg, KernelDef
from ..kernels.requant import I32, acc_bound, clamp, float_clamp, imm, scale_const
from ..kernels.schedules import loop, reduction_schedule, root_schedule, seq
from ..kernels.target import Target
from .base import OpDef, OpError, SourceOp, Validation, Variant

_STATE_TYPES = {"int8": (-128, 127), "int16": (-32768, 32767)}


def from_tflite(ctx: Any, node: Any) -> None:
    o = ctx.options(node, "SVDFOptions")
    ins = node.inputs
    if len(ins) != 5:
        raise ctx.fail(node, f"expects 5 inputs (input, feature and time weights, bias, state), has {len(ins)}")
    x, wf, wt, bias, state = ins
    s = ctx.tensors.get(state)
    if s is None or not s.variable:
        raise ctx.fail(node, "the activation state (input 5) must be a variable tensor")
    rank = int(o.Rank())
    activation = ctx.activation(o.FusedActivationFunction(), node)
    nxt = f"{state}:next"
    ctx.tensors[nxt] = Tensor(nxt, s.shape, s.dtype, s.quant)
    ctx.emit(node, "svdf_state", [x, wf, state], [nxt], {"rank": rank})
    ctx.emit(node, "svdf", [nxt, wt] + ([bias] if bias else []), node.outputs,
             {"rank": rank, "activation": activation})
    ctx.emit(node, "assign", [nxt], [state])


def _dims(g: Graph, op: Operator) -> tuple[int, int, int, int, int]:
    """(batch, input size, filters, memory, rank) of an svdf_state or svdf operator."""
    rank = int(op.attrs["rank"])
    if op.kind == "svdf_state":
        x, wf, state = (g.tensors[n] for n in op.inputs)
        filters = wf.shape[0] if len(wf.shape) == 2 else 0
        memory = state.shape[1] // filters if filters and len(state.shape) == 2 else 0
        return x.shape[0], x.shape[-1], filters, memory, rank
    state, wt = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]]
    return state.shape[0], 0, wt.shape[0], wt.shape[1], rank


def check(g: Graph, op: Operator) -> None:
    """TFLite Micro's PrepareSvdf checks, split over the two operators."""
    batch, n_input, filters, memory, rank = _dims(g, op)
    if rank < 1 or filters < 1 or filters % rank:
        raise OpError(f"{op.source}: {filters} filters are not a multiple of rank {rank}")
    if op.kind == "svdf_state":
        x, wf, state = (g.tensors[n] for n in op.inputs)
        if len(x.shape) != 2 or len(wf.shape) != 2 or wf.shape[1] != n_input or wf.data is None:
            raise OpError(f"{op.source}: feature weights {list(wf.shape)} must be a constant [filters, {n_input}]")
        if len(state.shape) != 2 or state.shape != (batch, memory * filters) or memory < 1:
            raise OpError(f"{op.source}: state shape {list(state.shape)} is not [{batch}, memory x {filters}]")
        if x.dtype == "int8":
            if wf.dtype != "int8" or state.dtype not in _STATE_TYPES:
                raise OpError(f"{op.source}: int8 SVDF needs int8 feature weights and an int8 or int16 state")
            if x.quant is None or wf.quant is None or state.quant is None:
                raise OpError(f"{op.source}: int8 tensors without quantization parameters")
        elif not (x.dtype == wf.dtype == state.dtype == "float32"):
            raise OpError(f"{op.source}: unsupported data types {x.dtype} input, {state.dtype} state")
        return
    state, wt = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]]
    y = g.tensors[op.outputs[0]]
    b = g.tensors[op.inputs[2]] if len(op.inputs) > 2 else None
    units = filters // rank
    if len(wt.shape) != 2 or wt.data is None or state.shape[1] != filters * memory:
        raise OpError(f"{op.source}: time weights {list(wt.shape)} must be a constant [filters, memory]")
    if len(y.shape) != 2 or y.shape != (batch, units):
        raise OpError(f"{op.source}: output shape {list(y.shape)} is not [{batch}, {units}]")
    if b is not None and (b.data is None or b.size != units):
        raise OpError(f"{op.source}: the bias must be a constant of {units} values")
    if state.dtype == "float32":
        if wt.dtype != "float32" or y.dtype != "float32" or (b is not None and b.dtype != "float32"):
            raise OpError(f"{op.source}: a float32 SVDF needs float32 weights, bias and output")
        return
    if wt.dtype not in _STATE_TYPES or y.dtype != "int8" or wt.quant is None or y.quant is None:
        raise OpError(f"{op.source}: int8 SVDF needs int8 or int16 time weights and an int8 output")
    if wt.dtype != state.dtype:  # TFLite Micro reads the state with the time weights' type
        raise OpError(f"{op.source}: the state ({state.dtype}) and the time weights ({wt.dtype}) must have one type")
    if b is None or b.dtype != "int32" or b.quant is None:
        raise OpError(f"{op.source}: int8 SVDF needs an int32 bias")
    assert state.quant is not None
    if abs(float(b.quant.scalar()[0]) - float(state.quant.scalar()[0]) * float(wt.quant.scalar()[0])) >= 1e-5:
        raise OpError(f"{op.source}: the bias scale must be the state scale times the time weights' scale")


def _scale(*factors: float) -> float:
    """a * b / c in float32 as TFLite Micro computes its effective scales, widened to double."""
    a, b, c = (np.float32(f) for f in factors)
    return float(np.float32(np.float32(a * b) / c))


def _state_kernel(g: Graph, op: Operator, target: Target) -> KernelDef:
    batch, n_input, filters, memory, _ = _dims(g, op)
    x, wf, state = (g.tensors[n] for n in op.inputs)
    nxt = g.tensors[op.outputs[0]]
    X = te.placeholder((batch, n_input), x.dtype, name="x")
    W = te.placeholder((filters, n_input), wf.dtype, name="w")
    S = te.placeholder((batch, filters, memory), state.dtype, name="state")
    c = te.reduce_axis((0, n_input), "c")
    if x.dtype == "int8":
        assert x.quant and wf.quant and state.quant
        xs, zx = x.quant.scalar()
        ss, zs = state.quant.scalar()
        m, shift = fp.quantize_multiplier(_scale(xs, wf.quant.scalar()[0], ss))
        lo, hi = _STATE_TYPES[state.dtype]
        acc = te.compute((batch, filters), lambda b, r: te.sum(
            W[r, c].astype(I32) * (X[b, c].astype(I32) - zx), axis=c), name="acc")

        def newest(b: tirx.PrimExpr, r: tirx.PrimExpr) -> tirx.PrimExpr:
            v = clamp(fp.multiply_by_quantized_multiplier(acc[b, r], m, shift), lo, hi)
            return (v + zs).astype(state.dtype)  # may wrap for an int8 state, as TFLite Micro's cast
    else:
        acc = te.compute((batch, filters), lambda b, r: te.sum(W[r, c] * X[b, c], axis=c), name="acc")

        def newest(b: tirx.PrimExpr, r: tirx.PrimExpr) -> tirx.PrimExpr:
            return acc[b, r]

    last = memory - 1
    args = [KernelArg(X, tensor=x.name), KernelArg(W, tensor=wf.name)]
    if memory == 1:  # no memory to shift: the state is only written
        out = te.compute((batch, filters, 1), lambda b, r, t: newest(b, r), name="out")
    else:
        out = te.compute((batch, filters, memory), lambda b, r, t: tirx.if_then_else(
            t < last, S[b, r, te.min(t + 1, last)], newest(b, r)), name="out")
        args.append(KernelArg(S, tensor=state.name))
    return KernelDef(args, out, nxt.name, reduction_schedule("acc", "out", None, 2))


def _output_kernel(g: Graph, op: Operator, target: Target) -> KernelDef:
    batch, _, filters, memory, rank = _dims(g, op)
    units = filters // rank
    state, wt, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    b = g.tensors[op.inputs[2]] if len(op.inputs) > 2 else None
    S = te.placeholder((batch, filters, memory), state.dtype, name="state")
    W = te.placeholder((filters, memory), wt.dtype, name="w")
    args = [KernelArg(S, tensor=state.name), KernelArg(W, tensor=wt.name)]
    j = te.reduce_axis((0, rank), "j")
    t = te.reduce_axis((0, memory), "t")
    if state.dtype == "float32":
        acc = te.compute((batch, units), lambda bb, u: te.sum(
            W[u * rank + j, t] * S[bb, u * rank + j, t], axis=[j, t]), name="acc")
        if b is not None:
            B = te.placeholder((units,), "float32", name="bias")
            args.append(KernelArg(B, tensor=b.name))
            out = te.compute((batch, units), lambda bb, u: float_clamp(B[u] + acc[bb, u], op.attrs["activation"]),
                             name="out")
        else:
            out = te.compute((batch, units), lambda bb, u: float_clamp(acc[bb, u], op.attrs["activation"]),
                             name="out")
        return KernelDef(args, out, y.name, reduction_schedule("acc", "out", None, 2))
    assert state.quant and wt.quant and y.quant and b is not None
    ss, zs = state.quant.scalar()
    ys, zy = y.quant.scalar()
    m, shift = fp.quantize_multiplier(_scale(ss, wt.quant.scalar()[0], ys))
    B = te.placeholder((units,), I32, name="bias")
    args.append(KernelArg(B, tensor=b.name))
    acc = te.compute((batch, units), lambda bb, u: te.sum(
        W[u * rank + j, t].astype(I32) * (S[bb, u * rank + j, t].astype(I32) - zs), axis=[j, t]), name="acc")
    out = te.compute((batch, units), lambda bb, u: clamp(
        fp.multiply_by_quantized_multiplier(B[u] + acc[bb, u], m, shift) + zy, -128, 127).astype("int8"),
        name="out")
    return KernelDef(args, out, y.name, reduction_schedule("acc", "out", None, 2))


# ---------------------------------------------------------------------------------------
# int8 kernels for CPUs with packed lanes (the DSP extension, Helium)


def _state_fast(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    """int8 on a DSP or Helium CPU (DSP: input size a multiple of 4): per batch row the state
    shifted by one whole copy (utvm_copy_s16 / _s8: every filter's memory moves left, the
    newest slots rewritten after), then per block of four filters the feature weights dotted
    with the input (utvm_mac4_u_s8 / utvm_mve_mac4_s8, the input zero point folded into the sums'
    start), rescaled exactly (the short form where the sums' bound allows) into the newest slots."""
    batch, n_input, filters, memory, _ = _dims(g, op)
    x, wf, state = (g.tensors[n] for n in op.inputs)
    if x.dtype != "int8" or not target.packed or wf.data is None or (target.dsp and n_input % 4):
        return None
    assert x.quant and wf.quant and state.quant
    xs, zx = x.quant.scalar()
    ss, zs = state.quant.scalar()
    m, shift = fp.quantize_multiplier(_scale(xs, wf.quant.scalar()[0], ss))
    lo, hi = _STATE_TYPES[state.dtype]
    wdata = wf.data.astype(np.int64)
    rows = mac16.Rows.build(wdata, [n_input], target.helium, int8_inputs=True)
    blocks = -(-filters // mac16.BLOCK)
    start = np.zeros(blocks * mac16.BLOCK, np.int64)
    start[:filters] = -zx * wdata.sum(axis=1)
    bound = int(np.max(acc_bound(np.abs(wdata).sum(axis=1), start[:filters])))
    X = te.placeholder((batch, n_input), "int8", name="x")
    args = [KernelArg(X, tensor=x.name), KernelArg(te.placeholder(rows.data.shape, "int8", name="w"),
                                                   constant=rows.data, role="w"),
            KernelArg(te.placeholder(start.shape, I32, name="start"), constant=start.astype(np.int32), role="start")]
    if memory > 1:
        args.append(KernelArg(te.placeholder((batch, filters * memory), state.dtype, name="state"),
                              tensor=state.name))
    copy = "utvm_copy_s16" if state.dtype == "int16" else "utvm_copy_s8"

    def build(bufs: dict[str, tirx.Var]) -> tuple[tirx.Stmt, list[tirx.Buffer]]:
        xb, wb, yb = bufs["x"], bufs["w"], bufs["out"]
        acc = tirx.decl_buffer((mac16.BLOCK,), I32, "acc")

        def row(b: tirx.PrimExpr) -> tirx.Stmt:
            stmts = []
            if memory > 1:
                stmts.append(tirx.Evaluate(tirx.call_extern(I32, copy, tirx.address_of(yb[b, 0]),
                                                            tirx.address_of(bufs["state"][b, 1]),
                                                            imm(filters * memory - 1))))

            def block(oo: tirx.PrimExpr) -> tirx.Stmt:
                o0 = oo * mac16.BLOCK
                body = [tirx.BufferStore(acc, bufs["start"][o0 + k], [k]) for k in range(mac16.BLOCK)]
                body.append(rows.call(tirx.address_of(acc[0]), tirx.address_of(xb[b, 0]), wb, oo, 0))
                for k in range(mac16.BLOCK):
                    v = clamp(scale_const(acc[k], m, shift, bound), lo, hi) + zs
                    at = (o0 + k) * memory + memory - 1
                    body.append(mac16.guard(o0 + k, filters, k, tirx.BufferStore(yb, v.astype(state.dtype), [b, at])))
                return seq(body)

            return seq([*stmts, mac16.over_blocks(filters, block)])

        return loop(batch, "b", row), [acc]

    out = te.compute((batch, filters * memory), lambda b, i: X[0, 0].astype(state.dtype), name="out")  # signature
    return KernelDef(args, out, g.tensors[op.outputs[0]].name, root_schedule(build))


def _output_fast(g: Graph, op: Operator, target: Target) -> KernelDef | None:
    """int8 on a DSP or Helium CPU: per batch row and unit the rank x memory time weights dotted
    with the unit's state (contiguous) in one utvm_dot_s16 / utvm_dot_s8 call (SMLAD on pairs,
    VMLADAVA), the state zero point folded into the bias; TFLite's int32 sums (modulo 2**32)."""
    batch, _, filters, memory, rank = _dims(g, op)
    state, wt, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    b = g.tensors[op.inputs[2]] if len(op.inputs) > 2 else None
    if state.dtype == "float32" or not target.packed or wt.data is None or b is None or b.data is None:
        return None
    assert state.quant and wt.quant and y.quant
    units, depth = filters // rank, rank * memory
    ss, zs = state.quant.scalar()
    ys, zy = y.quant.scalar()
    m, shift = fp.quantize_multiplier(_scale(ss, wt.quant.scalar()[0], ys))
    w = wt.data.astype(np.int64).reshape(units, depth)
    lo = _STATE_TYPES[state.dtype][0]
    folded = b.data.astype(np.int64) - zs * w.sum(axis=1)
    bound = int(np.max(np.abs(w).sum(axis=1) * max(abs(lo - zs), abs(-lo - 1 - zs)) + np.abs(b.data.astype(np.int64))))
    wrapped = ((folded + (1 << 31)) % (1 << 32) - (1 << 31)).astype(np.int32)  # TFLite's int32 sums wrap alike
    S = te.placeholder((batch, filters * memory), state.dtype, name="state")
    args = [KernelArg(S, tensor=state.name), KernelArg(te.placeholder((units * depth,), wt.dtype, name="w"),
                                                       tensor=wt.name),
            KernelArg(te.placeholder((units,), I32, name="bias"), constant=wrapped, role="bias")]
    dot = "utvm_dot_s16" if state.dtype == "int16" else "utvm_dot_s8"

    def build(bufs: dict[str, tirx.Var]) -> tuple[tirx.Stmt, list[tirx.Buffer]]:
        sb, wb, yb = bufs["state"], bufs["w"], bufs["out"]
        acc = tirx.decl_buffer((1,), I32, "acc")  # the sum once: the requantization reads it often

        def unit(bb: tirx.PrimExpr, u: tirx.PrimExpr) -> tirx.Stmt:
            total = tirx.call_extern(I32, dot, bufs["bias"][u], tirx.address_of(sb[bb, u * depth]),
                                     tirx.address_of(wb[u * depth]), imm(depth))
            v = clamp(scale_const(acc[0], m, shift, bound) + zy, -128, 127).astype("int8")
            return seq([tirx.BufferStore(acc, total, [0]), tirx.BufferStore(yb, v, [bb, u])])

        return loop(batch, "b", lambda bb: loop(units, "u", lambda u: unit(bb, u))), [acc]

    out = te.compute((batch, units), lambda bb, u: S[0, 0].astype("int8"), name="out")  # the signature only
    return KernelDef(args, out, y.name, root_schedule(build))


def _macs(g: Graph, op: Operator) -> int:
    batch, n_input, filters, memory, _ = _dims(g, op)
    return batch * filters * (n_input if op.kind == "svdf_state" else memory)


_REFERENCE = "TFLite Micro svdf_common.cc: EvalIntegerSvdfReference (int8), EvalFloatSvdfReference (float32)"
OPS = (
    OpDef(
        kind="svdf_state",
        summary="SVDF: shift the state, append the input times the feature weights",
        tflite=(SourceOp("SVDF", from_tflite, constraints="state a variable tensor; int8 with an int8 or int16 state "
                                                           "and time weights of its type, int32 bias"),),
        variants=(Variant("helium", mac16.on_helium(_state_fast), "Cortex-M52/M55/M85"),
                  Variant("dsp_mac4", mac16.on_dsp(_state_fast), "Cortex-M4/M7/M33"),
                  Variant("generic", _state_kernel)),
        check=check,
        reference=_REFERENCE,
        macs=_macs,
    ),
    OpDef(
        kind="svdf",
        summary="SVDF: time weights over the state, rank reduction, bias, output",
        variants=(Variant("helium", mac16.on_helium(_output_fast), "Cortex-M52/M55/M85"),
                  Variant("dsp", mac16.on_dsp(_output_fast), "Cortex-M4/M7/M33"),
                  Variant("generic", _output_kernel)),
        check=check,
        reference=_REFERENCE,
        macs=_macs,
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "SVDF filters not a multiple of rank (or below 1)",
               "`TF_LITE_ENSURE_EQ(num_filters % rank, 0)` [k/svdf_common.cc:397]",
               "refused-by-TFLM", "kept"),
    Validation("check", "feature weights not a constant [filters, input size]",
               "`TF_LITE_ENSURE_EQ(NumDimensions(weights_feature), 2)`, `dims[1] == input_size` [k/svdf_common.cc:417-418]; non-constant: TFLM runs",
               "would-compute-differently", "kept: utvm packs weights at compile time (other shapes: TFLM refuses)"),
    Validation("check", "state not [batch, memory x filters]",
               "`TF_LITE_ENSURE_EQ` on the activation state's dims [k/svdf_common.cc:431-434]",
               "refused-by-TFLM", "kept"),
    Validation("check", "int8 SVDF feature weights not int8 or state not int8/int16",
               "`TF_LITE_ENSURE_EQ(weights_feature->type, kTfLiteInt8)`, state int16/int8 [k/svdf_common.cc:444-448]",
               "refused-by-TFLM", "kept"),
    Validation("check", "int8 SVDF tensors without quantization",
               "effective scales divide by the state's and output's scales (0: QuantizeMultiplier aborts) [k/svdf_common.cc:455-470]",
               "refused-by-TFLM", "kept"),
    Validation("check", "SVDF input/state types other than int8 or float32",
               "`TF_LITE_ENSURE(input float32 or int8)`, float32 weights `TF_LITE_ENSURE_EQ` [k/svdf_common.cc:402,492-493]",
               "refused-by-TFLM", "kept"),
    Validation("check", "time weights not a constant [filters, memory]",
               "`TF_LITE_ENSURE_EQ(weights_time dims)` [k/svdf_common.cc:421-423]; non-constant: TFLM runs",
               "would-compute-differently", "kept: utvm packs weights at compile time (other shapes: TFLM refuses)"),
    Validation("check", "SVDF output not [batch, units]",
               "`TF_LITE_ENSURE_EQ(output dims)` [k/svdf_common.cc:412-414]",
               "refused-by-TFLM", "kept"),
    Validation("check", "SVDF bias not a constant of units values",
               "`TF_LITE_ENSURE_EQ(bias->dims->data[0], num_units)` [k/svdf_common.cc:427]; non-constant: TFLM runs",
               "would-compute-differently", "kept: utvm folds the bias at compile time"),
    Validation("check", "float32 SVDF with non-float32 weights, bias or output",
               "`TF_LITE_ENSURE_EQ(weights type, kTfLiteFloat32)` [k/svdf_common.cc:492-493]",
               "refused-by-TFLM", "kept"),
    Validation("check", "int8 SVDF time weights not int8/int16 or output not int8",
               "`TF_LITE_ENSURE(weights_time int16/int8)`, `TF_LITE_ENSURE_TYPES_EQ(output, int8)` [k/svdf_common.cc:445,453]",
               "refused-by-TFLM", "kept"),
    Validation("check", "state and time weights of different types",
               "TFLM reads the state with the time weights' type (svdf.cc switch on weights_time->type): an int8 state read as int16 runs past its end [k/svdf.cc:70]",
               "would-compute-differently", "kept"),
    Validation("check", "int8 SVDF without an int32 bias",
               "an int32 bias if any [k/svdf_common.cc:450]; without one, Prepare dereferences `bias->params.scale` (null) [k/svdf_common.cc:464]",
               "refused-by-TFLM", "kept"),
    Validation("check", "bias scale not state scale x time weights' scale (1e-5)",
               "`TF_LITE_ENSURE(abs(bias scale - state scale * weights_time scale) < 1e-5)` [k/svdf_common.cc:464-467]",
               "refused-by-TFLM", "kept"),
    Validation("from_tflite", "SVDF without 5 inputs",
               "`TF_LITE_ENSURE_EQ(node->inputs->size, 5)` [k/svdf_common.cc:438]",
               "refused-by-TFLM", "kept", rule=True),
    Validation("from_tflite", "SVDF activation state not variable",
               "`TF_LITE_ENSURE_EQ(activation_state->is_variable, true)` [k/svdf_common.cc:436]",
               "refused-by-TFLM", "kept", rule=True),
)
