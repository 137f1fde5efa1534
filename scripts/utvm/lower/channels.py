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

The channel count left is rounded up to keep the largest power of two (up to 16) that divided
it, so that kernels needing channels in multiples of 4, 8 or 16 still apply.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..ir import Graph, Operator, Quant, Tensor

#: the channel counts left keep this alignment (or the power of two that divided the count)
ALIGN = 16
MACS = ("conv2d", "fully_connected")


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
        if op.kind in MACS:
            return chain
        if op.kind != "depthwise_conv2d" or op.attrs.get("depth_multiplier", 1) != 1:
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
    dropped = 0
    for c_op in g.ops:
        if c_op.kind not in MACS or not _int8_weights(view, c_op):
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
            tensors[op.inputs[1]] = _take(wt, keep, 0 if op.kind in MACS else len(wt.shape) - 1)
            tensors[op.inputs[2]] = _take(tensors[op.inputs[2]], keep, 0)
            out = tensors[op.outputs[0]]
            tensors[op.outputs[0]] = _take(out, keep, len(out.shape) - 1)
        wc = tensors[c_op.inputs[1]]
        tensors[c_op.inputs[1]] = _take(wc, keep, len(wc.shape) - 1)
        dropped += drop.size
    return view, dropped
