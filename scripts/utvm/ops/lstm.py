"""UNIDIRECTIONAL_SEQUENCE_LSTM: a long short-term memory layer over a sequence, with state.

Import: TFLite UNIDIRECTIONAL_SEQUENCE_LSTM, int8 (int8 activations and weights, int32 biases,
an int16 cell state) and float32, batch-major ([batch, time, input]) or time-major. The hidden
state (input 18) and the cell state (input 19) are variable tensors: they survive between runs
(utvm keeps them outside the pool; ``tvmgen_<name>_reset()`` sets them to their zero points). As TFLite Micro, no
peephole, projection, layer normalisation or CIFG (coupled input and forget gates) variants:
those are refused in one line, as is the 16x8 form (int16 activations). The layer imports as
one ``lstm`` operator, the recurrence: per batch row and time step, each gate's input FC and
recurrent FC (int8: each rescaled to int16 Q3.12, scale 2**-12, and saturated, then their
saturating sum; the gate bias and the input zero point in the input FC, the hidden state's zero
point in the recurrent one), sigmoid (cell gate: tanh) in Q0.15 (kernels/activation16.py); the cell
state c = f * c + i * g (two int16 products rescaled to the cell scale, a saturating sum, the
cell clip); the hidden state h = o * tanh(c) requantized to the hidden state's int8 scale and
zero point, which is also the step's output. The kernel updates the hidden and cell states in
place, as TFLite Micro does; the only other RAM is one row of gate values (pool scratch).

A float32 layer whose gates' input parts for all time steps fit in PRECOMPUTE_LIMIT bytes takes
them from four ``fully_connected`` operators (one per gate: input, forget, cell, output) run
before the recurrence, which is faster; int8 layers do not (MNIST LSTM: as fast, 720 instead of
5200 bytes of pool).

Semantics: TFLite Micro's unidirectional_sequence_lstm.cc and lstm_eval (integer LSTM: effective
scales of the gate FCs as GetQuantizedConvolutionMultipler computes them, the fixed gate scale
2**-12 and gate output scale float(0.00003051757), inter-gate products rescaled in double,
MultiplyByQuantizedMultiplier, the cell scale's power of two for tanh); float32 as its float
path (1 / (1 + exp(-x)) with TFLite's cut-offs, tanh).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from tvm import te, tirx

from ..ir import Graph, Operator, Tensor
from ..kernels import activation16 as act16
from ..kernels import fixedpoint as fp
from ..kernels import mac16
from ..kernels.kerneldef import KernelArg, KernelDef
from ..kernels.requant import I32, acc_bound, clamp, imm, sat_s16, scale_const
from ..kernels.schedules import CHANNEL_BLOCK, loop, root_schedule, seq
from ..kernels.target import Target
from .base import OpDef, OpError, SourceOp, Validation, Variant

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
#: float32: the gates' input parts of all time steps are computed before the recurrence (four
#: fully_connected operators, faster) when they take at most this many bytes of the pool; above,
#: the recurrence computes them step by step (one row of gate values in RAM, as TFLite Micro).
#: int8 always steps (utvm_mac4_u_s8 there is as fast as the layers, and the pool is far smaller)
PRECOMPUTE_LIMIT = 16384


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
    weights = [ctx.tensors[ins[_INPUT_W + k]] for k in range(4)]
    biases = [ins[_BIAS + k] for k in range(4)]
    if not all(biases):
        raise ctx.fail(node, "every gate needs a bias")
    attrs = {"time_major": bool(o.TimeMajor()), "cell_clip": float(o.CellClip()), "input": ins[0],
             "input_weights": [w.name for w in weights], "fused": False}
    recurrent = [ins[_RECURRENT_W + k] for k in range(4)] + [ins[_HIDDEN], ins[_CELL]]
    w0 = weights[0]
    units = w0.shape[0] if len(w0.shape) == 2 else 0
    rows = x.size // w0.shape[1] if len(w0.shape) == 2 and w0.shape[1] else 0
    if x.dtype == "int8" or rows * 4 * units * 4 > PRECOMPUTE_LIMIT:
        attrs["fused"] = True  # the input parts step by step inside the recurrence
        ctx.emit(node, "lstm", [ins[0], *attrs["input_weights"], *biases, *recurrent], [y], attrs)
        return
    gate_inputs = []
    for gate, w, b_name in zip(GATES, weights, biases):
        name = f"{y}:{gate}_gate_input"
        ctx.tensors[name] = Tensor(name, (rows, units), "float32")
        ctx.emit(node, "fully_connected", [ins[0], w.name, b_name], [name], {"activation": "none"})
        gate_inputs.append(name)
    ctx.emit(node, "lstm", gate_inputs + recurrent, [y], attrs)


# ---------------------------------------------------------------------------------------------
# checks


def _dims(g: Graph, op: Operator) -> tuple[int, int, int]:
    """(batch, time steps, units)."""
    x = g.tensors[op.attrs["input"]]
    units = g.tensors[op.inputs[-2]].shape[-1]
    if len(x.shape) != 3:
        return 0, 0, units
    t, b = x.shape[0], x.shape[1]
    return (b, t, units) if op.attrs["time_major"] else (t, b, units)


def check(g: Graph, op: Operator) -> None:
    x = g.tensors[op.attrs["input"]]
    hidden, cell = g.tensors[op.inputs[-2]], g.tensors[op.inputs[-1]]
    y = g.tensors[op.outputs[0]]
    if len(x.shape) != 3:
        raise OpError(f"{op.source}: the input must be 3-D, not {list(x.shape)}")
    batch, steps, units = _dims(g, op)
    depth = x.shape[2]
    if len(hidden.shape) != 2 or hidden.shape != cell.shape or hidden.shape[0] != batch:
        raise OpError(f"{op.source}: hidden and cell states {list(hidden.shape)}, {list(cell.shape)} "
                      f"are not [{batch}, units]")
    weights = [g.tensors[n] for n in op.attrs["input_weights"] + op.inputs[-6:-2]]
    for k, w in enumerate(weights):
        want = (units, depth if k < 4 else units)
        if w.data is None or w.shape != want:
            raise OpError(f"{op.source}: weights {w.name} {list(w.shape)} must be a constant {list(want)}")
    lead = (steps, batch) if op.attrs["time_major"] else (batch, steps)
    if y.shape != (*lead, units) or y.dtype != x.dtype or hidden.dtype != x.dtype:
        raise OpError(f"{op.source}: output {y.dtype}{list(y.shape)}, hidden state {hidden.dtype} do not match "
                      f"the input {x.dtype}{list(x.shape)} and {units} units")
    if op.attrs["fused"]:  # the biases are the kernel's (else the fully_connected operators')
        for b in (g.tensors[n] for n in op.inputs[5:9]):
            if b.data is None or b.size != units or b.dtype != ("int32" if x.dtype == "int8" else x.dtype):
                raise OpError(f"{op.source}: bias {b.name} must be a constant of {units} "
                              f"{'int32' if x.dtype == 'int8' else x.dtype} values")
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


def _cell_power(scale: float) -> int:
    """TFLite's CheckedLog2 in float32: the nearest power of two exponent of the cell scale."""
    x_log2 = np.float32(np.log(np.float32(scale))) * np.float32(np.float32(1.0) / np.float32(np.log(np.float32(2.0))))
    return int(fp.tflite_round(float(x_log2)))


