"""UNIDIRECTIONAL_SEQUENCE_LSTM: a long short-term memory layer over a sequence, with state.

Import: TFLite UNIDIRECTIONAL_SEQUENCE_LSTM, int8 (int8 activations and weights, int32 biases,
an int16 cell state) and float32, batch-major ([batch, time, input]) or time-major. The hidden
state (input 18) and the cell state (input 19) are variable tensors: they survive between runs
(utvm keeps them outside the pool; ``tvmgen_<name>_reset()`` zeroes them). As TFLite Micro, no
peephole, projection, layer normalisation or CIFG (coupled input and forget gates) variants:
those are refused in one line, as is the 16x8 form (int16 activations). The layer is imported
as five operators:

- four ``fully_connected`` (ops/fully_connected.py), one per gate (input, forget, cell, output):
  the input times the gate's input weights plus its bias, for every time step at once; int8:
  an int16 result in Q3.12 (scale 2**-12), TFLite Micro's input FC of the gate;
- ``lstm``: the recurrence. Per batch row and time step: each gate's recurrent FC on the hidden
  state (int16 Q3.12), added with saturation to the gate's input part, sigmoid (cell gate: tanh)
  in Q0.15 (lower/activation16.py); the cell state c = f * c + i * g (two int16 products rescaled
  to the cell scale, a saturating sum, the cell clip); the hidden state h = o * tanh(c)
  requantized to the hidden state's int8 scale and zero point, which is also the step's output.
  The kernel updates the hidden and cell states in place, as TFLite Micro does.

Semantics: TFLite Micro's unidirectional_sequence_lstm.cc and lstm_eval (integer LSTM: effective
scales of the gate FCs as GetQuantizedConvolutionMultipler computes them, the fixed gate scale
2**-12 and gate output scale float(0.00003051757), inter-gate products rescaled in double,
MultiplyByQuantizedMultiplier, the cell scale's power of two for tanh); float32 as its float
path (1 / (1 + exp(-x)) with TFLite's cut-offs, tanh).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tvm import te, tirx

from ..ir import Graph, Operator, Quant, Tensor
from ..lower import activation16 as act16
from ..lower import fixedpoint as fp
from ..lower.kerneldef import KernelArg, KernelDef
from ..lower.requant import I32, acc_bound, bias_requant, clamp, imm, scale_const
from ..lower.schedules import CHANNEL_BLOCK, interleave_rows, loop, root_schedule, seq, to_tir
from ..lower.target import Target
from .base import OpDef, OpError, SourceOp, Variant

#: TFLite Micro's scale of the gates before their activation (Q3.12) and after it (Q0.15), as
#: the float literals of its LSTM kernel (the second is not exactly 2**-15)
GATE_INPUT_SCALE = float(np.float32(0.00024414062))
GATE_OUTPUT_SCALE = float(np.float32(0.00003051757))
GATES = ("input", "forget", "cell", "output")
#: TFLite input indices: input weights 1-4, recurrent weights 5-8, biases 12-15 (gate order
#: input, forget, cell, output); the variants TFLite Micro does not support either
_INPUT_W, _RECURRENT_W, _BIAS = 1, 5, 12
_HIDDEN, _CELL = 18, 19
_VARIANTS = {"peephole weights": (9, 10, 11), "projection": (16, 17), "layer normalisation": (20, 21, 22, 23)}
_TANH = 4  # ActivationFunctionType.TANH


# ---------------------------------------------------------------------------------------------
# import


def from_tflite(ctx: Any, node: Any) -> None:
    ins = node.inputs
    if len(ins) != 24:
        raise ctx.fail(node, f"expects 24 inputs, has {len(ins)}")
    for what, indices in _VARIANTS.items():
        if any(ins[i] for i in indices):
            raise ctx.fail(node, f"LSTM with {what} is not supported (TFLite Micro has no such LSTM either)")
    if not ins[_INPUT_W] or not ins[_RECURRENT_W]:
        raise ctx.fail(node, "LSTM with coupled input and forget gates (CIFG) is not supported")
    o = ctx.options(node, "UnidirectionalSequenceLSTMOptions")
    if int(o.FusedActivationFunction()) != _TANH:
        raise ctx.fail(node, "only a TANH cell activation is supported")
    if o.DiagonalRecurrentTensors():
        raise ctx.fail(node, "diagonal recurrent weights are not supported")
    x = ctx.tensors[ins[0]]
    hidden, cell = ctx.tensors.get(ins[_HIDDEN]), ctx.tensors.get(ins[_CELL])
    if hidden is None or cell is None or not hidden.variable or not cell.variable:
        raise ctx.fail(node, "the hidden and cell states (inputs 19, 20) must be variable tensors")
    if x.dtype == "int16":
        raise ctx.fail(node, "16x8 LSTM (int16 activations) is not supported")
    if x.dtype not in ("int8", "float32"):
        raise ctx.fail(node, f"unsupported input type {x.dtype}")
    y = node.outputs[0]
    gate_inputs = []
    for k, gate in enumerate(GATES):
        w_name, b_name = ins[_INPUT_W + k], ins[_BIAS + k]
        w = ctx.tensors[w_name]
        if not b_name:
            raise ctx.fail(node, f"the {gate} gate has no bias")
        name = f"{y}:{gate}_gate_input"
        units = w.shape[0] if len(w.shape) == 2 else 0
        rows = x.size // w.shape[1] if len(w.shape) == 2 and w.shape[1] else 0
        if x.dtype == "int8":
            quant = Quant(np.array([GATE_INPUT_SCALE], np.float32), np.zeros(1, np.int32))
            ctx.tensors[name] = Tensor(name, (rows, units), "int16", quant)
        else:
            ctx.tensors[name] = Tensor(name, (rows, units), "float32")
        ctx.emit(node, "fully_connected", [ins[0], w_name, b_name], [name],
                 {"activation": "none", "int16_output": x.dtype == "int8"})
        gate_inputs.append(name)
    recurrent = [ins[_RECURRENT_W + k] for k in range(4)]
    ctx.emit(node, "lstm", gate_inputs + recurrent + [ins[_HIDDEN], ins[_CELL]], [y],
             {"time_major": bool(o.TimeMajor()), "cell_clip": float(o.CellClip()),
              "input": ins[0], "input_weights": [ins[_INPUT_W + k] for k in range(4)]})


# ---------------------------------------------------------------------------------------------
# checks


def _dims(g: Graph, op: Operator) -> tuple[int, int, int]:
    """(batch, time steps, units)."""
    x = g.tensors[op.attrs["input"]]
    units = g.tensors[op.inputs[8]].shape[-1]
    if len(x.shape) != 3:
        return 0, 0, units
    t, b = x.shape[0], x.shape[1]
    return (b, t, units) if op.attrs["time_major"] else (t, b, units)


def check(g: Graph, op: Operator) -> None:
    x = g.tensors[op.attrs["input"]]
    hidden, cell = g.tensors[op.inputs[8]], g.tensors[op.inputs[9]]
    y = g.tensors[op.outputs[0]]
    if len(x.shape) != 3:
        raise OpError(f"{op.source}: the input must be 3-D, not {list(x.shape)}")
    batch, steps, units = _dims(g, op)
    depth = x.shape[2]
    if len(hidden.shape) != 2 or hidden.shape != cell.shape or hidden.shape[0] != batch:
        raise OpError(f"{op.source}: hidden and cell states {list(hidden.shape)}, {list(cell.shape)} "
                      f"are not [{batch}, units]")
    weights = [g.tensors[n] for n in op.attrs["input_weights"] + op.inputs[4:8]]
    for k, w in enumerate(weights):
        want = (units, depth if k < 4 else units)
        if w.data is None or w.shape != want:
            raise OpError(f"{op.source}: weights {w.name} {list(w.shape)} must be a constant {list(want)}")
    lead = (steps, batch) if op.attrs["time_major"] else (batch, steps)
    if y.shape != (*lead, units) or y.dtype != x.dtype or hidden.dtype != x.dtype:
        raise OpError(f"{op.source}: output {y.dtype}{list(y.shape)}, hidden state {hidden.dtype} do not match "
                      f"the input {x.dtype}{list(x.shape)} and {units} units")
    if x.dtype == "float32":
        if cell.dtype != "float32" or any(w.dtype != "float32" for w in weights):
            raise OpError(f"{op.source}: a float32 LSTM needs float32 weights and cell state")
        return
    if cell.dtype != "int16":
        raise OpError(f"{op.source}: an int8 LSTM needs an int16 cell state, not {cell.dtype}")
    for t in [x, hidden, cell, *weights]:
        if t.dtype != ("int16" if t is cell else "int8") or t.quant is None:
            raise OpError(f"{op.source}: {t.name}: int8 LSTM tensors need quantization parameters")
        if t.quant.per_channel:
            raise OpError(f"{op.source}: {t.name}: per-channel quantization is not supported in an LSTM")
    if any(w.quant is not None and w.quant.scalar()[1] != 0 for w in weights):
        raise OpError(f"{op.source}: LSTM weights must be symmetric (zero point 0)")
    assert cell.quant is not None
    if cell.quant.scalar()[1] != 0:
        raise OpError(f"{op.source}: the cell state must have zero point 0")
    shift = _cell_power(cell.quant.scalar()[0]) + 12
    if shift > 14:
        raise OpError(f"{op.source}: cell state scale {cell.quant.scalar()[0]:g} is too large")
    for gate in op.inputs[:4]:
        b = g.tensors[gate]
        if b.dtype != "int16":
            raise OpError(f"{op.source}: gate input {b.name} must be int16")


def _cell_power(scale: float) -> int:
    """TFLite's CheckedLog2 in float32: the nearest power of two exponent of the cell scale."""
    x_log2 = np.float32(np.log(np.float32(scale))) * np.float32(np.float32(1.0) / np.float32(np.log(np.float32(2.0))))
    return int(fp.tflite_round(float(x_log2)))


