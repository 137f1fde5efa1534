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
from ..lower.requant import I32, clamp, imm, sat_s16, scale_const
from ..lower.schedules import CHANNEL_BLOCK, interleave_rows, loop, root_schedule, seq
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


#: the largest |product| of two Q0.15 gate outputs (sigmoid in [0, 32767], tanh and the cell
#: state in [-32768, 32767]): below 2**30, so their rescaling takes the short exact form
_GATE_PRODUCT_BOUND = 32767 * 32768


class _Recurrence:
    """The TIR of the ``lstm`` kernel: per batch row and time step the gates, then the cell and
    hidden states (the time loop is why the kernel is written in TIR, not TE)."""

    def __init__(self, g: Graph, op: Operator, target: Target, bufs: dict[str, tirx.Buffer]) -> None:
        self.batch, self.steps, self.units = _dims(g, op)
        self.time_major = bool(op.attrs["time_major"])
        self.clip = float(op.attrs["cell_clip"])
        self.hidden, self.cell = g.tensors[op.inputs[8]], g.tensors[op.inputs[9]]
        self.integer = self.hidden.dtype == "int8"
        self.mac4 = _uses_mac4(g, op, target)
        self.bufs = bufs
        self.acc = tirx.decl_buffer((CHANNEL_BLOCK,), I32 if self.integer else "float32", "acc")
        if self.integer:
            assert self.hidden.quant is not None
            hs, _ = self.hidden.quant.scalar()
            self.wabs = [int(np.abs(g.tensors[n].data.astype(np.int64)).sum(axis=1).max())  # type: ignore[union-attr]
                         for n in op.inputs[4:8]]
            self.requant = [fp.quantize_multiplier(fp.conv_real_multiplier(
                hs, g.tensors[n].quant.scalar()[0], GATE_INPUT_SCALE, False)) for n in op.inputs[4:8]]  # type: ignore[union-attr]

    def body(self) -> tirx.Stmt:
        return loop(self.batch, "b", lambda b: loop(self.steps, "t", lambda t: seq([
            self.gates(b, self.row(b, t)), self.update(b, self.row(b, t))])))

    def row(self, b: tirx.PrimExpr, t: tirx.PrimExpr) -> tirx.PrimExpr:
        """The row of the input and output (and of the gate inputs) at batch b, time t."""
        return t * self.batch + b if self.time_major else b * self.steps + t

    def gates(self, b: tirx.PrimExpr, r: tirx.PrimExpr) -> tirx.Stmt:
        """gates[k U + u] = activation(gate k's input part + its recurrent FC of the hidden state)."""
        units, acc, hb, wb = self.units, self.acc, self.bufs["h"], self.bufs["w"]
        if self.mac4:  # utvm_mac4_u_s8 per four rows of interleaved weights
            def block(k: int, ub: tirx.PrimExpr) -> tirx.Stmt:
                o0 = k * units + ub * CHANNEL_BLOCK
                stmts: list[tirx.Stmt] = [tirx.BufferStore(acc, imm(0), [j]) for j in range(CHANNEL_BLOCK)]
                stmts.append(tirx.Evaluate(tirx.call_extern(
                    I32, "utvm_mac4_u_s8", tirx.address_of(acc[0]), tirx.address_of(hb[b, 0]),
                    tirx.address_of(wb[o0 * units]), imm(units // 4))))
                for j in range(CHANNEL_BLOCK):
                    stmts += self.gate(k, ub * CHANNEL_BLOCK + j, r, acc[j])
                return seq(stmts)

            return seq([loop(units // CHANNEL_BLOCK, "ub", lambda ub, k=k: block(k, ub)) for k in range(4)])

        def unit(k: int, u: tirx.PrimExpr) -> tirx.Stmt:
            o = k * units + u

            def mac(j: tirx.Var) -> tirx.Stmt:
                hv, wv = hb[b, j], wb[o * units + j]
                return tirx.BufferStore(acc, acc[0] + (hv.astype(I32) * wv.astype(I32) if self.integer else hv * wv),
                                        [0])

            zero = imm(0) if self.integer else imm(0.0, "float32")
            return seq([tirx.BufferStore(acc, zero, [0]), loop(units, "j", mac), *self.gate(k, u, r, acc[0])])

        return seq([loop(units, "u", lambda u, k=k: unit(k, u)) for k in range(4)])

    def gate(self, k: int, u: tirx.PrimExpr, r: tirx.PrimExpr, acc: tirx.PrimExpr) -> list[tirx.Stmt]:
        """Store gate k's pre-activation at unit u (from the recurrent FC's accumulator), then
        its activation over it (sigmoid; tanh for the cell gate)."""
        gates, o = self.bufs["gates"], k * self.units + u
        gin = self.bufs[f"gate{k}"][r, u]
        if not self.integer:
            v = gates[o]
            act = tirx.tanh(v) if k == 2 else _sigmoid_f32(v)
            return [tirx.BufferStore(gates, gin + acc, [o]), tirx.BufferStore(gates, act, [o])]
        m, shift = self.requant[k]
        if "rbias" in self.bufs:
            acc = acc + self.bufs["rbias"][o]
        rec = scale_const(acc, m, shift, 255 * self.wabs[k])
        pre = sat_s16(sat_s16(rec) + gin.astype(I32))
        v = act16.scaled_input(gates[o].astype(I32), 0)
        table = self.bufs["table"]
        bound = act16.INT16_SCALED_MAX
        act = act16.tanh(table, v, bound) if k == 2 else act16.sigmoid(table, v, bound)
        return [tirx.BufferStore(gates, pre.astype("int16"), [o]), tirx.BufferStore(gates, act.astype("int16"), [o])]

    def update(self, b: tirx.PrimExpr, r: tirx.PrimExpr) -> tirx.Stmt:
        """Per unit: the new cell state, then the hidden state (= the output) from it."""
        gates, cb, hb, yb, units = self.bufs["gates"], self.bufs["c"], self.bufs["h"], self.bufs["out"], self.units

        def unit(u: tirx.Var) -> tirx.Stmt:
            i_g, f_g, c_g, o_g = (gates[k * units + u] for k in range(4))
            c_old, c_new = cb[b, u], cb[b, u]  # the second read follows the store below
            tanh_at = 2 * units + u  # tanh(c) replaces the cell gate, no longer needed
            if self.integer:
                stmts = [tirx.BufferStore(cb, self.cell_int(f_g, i_g, c_g, c_old), [b, u]),
                         tirx.BufferStore(gates, self.tanh_cell(c_new), [tanh_at]),
                         tirx.BufferStore(hb, self.hidden_int(o_g, gates[tanh_at]), [b, u])]
            else:
                c = f_g * c_old + i_g * c_g
                if self.clip > 0:
                    c = clamp(c, imm(-self.clip, "float32"), imm(self.clip, "float32"))
                stmts = [tirx.BufferStore(cb, c, [b, u]), tirx.BufferStore(hb, o_g * tirx.tanh(c_new), [b, u])]
            return seq([*stmts, tirx.BufferStore(yb, hb[b, u], [r, u])])

        return loop(units, "u", unit)

    def cell_int(self, f_g: tirx.PrimExpr, i_g: tirx.PrimExpr, c_g: tirx.PrimExpr, c_old: tirx.PrimExpr) -> tirx.PrimExpr:
        """int16 c = sat(f * c rescaled + i * g rescaled), clipped to the quantized cell clip."""
        assert self.cell.quant is not None
        cs = self.cell.quant.scalar()[0]
        m_fc, s_fc = fp.quantize_multiplier(_double_scale(GATE_OUTPUT_SCALE, cs, cs))
        m_ig, s_ig = fp.quantize_multiplier(_double_scale(GATE_OUTPUT_SCALE, GATE_OUTPUT_SCALE, cs))
        bound = _GATE_PRODUCT_BOUND
        fc = sat_s16(scale_const(f_g.astype(I32) * c_old.astype(I32), m_fc, s_fc, bound))
        ig = sat_s16(scale_const(i_g.astype(I32) * c_g.astype(I32), m_ig, s_ig, bound))
        c = sat_s16(fc + ig)
        if self.clip > 0:
            q = int(min(max(float(np.float32(self.clip)) / float(np.float32(cs)), -32768.0), 32767.0))
            if q < 32767:
                c = clamp(c, -q, q)
            elif q == 32767:
                c = tirx.max(c, imm(-q))
        return c.astype("int16")

    def tanh_cell(self, c: tirx.PrimExpr) -> tirx.PrimExpr:
        """Q0.15 tanh of the cell state (its scale's power of two gives the input shift)."""
        assert self.cell.quant is not None
        shift = _cell_power(self.cell.quant.scalar()[0]) + 12
        return act16.tanh(self.bufs["table"], act16.scaled_input(c.astype(I32), shift)).astype("int16")

    def hidden_int(self, o_g: tirx.PrimExpr, tanh_c: tirx.PrimExpr) -> tirx.PrimExpr:
        """int8 h = o * tanh(c) rescaled to the hidden state's scale, plus its zero point."""
        assert self.hidden.quant is not None
        hs, zh = self.hidden.quant.scalar()
        m, s = fp.quantize_multiplier(_double_scale(GATE_OUTPUT_SCALE, GATE_OUTPUT_SCALE, hs))
        v = scale_const(o_g.astype(I32) * tanh_c.astype(I32), m, s, _GATE_PRODUCT_BOUND)
        return clamp(v + zh, -128, 127).astype("int8")


def _uses_mac4(g: Graph, op: Operator, target: Target) -> bool:
    """int8 on a CPU with 4-lane dot products and a multiple of 4 units: utvm_mac4_u_s8."""
    return g.tensors[op.inputs[8]].dtype == "int8" and target.packed and _dims(g, op)[2] % 4 == 0


def _kernel(g: Graph, op: Operator, target: Target) -> KernelDef:
    batch, steps, units = _dims(g, op)
    hidden, cell, y = g.tensors[op.inputs[8]], g.tensors[op.inputs[9]], g.tensors[op.outputs[0]]
    gate_dtype = "int16" if y.dtype == "int8" else "float32"
    n4 = 4 * units
    wdata = np.concatenate([g.tensors[n].data for n in op.inputs[4:8]])  # type: ignore[misc]
    G = [te.placeholder((batch * steps, units), gate_dtype, name=f"gate{k}") for k in range(4)]
    W = te.placeholder((n4 * units,), wdata.dtype, name="w")
    H = te.placeholder((batch, units), y.dtype, name="h")
    C = te.placeholder((batch, units), cell.dtype, name="c")
    S = te.placeholder((n4,), gate_dtype, name="gates")
    args = [KernelArg(p, tensor=n) for p, n in zip(G, op.inputs[:4])]
    args.append(KernelArg(W, constant=(interleave_rows(wdata) if _uses_mac4(g, op, target) else wdata).reshape(-1),
                          role="w"))
    args += [KernelArg(H, tensor=hidden.name), KernelArg(C, tensor=cell.name),
             KernelArg(S, scratch=True, role="gates")]
    if y.dtype == "int8":
        assert hidden.quant is not None
        _, zh = hidden.quant.scalar()
        table = te.placeholder((256,), "int16", name="table")
        args.append(KernelArg(table, constant=act16.TABLE_S16, role="table"))
        if zh:  # the recurrent FCs have no bias: the hidden state's zero point folded in is theirs
            rbias = te.placeholder((n4,), I32, name="rbias")
            args.append(KernelArg(rbias, constant=(-zh * wdata.astype(np.int64).sum(axis=1)).astype(np.int32),
                                  role="rbias"))
    # the recurrence cannot be written in TE: this definition gives the kernel's signature only,
    # the body is built in TIR (_Recurrence)
    out = te.compute((batch * steps, units), lambda r, u: H[r % batch, u], name="out")

    def build(bufs: dict[str, tirx.Buffer]) -> tuple[tirx.Stmt, list[tirx.Buffer]]:
        rec = _Recurrence(g, op, target, bufs)
        return rec.body(), [rec.acc]

    return KernelDef(args, out, y.name, root_schedule(build))


def _sigmoid_f32(v: tirx.PrimExpr) -> tirx.PrimExpr:
    """TFLite's float Logistic: 1 above 16.619047164916992188, exp(v) below -9, else 1 / (1 + exp(-v))."""
    f = "float32"
    inner = tirx.Select(v < imm(-9.0, f), tirx.exp(v), imm(1.0, f) / (imm(1.0, f) + tirx.exp(imm(0.0, f) - v)))
    return tirx.Select(v > imm(16.619047164916992188, f), imm(1.0, f), inner)


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
