"""Channels that cannot change a model's outputs, dropped before lowering (every CPU).

A convolution or fully connected layer C whose weights are all zero on input channel j never
reads that channel. When the channel reaches C only through depthwise layers (multiplier 1:
channel j of their output depends on channel j of their input only) from a producer P (a
convolution or fully connected layer) and every tensor between P and C feeds only the next
layer, channel j is dropped everywhere on the way: P's weights, bias and per-channel scales,
the depthwise layers' ones, and C's weights on that input. Every output of the model stays
bit-exact: C's accumulators never saw the channel (its weights there are zero), and no other
operator reads it. Pruned models (VWW) lose most of their weights' bytes on every CPU, not only
where a kernel skips channels of zero weights.

An output channel of a convolution or fully connected layer P whose weights are all zero is a
constant (its requantized bias). When it reaches a layer C only through average pools without
padding (a constant's average is itself) and reshapes that keep the channel axis, and C is a
fully connected layer or an unpadded 1x1 convolution, C's bias takes the constant's product
with C's weights on that channel (TFLite's accumulator, exactly) and the channel is dropped
from P, the tensors on the way and C's weights: VWW's last convolution keeps 32 of 256.

Which operators are such layers, depthwise layers, average pools or reshapes is each operator's
own declaration (``OpDef.channels``, :class:`utvm.ops.Channels`).

The channel count left is rounded up to keep the largest power of two (up to 16) that divided
it, so that kernels needing channels in multiples of 4, 8 or 16 still apply.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..ir import Graph, Operator, Quant, Tensor
from ..kernels import fixedpoint as fp
from ..kernels.helium import requant_params
from ..kernels.requant import activation_range_int8
from ..ops import Channels, get

#: the channel counts left keep this alignment (or the power of two that divided the count)
ALIGN = 16


def _channels(op: Operator) -> Channels | None:
    opdef = get(op.kind)
    return opdef.channels if opdef is not None else None


def _role(g: Graph, op: Operator, role: str) -> bool:
    """The operator declares ``role`` (see :class:`utvm.ops.Channels`) and its condition holds
    (for "mac": a constant input channel folds into its bias)."""
    c = _channels(op)
    return c is not None and c.role == role and (c.when is None or c.when(g, op))


def _mac(op: Operator) -> bool:
    c = _channels(op)
    return c is not None and c.role == "mac"


def _alignment(c: int) -> int:
    a = 1
    while a < ALIGN and c % (2 * a) == 0:
        a *= 2
    return a


def _int8_weights(g: Graph, op: Operator) -> bool:
    x, w = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]]
    return x.dtype == "int8" and w.dtype == "int8" and w.data is not None and len(op.inputs) >= 2


def _chain(g: Graph, c_op: Operator, consumers: dict[str, list[Operator]],
           producer: dict[str, Operator]) -> list[Operator] | None:
    """The operators from C's producer P (first) through the depthwise layers between them, or
    None when channel j of C's input is not P's channel j alone or is read elsewhere."""
    chain: list[Operator] = []
    name = c_op.inputs[0]
    while True:
        if name in g.outputs or name in g.inputs or len(consumers.get(name, [])) != 1:
            return None
        op = producer.get(name)
        if op is None or len(op.outputs) != 1 or len(op.inputs) < 3 or not _int8_weights(g, op):
            return None
        if g.tensors[op.inputs[2]].data is None or g.tensors[name].quant is None \
                or g.tensors[name].quant.per_channel:
            return None
        chain.insert(0, op)
        if _mac(op):
            return chain
        if not _role(g, op, "depthwise"):
            return None
        name = op.inputs[0]


def _take(t: Tensor, keep: np.ndarray, axis: int) -> Tensor:
    """``t`` with only the channels ``keep`` along ``axis`` (data, shape, per-channel quant)."""
    shape = list(t.shape)
    shape[axis] = keep.size
    data = None if t.data is None else np.ascontiguousarray(np.take(t.data, keep, axis=axis))
    quant = t.quant
    if quant is not None and quant.per_channel and quant.axis % len(t.shape) == axis:
        quant = Quant(quant.scale[keep], quant.zero_point[keep] if quant.zero_point.size > 1 else quant.zero_point,
                      quant.axis)
    return replace(t, shape=tuple(shape), data=data, quant=quant)


def _to_consumer(g: Graph, name: str, consumers: dict[str, list[Operator]]) -> tuple[list[Operator], int, int] | None:
    """From P's output ``name``: the average pools and reshapes on the way to a layer C (last),
    and the clamp of the pools' activations, or None where a constant channel would not reach C
    as itself (see the module)."""
    chain: list[Operator] = []
    lo, hi = -128, 127
    while True:
        users = consumers.get(name, [])
        if name in g.outputs or len(users) != 1:
            return None
        op = users[0]
        x, y = g.tensors[name], g.tensors[op.outputs[0]]
        if op.inputs[0] != name or x.quant is None or y.quant is None or x.quant.per_channel or x.dtype != "int8" \
                or (not _mac(op) and x.shape[-1] != y.shape[-1]):
            return None
        chain.append(op)
        same = x.quant.scalar() == y.quant.scalar()
        if _mac(op):
            ok = _int8_weights(g, op) and len(op.inputs) > 2 and g.tensors[op.inputs[2]].data is not None \
                and len(consumers.get(op.inputs[2], [])) == 1 and _role(g, op, "mac")
            return (chain, lo, hi) if ok else None
        if not same or not _role(g, op, "passes"):
            return None
        alo, ahi = activation_range_int8(op.attrs.get("activation", "none"), *y.quant.scalar())
        lo, hi = max(lo, alo), min(hi, ahi)
        name = op.outputs[0]


def _fold_constants(tensors: dict[str, Tensor], view: Graph, consumers: dict[str, list[Operator]]) -> int:
    """Drop the constant output channels that fold into a later layer's bias (see the module);
    returns how many."""
    dropped = 0
    for p_op in view.ops:
        if not _mac(p_op) or len(p_op.outputs) != 1 or len(p_op.inputs) < 3 or not _int8_weights(view, p_op):
            continue
        x, w, b, y = (tensors[n] for n in (*p_op.inputs[:3], p_op.outputs[0]))
        assert w.data is not None
        cout = w.shape[0]
        dead = np.flatnonzero(~np.any(w.data.reshape(cout, -1) != 0, axis=1))
        path = _to_consumer(view, p_op.outputs[0], consumers)
        if dead.size == 0 or path is None or b.data is None or y.quant is None or y.quant.per_channel \
                or y.shape[-1] != cout or w.quant is None or np.any(w.quant.zero_point != 0):
            continue
        chain, plo, phi = path
        params = requant_params(x, w, y, b, np.zeros(cout, np.int64), cout)
        if params is None:
            continue
        zy = y.quant.scalar()[1]
        lo, hi = activation_range_int8(p_op.attrs.get("activation", "none"), *y.quant.scalar())
        value = np.clip(fp.np_multiply_by_quantized_multiplier(*params) + zy, max(lo, plo), min(hi, phi))
        c_op = chain[-1]
        wc, bc = tensors[c_op.inputs[1]], tensors[c_op.inputs[2]]
        assert wc.data is not None and bc.data is not None
        a = _alignment(cout)
        keep_n = -(-(cout - dead.size) // a) * a
        drop = dead[:cout - keep_n]
        if drop.size == 0:
            continue
        wmat = wc.data.reshape(-1, cout).astype(np.int64)
        bias = bc.data.astype(np.int64).reshape(-1) + wmat[:, drop] @ (value[drop].astype(np.int64) - zy)
        if bias.size != wmat.shape[0] or np.any(np.abs(bias) >= 1 << 31):
            continue
        keep = np.setdiff1d(np.arange(cout), drop)
        tensors[p_op.inputs[1]] = _take(w, keep, 0)
        tensors[p_op.inputs[2]] = _take(b, keep, 0)
        for n in [p_op.outputs[0]] + [op.outputs[0] for op in chain[:-1]]:
            tensors[n] = _take(tensors[n], keep, len(tensors[n].shape) - 1)
        tensors[c_op.inputs[1]] = _take(wc, keep, len(wc.shape) - 1)
        tensors[c_op.inputs[2]] = replace(bc, data=bias.astype(bc.data.dtype).reshape(bc.data.shape))
        dropped += drop.size
    return dropped


def drop_channels(g: Graph) -> tuple[Graph, int]:
    """A copy of ``g`` without the channels that only meet zero weights (see the module), and
    how many channels were dropped; ``g`` itself is not changed."""
    tensors = dict(g.tensors)
    view = replace(g, tensors=tensors)
    consumers: dict[str, list[Operator]] = {}
    producer: dict[str, Operator] = {}
    for op in g.ops:
        for i in op.inputs:
            consumers.setdefault(i, []).append(op)
        for o in op.outputs:
            producer[o] = op
    dropped = _fold_constants(tensors, view, consumers)
    for c_op in g.ops:
        if not _mac(c_op) or not _int8_weights(view, c_op):
            continue
        w = tensors[c_op.inputs[1]].data
        assert w is not None
        cin = w.shape[-1]
        if len(tensors[c_op.inputs[0]].shape) < 2 or tensors[c_op.inputs[0]].shape[-1] != cin:
            continue
        dead = np.flatnonzero(~np.any(w.reshape(-1, cin) != 0, axis=0))
        chain = _chain(view, c_op, consumers, producer)
        if chain is None or dead.size == 0:
            continue
        a = _alignment(cin)
        keep_n = -(-(cin - dead.size) // a) * a
        drop = dead[:cin - keep_n]
        if drop.size == 0:
            continue
        keep = np.setdiff1d(np.arange(cin), drop)
        for op in chain:
            wt = tensors[op.inputs[1]]
            tensors[op.inputs[1]] = _take(wt, keep, 0 if _mac(op) else len(wt.shape) - 1)
            tensors[op.inputs[2]] = _take(tensors[op.inputs[2]], keep, 0)
            out = tensors[op.outputs[0]]
            tensors[op.outputs[0]] = _take(out, keep, len(out.shape) - 1)
        wc = tensors[c_op.inputs[1]]
        tensors[c_op.inputs[1]] = _take(wc, keep, len(wc.shape) - 1)
        dropped += drop.size
    return view, dropped