def _macs(g: Graph, op: Operator) -> int:
    batch, steps, units = _dims(g, op)
    return batch * steps * 4 * units * units


# ---------------------------------------------------------------------------------------------
# kernels


def _double_scale(a: float, b: float, c: float) -> float:
    """a * b / c in double from the float32 values, as TFLite Micro's inter-gate products."""
    return float(np.float32(a)) * float(np.float32(b)) / float(np.float32(c))


def _kernel(g: Graph, op: Operator, target: Target) -> KernelDef:
    batch, steps, units = _dims(g, op)
    time_major = bool(op.attrs["time_major"])
    rows = batch * steps
    hidden, cell, y = g.tensors[op.inputs[8]], g.tensors[op.inputs[9]], g.tensors[op.outputs[0]]
    dtype = y.dtype
    integer = dtype == "int8"
    gate_dtype = "int16" if integer else "float32"
    n4 = 4 * units
    wdata = np.concatenate([g.tensors[n].data for n in op.inputs[4:8]])  # type: ignore[misc]
    mac4 = integer and target.packed and units % 4 == 0
    G = [te.placeholder((rows, units), gate_dtype, name=f"gate{k}") for k in range(4)]
    W = te.placeholder((n4 * units,), wdata.dtype, name="w")
    H = te.placeholder((batch, units), dtype, name="h")
    C = te.placeholder((batch, units), cell.dtype, name="c")
    S = te.placeholder((n4,), gate_dtype, name="gates")
    args = [KernelArg(p, tensor=n) for p, n in zip(G, op.inputs[:4])]
    args.append(KernelArg(W, constant=(interleave_rows(wdata) if mac4 else wdata).reshape(-1), role="w"))
    args += [KernelArg(H, tensor=hidden.name), KernelArg(C, tensor=cell.name),
             KernelArg(S, scratch=True, role="gates")]
    rq = None
    if integer:
        assert hidden.quant is not None and cell.quant is not None
        hs, zh = hidden.quant.scalar()
        wd = wdata.astype(np.int64)
        folded = -zh * wd.sum(axis=1)
        scales = np.repeat([fp.conv_real_multiplier(hs, g.tensors[n].quant.scalar()[0], GATE_INPUT_SCALE, False)  # type: ignore[union-attr]
                            for n in op.inputs[4:8]], units)
        rq = bias_requant(folded, scales, n4, acc_bound(np.abs(wd).sum(axis=1), np.zeros(n4, np.int64)),
                          None, target.dsp)
        table = te.placeholder((256,), "int16", name="table")
        args += rq.args + [KernelArg(table, constant=act16.TABLE_S16, role="table")]
    # the recurrence cannot be written in TE: this definition gives the kernel's signature only,
    # the body is built in TIR below
    out = te.compute((rows, units), lambda r, u: H[r % batch, u], name="out")

    def build(bufs: dict[str, tirx.Var]) -> tuple[tirx.Stmt, list[tirx.Var]]:
        gates, hb, cb, yb, wb = bufs["gates"], bufs["h"], bufs["c"], bufs["out"], bufs["w"]
        acc = tirx.decl_buffer((CHANNEL_BLOCK,), I32 if integer else "float32", "acc")

        def row_of(b: tirx.PrimExpr, t: tirx.PrimExpr) -> tirx.PrimExpr:
            return t * batch + b if time_major else b * steps + t

        def preactivations(b: tirx.PrimExpr, r: tirx.PrimExpr) -> tirx.Stmt:
            """gates[o] = the gate's input part + the recurrent FC of the hidden state, o = k U + u."""
            def value(k: int, u: tirx.PrimExpr, a: tirx.PrimExpr) -> tirx.PrimExpr:
                gin = bufs[f"gate{k}"][r, u]
                if not integer:
                    return gin + a
                assert rq is not None
                rec = clamp(to_tir(rq.apply(a, k * units + u), bufs), -32768, 32767)
                return clamp(rec + gin.astype(I32), -32768, 32767).astype("int16")

            if mac4:
                def block(k: int, ub: tirx.PrimExpr) -> tirx.Stmt:
                    o0 = k * units + ub * CHANNEL_BLOCK
                    stmts: list[tirx.Stmt] = [tirx.BufferStore(acc, imm(0), [j]) for j in range(CHANNEL_BLOCK)]
                    stmts.append(tirx.Evaluate(tirx.call_extern(
                        I32, "utvm_mac4_u_s8", tirx.address_of(acc[0]), tirx.address_of(hb[b, 0]),
                        tirx.address_of(wb[o0 * units]), imm(units // 4))))
                    stmts += [tirx.BufferStore(gates, value(k, ub * CHANNEL_BLOCK + j, acc[j]), [o0 + j])
                              for j in range(CHANNEL_BLOCK)]
                    return seq(stmts)

                return seq([loop(units // CHANNEL_BLOCK, "ub", lambda ub, k=k: block(k, ub)) for k in range(4)])

            def unit(k: int, u: tirx.PrimExpr) -> tirx.Stmt:
                o = k * units + u
                zero = imm(0) if integer else imm(0.0, "float32")

                def mac(j: tirx.Var) -> tirx.Stmt:
                    hv, wv = hb[b, j], wb[o * units + j]
                    p = hv.astype(I32) * wv.astype(I32) if integer else hv * wv
                    return tirx.BufferStore(acc, acc[0] + p, [0])

                return seq([tirx.BufferStore(acc, zero, [0]), loop(units, "j", mac),
                            tirx.BufferStore(gates, value(k, u, acc[0]), [o])])

            return seq([loop(units, "u", lambda u, k=k: unit(k, u)) for k in range(4)])

        def activations() -> tirx.Stmt:
            """Sigmoid on the input, forget and output gates, tanh on the cell gate, in place."""
            def unit(o: tirx.Var) -> tirx.Stmt:
                v = gates[o]
                if integer:
                    sv = act16.scaled_input(v.astype(I32), 0)
                    a = tirx.Select(tirx.all(o >= 2 * units, o < 3 * units), act16.tanh(bufs["table"], sv),
                                    act16.sigmoid(bufs["table"], sv))
                    return tirx.BufferStore(gates, a.astype("int16"), [o])
                a = tirx.Select(tirx.all(o >= 2 * units, o < 3 * units), tirx.tanh(v), _sigmoid_f32(v))
                return tirx.BufferStore(gates, a, [o])

            return loop(n4, "o", unit)

        def update(b: tirx.PrimExpr, r: tirx.PrimExpr) -> tirx.Stmt:
            """The new cell state, hidden state and output of one row."""
            def unit(u: tirx.Var) -> tirx.Stmt:
                i_g, f_g, c_g, o_g = (gates[k * units + u] for k in range(4))
                if integer:
                    c_new = _cell_update_int(cell, f_g, i_g, c_g, cb[b, u], op.attrs["cell_clip"])
                    h_new = _hidden_int(cell, hidden, bufs["table"], o_g, cb[b, u])
                else:
                    c_new = f_g * cb[b, u] + i_g * c_g
                    clip = float(op.attrs["cell_clip"])
                    if clip > 0:
                        c_new = clamp(c_new, imm(-clip, "float32"), imm(clip, "float32"))
                    h_new = o_g * tirx.tanh(cb[b, u])
                return seq([tirx.BufferStore(cb, c_new, [b, u]), tirx.BufferStore(hb, h_new, [b, u]),
                            tirx.BufferStore(yb, hb[b, u], [r, u])])

            return loop(units, "u", unit)

        def step(b: tirx.PrimExpr, t: tirx.PrimExpr) -> tirx.Stmt:
            r = row_of(b, t)
            return seq([preactivations(b, r), activations(), update(b, r)])

        body = loop(batch, "b", lambda b: loop(steps, "t", lambda t: step(b, t)))
        return body, [acc]

    return KernelDef(args, out, y.name, root_schedule(build))


def _sigmoid_f32(v: tirx.PrimExpr) -> tirx.PrimExpr:
    """TFLite's float Logistic: 1 above 16.619047164916992188, exp(v) below -9, else 1 / (1 + exp(-v))."""
    f = "float32"
    inner = tirx.Select(v < imm(-9.0, f), tirx.exp(v), imm(1.0, f) / (imm(1.0, f) + tirx.exp(imm(0.0, f) - v)))
    return tirx.Select(v > imm(16.619047164916992188, f), imm(1.0, f), inner)


def _cell_update_int(cell: Tensor, f_g: tirx.PrimExpr, i_g: tirx.PrimExpr, c_g: tirx.PrimExpr,
                     c_old: tirx.PrimExpr, clip: float) -> tirx.PrimExpr:
    """int16 c = sat(f * c rescaled + i * g rescaled), clipped to the quantized cell clip."""
    assert cell.quant is not None
    cs = cell.quant.scalar()[0]
    m_fc, s_fc = fp.quantize_multiplier(_double_scale(GATE_OUTPUT_SCALE, cs, cs))
    m_ig, s_ig = fp.quantize_multiplier(_double_scale(GATE_OUTPUT_SCALE, GATE_OUTPUT_SCALE, cs))
    bound = 1 << 30
    fc = clamp(scale_const(f_g.astype(I32) * c_old.astype(I32), m_fc, s_fc, bound), -32768, 32767)
    ig = clamp(scale_const(i_g.astype(I32) * c_g.astype(I32), m_ig, s_ig, bound), -32768, 32767)
    lo, hi = -32768, 32767
    if clip > 0:
        q = int(min(max(float(np.float32(clip)) / float(np.float32(cs)), -32768.0), 32767.0))
        lo, hi = max(lo, -q), min(hi, q)
    return clamp(fc + ig, lo, hi).astype("int16")


def _hidden_int(cell: Tensor, hidden: Tensor, table: tirx.Buffer, o_g: tirx.PrimExpr,
                c_new: tirx.PrimExpr) -> tirx.PrimExpr:
    """int8 h = o * tanh(c) rescaled to the hidden state's scale, plus its zero point."""
    assert cell.quant is not None and hidden.quant is not None
    hs, zh = hidden.quant.scalar()
    shift = _cell_power(cell.quant.scalar()[0]) + 12
    m, s = fp.quantize_multiplier(_double_scale(GATE_OUTPUT_SCALE, GATE_OUTPUT_SCALE, hs))
    th = act16.tanh(table, act16.scaled_input(c_new.astype(I32), shift))
    return clamp(scale_const(o_g.astype(I32) * th, m, s, 1 << 30) + zh, -128, 127).astype("int8")


OPS = (
    OpDef(
        kind="lstm",
        summary="LSTM recurrence over a sequence (gates, cell and hidden state updated in place)",
        tflite=(SourceOp("UNIDIRECTIONAL_SEQUENCE_LSTM", from_tflite,
                         constraints="hidden and cell states variable tensors; TANH cell activation; no peephole, "
                                     "projection, layer norm or CIFG (as TFLite Micro); int8: int16 cell state with "
                                     "zero point 0, per-tensor symmetric weights"),),
        variants=(Variant("generic", _kernel, types=("int8", "float32")),),
        check=check,
        reference="TFLite Micro unidirectional_sequence_lstm.cc / lstm_eval (integer LSTM with int16 cell state; "
                  "float32)",
        macs=_macs,
    ),
)