def _macs(g: Graph, op: Operator) -> int:
    """The recurrent FCs (and the input FCs when fused; else the fully_connected operators count them)."""
    batch, steps, units = _dims(g, op)
    depth = g.tensors[op.attrs["input"]].shape[-1] if op.attrs["fused"] else 0
    return batch * steps * 4 * units * (units + depth)


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
        self.fused = bool(op.attrs["fused"])
        x = g.tensors[op.attrs["input"]]
        self.depth = x.shape[-1]
        self.hidden, self.cell = g.tensors[op.inputs[-2]], g.tensors[op.inputs[-1]]
        self.integer = self.hidden.dtype == "int8"
        self.mac4 = _gate_rows(g, op, target)
        #: Helium: the gates' requantization and activation four units at a time (utvm_mve_lstm_gate4)
        self.vector_gates = bool(target.helium and self.integer and self.fused and self.mac4[0] is not None
                                 and self.mac4[1] is not None)
        self.bufs = bufs
        acc_type = I32 if self.integer else "float32"
        self.acc = tirx.decl_buffer((CHANNEL_BLOCK,), acc_type, "acc")
        self.acc_in = tirx.decl_buffer((CHANNEL_BLOCK,), acc_type, "acc_in")
        if self.integer:
            assert self.hidden.quant is not None and x.quant is not None
            self.rec = [_GateFC(g.tensors[n], self.hidden) for n in op.inputs[-6:-2]]
            if self.fused:
                self.inp = [_GateFC(g.tensors[n], x, g.tensors[b])
                            for n, b in zip(op.attrs["input_weights"], op.inputs[5:9])]

    def body(self) -> tirx.Stmt:
        return loop(self.batch, "b", lambda b: loop(self.steps, "t", lambda t: seq([
            self.gates(b, self.row(b, t)), self.update(b, self.row(b, t))])))

    def row(self, b: tirx.PrimExpr, t: tirx.PrimExpr) -> tirx.PrimExpr:
        """The row of the input and output (and of the gate inputs) at batch b, time t."""
        return t * self.batch + b if self.time_major else b * self.steps + t

    def gates(self, b: tirx.PrimExpr, r: tirx.PrimExpr) -> tirx.Stmt:
        """gates[k U + u] = activation(gate k's input part + its recurrent FC of the hidden state),
        four units at a time where utvm_mac4_u_s8 / utvm_mve_mac4_s8 serve (weights laid out for
        them, mac16.Rows), else one."""
        units, rec_mac4, in_mac4 = self.units, self.mac4[0], self.mac4[1]
        n = CHANNEL_BLOCK if rec_mac4 is not None else 1
        hb, xb = self.bufs["h"], self.bufs.get("x")

        def block(k: int, u0: tirx.PrimExpr) -> tirx.Stmt:
            o0 = k * units + u0
            vector = self.vector_gates
            rbias = "rbias" in self.bufs and vector
            stmts = self.matvec(self.acc, lambda d: hb[b, d], self.bufs["w"], o0, n, units, rec_mac4,
                                (lambda j: self.bufs["rbias"][o0 + j]) if rbias else None)
            if self.fused:
                assert xb is not None
                stmts += self.matvec(self.acc_in, lambda d: xb[r, d], self.bufs["wi"], o0, n, self.depth, in_mac4,
                                     (lambda j: self.bufs["ibias"][o0 + j]) if vector else None)
            if vector:  # four gates at once from sums that hold their biases
                (mr, sr), (mi, si) = self.rec[k].multiplier(), self.inp[k].multiplier()
                stmts.append(tirx.Evaluate(tirx.call_extern(
                    I32, "utvm_mve_lstm_gate4", tirx.address_of(self.bufs["gates"][o0]), tirx.address_of(self.acc[0]),
                    tirx.address_of(self.acc_in[0]), imm(mr), imm(sr), imm(mi), imm(si),
                    tirx.address_of(self.bufs["table"][0]), imm(int(k == 2)))))
                return seq(stmts)
            for j in range(n):
                stmts += self.gate(k, u0 + j, r, j)
            return seq(stmts)

        return seq([loop(units // n, "ub", lambda ub, k=k: block(k, ub * n)) for k in range(4)])

    def matvec(self, acc: tirx.Buffer, vec: Any, w: tirx.Buffer, o0: tirx.PrimExpr, n: int, depth: int,
               rows: mac16.Rows | None, start: Any = None) -> list[tirx.Stmt]:
        """acc[j] = the dot product of the vector (``vec(d)``) with weight row o0 + j, j < n (plus
        ``start(j)``, a bias, when given): one helper call for four rows (``rows``: their layout),
        else a loop per row."""
        zero = imm(0) if self.integer else imm(0.0, "float32")
        stmts: list[tirx.Stmt] = [tirx.BufferStore(acc, zero if start is None else start(j), [j]) for j in range(n)]
        if rows is not None:
            stmts.append(rows.call(tirx.address_of(acc[0]), tirx.address_of(vec(imm(0))), w, o0 // CHANNEL_BLOCK, 0))
            return stmts
        for j in range(n):
            def mac(d: tirx.Var, j: int = j) -> tirx.Stmt:
                xv, wv = vec(d), w[(o0 + j) * depth + d]
                return tirx.BufferStore(acc, acc[j] + (xv.astype(I32) * wv.astype(I32) if self.integer else xv * wv),
                                        [j])

            stmts.append(loop(depth, "d", mac))
        return stmts

    def gate(self, k: int, u: tirx.PrimExpr, r: tirx.PrimExpr, j: int) -> list[tirx.Stmt]:
        """Store gate k's pre-activation at unit u (from the accumulators at j), then its
        activation over it (sigmoid; tanh for the cell gate)."""
        gates, o = self.bufs["gates"], k * self.units + u
        acc = self.acc[j]
        if self.fused:
            ib = self.bufs["ibias"][o]
            gin = (self.acc_in[j] + ib if not self.integer else
                   sat_s16(self.inp[k].requant(self.acc_in[j] + ib)))
        else:  # float32 only
            gin = self.bufs[f"gate{k}"][r, u]
        if not self.integer:
            v = gates[o]
            act = tirx.tanh(v) if k == 2 else _sigmoid_f32(v)
            return [tirx.BufferStore(gates, gin + acc, [o]), tirx.BufferStore(gates, act, [o])]
        if "rbias" in self.bufs:
            acc = acc + self.bufs["rbias"][o]
        pre = sat_s16(sat_s16(self.rec[k].requant(acc)) + gin.astype(I32))
        v = act16.scaled_input(gates[o].astype(I32), 0)
        table = self.bufs["table"]
        bound = act16.INT16_SCALED_MAX
        act = act16.tanh(table, v, bound) if k == 2 else act16.sigmoid(table, v, bound)
        return [tirx.BufferStore(gates, pre.astype("int16"), [o]), tirx.BufferStore(gates, act.astype("int16"), [o])]

    def update(self, b: tirx.PrimExpr, r: tirx.PrimExpr) -> tirx.Stmt:
        """Per unit: the new cell state, then the hidden state (= the output) from it (Helium:
        four units per utvm_mve_lstm_update4 call)."""
        gates, cb, hb, yb, units = self.bufs["gates"], self.bufs["c"], self.bufs["h"], self.bufs["out"], self.units
        if self.vector_gates:
            assert self.cell.quant is not None
            consts = (*self.cell_params(), _cell_power(self.cell.quant.scalar()[0]) + 12, *self.hidden_params())

            def four(ub: tirx.Var) -> tirx.Stmt:
                u0 = ub * CHANNEL_BLOCK
                return tirx.Evaluate(tirx.call_extern(
                    I32, "utvm_mve_lstm_update4", *(tirx.address_of(gates[k * units + u0]) for k in range(4)),
                    tirx.address_of(cb[b, u0]), tirx.address_of(hb[b, u0]), tirx.address_of(yb[r, u0]),
                    *(imm(v) for v in consts), tirx.address_of(self.bufs["table"][0])))

            return loop(units // CHANNEL_BLOCK, "ub", four)

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

    def cell_params(self) -> tuple[int, int, int, int, int, int]:
        """(f * c multiplier, shift, i * g multiplier, shift, cell clip low, high) of the int16 cell."""
        assert self.cell.quant is not None
        cs = self.cell.quant.scalar()[0]
        m_fc, s_fc = fp.quantize_multiplier(_double_scale(GATE_OUTPUT_SCALE, cs, cs))
        m_ig, s_ig = fp.quantize_multiplier(_double_scale(GATE_OUTPUT_SCALE, GATE_OUTPUT_SCALE, cs))
        lo, hi = -32768, 32767
        if self.clip > 0:
            q = int(min(max(float(np.float32(self.clip)) / float(np.float32(cs)), -32768.0), 32767.0))
            lo, hi = -q, min(q, 32767)
        return m_fc, s_fc, m_ig, s_ig, lo, hi

    def cell_int(self, f_g: tirx.PrimExpr, i_g: tirx.PrimExpr, c_g: tirx.PrimExpr, c_old: tirx.PrimExpr) -> tirx.PrimExpr:
        """int16 c = sat(f * c rescaled + i * g rescaled), clipped to the quantized cell clip."""
        m_fc, s_fc, m_ig, s_ig, lo, hi = self.cell_params()
        bound = _GATE_PRODUCT_BOUND
        fc = sat_s16(scale_const(f_g.astype(I32) * c_old.astype(I32), m_fc, s_fc, bound))
        ig = sat_s16(scale_const(i_g.astype(I32) * c_g.astype(I32), m_ig, s_ig, bound))
        c = sat_s16(fc + ig)
        if hi < 32767:
            c = clamp(c, lo, hi)
        elif lo > -32768:
            c = tirx.max(c, imm(lo))
        return c.astype("int16")

    def tanh_cell(self, c: tirx.PrimExpr) -> tirx.PrimExpr:
        """Q0.15 tanh of the cell state (its scale's power of two gives the input shift)."""
        assert self.cell.quant is not None
        shift = _cell_power(self.cell.quant.scalar()[0]) + 12
        return act16.tanh(self.bufs["table"], act16.scaled_input(c.astype(I32), shift)).astype("int16")

    def hidden_params(self) -> tuple[int, int, int]:
        """(o * tanh(c) multiplier, shift, hidden zero point) of the int8 hidden state."""
        assert self.hidden.quant is not None
        hs, zh = self.hidden.quant.scalar()
        return (*fp.quantize_multiplier(_double_scale(GATE_OUTPUT_SCALE, GATE_OUTPUT_SCALE, hs)), zh)

    def hidden_int(self, o_g: tirx.PrimExpr, tanh_c: tirx.PrimExpr) -> tirx.PrimExpr:
        """int8 h = o * tanh(c) rescaled to the hidden state's scale, plus its zero point."""
        m, s, zh = self.hidden_params()
        v = scale_const(o_g.astype(I32) * tanh_c.astype(I32), m, s, _GATE_PRODUCT_BOUND)
        return clamp(v + zh, -128, 127).astype("int8")


@dataclass
class _GateFC:
    """One int8 gate FC of TFLite Micro's integer LSTM: weights times an int8 vector (the input
    or the hidden state) plus the bias, rescaled to the gate scale 2**-12 (int16, saturated by
    the caller)."""

    weights: Tensor
    vector: Tensor
    bias: Tensor | None = None

    def multiplier(self) -> tuple[int, int]:
        """TFLite's (multiplier, shift) of the FC's rescaling to the gate scale."""
        assert self.weights.quant is not None and self.vector.quant is not None
        return fp.quantize_multiplier(fp.conv_real_multiplier(self.vector.quant.scalar()[0],
                                                              self.weights.quant.scalar()[0], GATE_INPUT_SCALE, False))

    def requant(self, acc: tirx.PrimExpr) -> tirx.PrimExpr:
        """MultiplyByQuantizedMultiplier of ``acc`` (the folded bias included)."""
        assert self.weights.data is not None
        m, shift = self.multiplier()
        wabs = np.abs(self.weights.data.astype(np.int64)).sum(axis=1)
        bias = self.bias.data if self.bias is not None and self.bias.data is not None else np.zeros_like(wabs)
        return scale_const(acc, m, shift, int(np.max(acc_bound(wabs, bias))))


def _rows(g: Graph, names: list[str], target: Target) -> mac16.Rows | None:
    """The four gates' weights (rows one after the other) laid out for four rows per helper call:
    int8 on a CPU with packed lanes, a multiple of 4 units (whole blocks in a gate), on a DSP CPU
    a multiple of 4 inputs too (utvm_mac4_u_s8; Helium: utvm_mve_mac4_s8, any); else None."""
    ws = [g.tensors[n] for n in names]
    if not ws or ws[0].dtype != "int8" or not target.packed or ws[0].shape[0] % 4:
        return None
    depth = ws[0].shape[1]
    if target.dsp and depth % 4:
        return None
    w = np.concatenate([t.data for t in ws])  # type: ignore[misc]
    return mac16.Rows.build(w, [depth], target.helium, int8_inputs=True)


def _gate_rows(g: Graph, op: Operator, target: Target) -> tuple[mac16.Rows | None, mac16.Rows | None]:
    """The layouts of the recurrent and the input weights (see :func:`_rows`); the input FCs
    take four units at a time only with the recurrent ones."""
    rec = _rows(g, op.inputs[-6:-2], target)
    return rec, (_rows(g, op.attrs["input_weights"], target) if rec is not None and op.attrs["fused"] else None)


def _weights(g: Graph, names: list[str], rows: mac16.Rows | None) -> np.ndarray:
    """The four gates' weights one after the other, flat (``rows``: in that layout)."""
    if rows is not None:
        return rows.data
    return np.concatenate([g.tensors[n].data for n in names]).reshape(-1)  # type: ignore[misc]


def _kernel(g: Graph, op: Operator, target: Target) -> KernelDef:
    batch, steps, units = _dims(g, op)
    hidden, cell, y = g.tensors[op.inputs[-2]], g.tensors[op.inputs[-1]], g.tensors[op.outputs[0]]
    x = g.tensors[op.attrs["input"]]
    gate_dtype = "int16" if y.dtype == "int8" else "float32"
    n4, rows = 4 * units, batch * steps
    rec_rows, in_rows = _gate_rows(g, op, target)
    wrec = _weights(g, op.inputs[-6:-2], rec_rows)
    args = []
    if op.attrs["fused"]:
        wi = _weights(g, op.attrs["input_weights"], in_rows)
        bias = np.concatenate([g.tensors[n].data for n in op.inputs[5:9]])  # type: ignore[misc]
        if y.dtype == "int8":
            assert x.quant is not None
            wsum = np.concatenate([g.tensors[n].data.astype(np.int64).sum(axis=1)  # type: ignore[union-attr]
                                   for n in op.attrs["input_weights"]])
            bias = (bias.astype(np.int64) - x.quant.scalar()[1] * wsum).astype(np.int32)  # input zero point folded
        args += [KernelArg(te.placeholder((rows, x.shape[-1]), x.dtype, name="x"), tensor=x.name),
                 KernelArg(te.placeholder(wi.shape, wi.dtype, name="wi"), constant=wi, role="wi"),
                 KernelArg(te.placeholder(bias.shape, str(bias.dtype), name="ibias"), constant=bias, role="ibias")]
    else:
        args += [KernelArg(te.placeholder((rows, units), "float32", name=f"gate{k}"), tensor=n)
                 for k, n in enumerate(op.inputs[:4])]
    H = te.placeholder((batch, units), y.dtype, name="h")
    args += [KernelArg(te.placeholder(wrec.shape, wrec.dtype, name="w"), constant=wrec, role="w"),
             KernelArg(H, tensor=hidden.name),
             KernelArg(te.placeholder((batch, units), cell.dtype, name="c"), tensor=cell.name),
             KernelArg(te.placeholder((n4,), gate_dtype, name="gates"), scratch=True, role="gates")]
    if y.dtype == "int8":
        assert hidden.quant is not None
        _, zh = hidden.quant.scalar()
        args.append(KernelArg(te.placeholder((256,), "int16", name="table"), constant=act16.TABLE_S16, role="table"))
        if zh:  # the recurrent FCs have no bias: the hidden state's zero point folded in is theirs
            wsum = np.concatenate([g.tensors[n].data.astype(np.int64).sum(axis=1)  # type: ignore[union-attr]
                                   for n in op.inputs[-6:-2]])
            args.append(KernelArg(te.placeholder((n4,), I32, name="rbias"), constant=(-zh * wsum).astype(np.int32),
                                  role="rbias"))
    # the recurrence cannot be written in TE: this definition gives the kernel's signature only,
    # the body is built in TIR (_Recurrence)
    out = te.compute((rows, units), lambda r, u: H[r % batch, u], name="out")

    def build(bufs: dict[str, tirx.Buffer]) -> tuple[tirx.Stmt, list[tirx.Buffer]]:
        rec = _Recurrence(g, op, target, bufs)
        return rec.body(), [rec.acc, rec.acc_in]

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

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "UNIDIRECTIONAL_SEQUENCE_LSTM input not 3-D",
               "`TF_LITE_ENSURE_EQ(input dims, 3)` (ValidateTensorSize) [k/lstm_eval_common.cc]",
               "refused-by-TFLM", "kept"),
    Validation("check", "hidden/cell states not [batch, units]",
               "`TF_LITE_ENSURE_EQ(NumElements(hidden/cell state), batch * units)` [k/lstm_eval_common.cc:85-87]",
               "refused-by-TFLM", "kept"),
    Validation("check", "a gate weight not a constant [units, depth] / [units, units]",
               "ValidateWeightTensorSize: `TF_LITE_ENSURE_EQ` dims [k/lstm_eval_common.cc:43-45]; non-constant weights run in TFLM",
               "would-compute-differently", "kept: utvm packs weights at compile time (other shapes: TFLM refuses)"),
    Validation("check", "output / hidden state shape or type does not match",
               "`TF_LITE_ENSURE_EQ(output dims 3, ...)` [k/lstm_eval_common.cc:91-98]; types: the type switch [k/unidirectional_sequence_lstm.cc:153]",
               "refused-by-TFLM", "kept"),
    Validation("check", "a gate bias not a constant of units values of the right type",
               "ValidateBiasTensorSize `TF_LITE_ENSURE_EQ` [k/lstm_eval_common.cc:51-52]; type: the kernel reads int32 [k/unidirectional_sequence_lstm.cc]",
               "refused-by-TFLM", "kept"),
    Validation("check", "float32 LSTM with non-float32 weights or cell",
               '`MicroPrintf("Filter type %s (%d) not supported.")` [k/unidirectional_sequence_lstm.cc:127,145]',
               "refused-by-TFLM", "kept"),
    Validation("check", "int8 LSTM cell state not int16",
               "the int8 path is the 8x8->16 kernel: other cell types `MicroPrintf(... not supported)` [k/unidirectional_sequence_lstm.cc:145]",
               "refused-by-TFLM", "kept"),
    Validation("check", "int8 LSTM tensor not int8 (cell int16) or without quantization",
               "filter type switch [k/unidirectional_sequence_lstm.cc:127]; CalculateOpDataFullyConnected needs affine quantization [k/fully_connected_common.cc:74]",
               "refused-by-TFLM", "kept"),
    Validation("check", "per-channel LSTM tensor (ONNX only: TFLite tensors of an LSTM are read per tensor, first scale)",
               "unreachable from TFLite (see *Left*: TFLM's gates take one multiplier)",
               "would-compute-differently", "kept"),
    Validation("check", "LSTM weights with a zero point",
               "the gates' FullyConnected takes no weights offset in TFLM's integer LSTM (symmetric weights) [k/lstm_eval.h]",
               "would-compute-differently", "kept: utvm's gates would subtract it"),
    Validation("check", "cell state zero point not 0",
               "the integer LSTM assumes a symmetric cell (CalculateLstmGateInteger, zero point never read) [k/lstm_eval.cc]",
               "would-compute-differently", "kept"),
    Validation("check", "cell state scale too large (shift above 14)",
               "no check; CheckedLog2 of the cell scale feeds the cell tanh's shift, which goes negative (UB shift) [k/lstm_eval_common.cc:182-188, lstm_eval.h:370]",
               "would-compute-differently", "kept"),
    Validation("from_tflite", "UNIDIRECTIONAL_SEQUENCE_LSTM without 24 inputs",
               "`TF_LITE_ENSURE_EQ(node->inputs->size, 24)` [k/unidirectional_sequence_lstm.cc:46]",
               "refused-by-TFLM", "kept", rule=True),
    Validation("from_tflite", "LSTM with peephole, projection or layer-norm tensors",
               "`TF_LITE_ENSURE(internal_tensors_[i] == nullptr)` for 9-11, 16-17, 20-23 [k/lstm_eval.cc:87-99]",
               "refused-by-TFLM", "kept", rule=True),
    Validation("from_tflite", "LSTM with coupled input and forget gates (no input weights)",
               "`TF_LITE_ENSURE(internal_tensors_[i] != nullptr)` for weights 1-8 [k/lstm_eval.cc:79]",
               "refused-by-TFLM", "kept", rule=True),
    Validation("from_tflite", "LSTM cell activation other than TANH",
               "SIGMOID runs, others hit `TFLITE_ASSERT_FALSE` [k/lstm_eval.h:299-310]",
               "would-compute-differently", "kept: utvm's cell update is tanh only (SIGMOID: a kernel gap)", rule=True),
    Validation("from_tflite", "LSTM with diagonal recurrent weights",
               "the weight shape check refuses 1-D recurrent weights (ValidateWeightTensorSize, `TF_LITE_ENSURE_EQ(dims->size, 2)`) [k/lstm_eval_common.cc:43]",
               "refused-by-TFLM", "kept", rule=True),
    Validation("from_tflite", "LSTM states (inputs 19, 20) not variable",
               "`TF_LITE_ENSURE(...->is_variable)` for both [k/lstm_eval.cc:61-68]",
               "refused-by-TFLM", "kept", rule=True),
    Validation("from_tflite", "16x8 LSTM (int16 activations)",
               "runs (EvalLstm<int16_t, int8_t, int16_t, int64_t>) [k/unidirectional_sequence_lstm.cc:134-140]",
               "would-compute-differently", "kept: no utvm kernel (a feature gap)", rule=True),
    Validation("from_tflite", "LSTM input type other than float32/int8",
               '`MicroPrintf("Input type %s (%d) not supported.")` for others than float32/int8/int16 [k/unidirectional_sequence_lstm.cc:153]',
               "refused-by-TFLM", "kept", rule=True),
    Validation("from_tflite", "LSTM gate without a bias",
               "`TF_LITE_ENSURE(internal_tensors_[i] != nullptr)` for biases 12-15 [k/lstm_eval.cc:84]",
               "refused-by-TFLM", "kept", rule=True),
)
