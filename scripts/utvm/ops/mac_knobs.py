"""The tuning knobs that the MAC layers' DSP kernels share (conv2d, fully_connected,
transpose_conv): weights widened to int16 ahead of time (dsp_mac4, dsp_int16, dsp_gemm) and
dsp_gemm's rows widened into scratch; the knob spaces the variants declare (``Variant.knobs``),
the defaults without a tuned configuration and what a configuration asks for."""

from __future__ import annotations

from typing import Any

from ..ir import Graph, Operator
from ..kernels.dsp import SMALL_QUADS, Geometry, widen_applies
from ..kernels.target import Target
from .base import knob


def mac4_knobs(g: Graph, op: Operator, target: Target) -> dict[str, tuple[Any, ...]]:
    """The dsp_mac4 (and 16x8 dsp_int16) variants' knob: the weights as stored (int8) or widened
    to int16 ahead of time (twice their flash; utvm_mac4w_s8, 15 instead of 21 instructions per 16
    multiply-accumulates; utvm_mac4w_s16, 14 instead of 20)."""
    return {"weights": ("int8", "int16")}


def wide_weights(op: Operator) -> bool:
    """The tuned configuration asks for weights widened to int16 (see :func:`mac4_knobs`)."""
    return knob(op, "weights", "int8") == "int16"


#: dsp_gemm widens a layer's weights to int16 by default only where that costs at most
#: WIDEN_BYTES of flash and saves at least WIDEN_ROWS / 2 instructions per byte it adds (int8
#: weights take 8 more instructions per quad and block of four channels, once per output row:
#: about rows / 2 per weight byte), e.g. VWW's first layers on 48 x 48 maps, or its rows are
#: short enough to stay in registers (SMALL_QUADS: the small kernels take int16 weights only,
#: AD's 8-input layer); elsewhere int8
WIDEN_BYTES, WIDEN_ROWS = 1024, 64
#: rows of at most SHORT_K inputs widen at any size: int8 weights cost 8 instructions per quad and
#: block of four channels, twice the products' on rows this short (LSTM / SVDF gates of 8 to 20
#: inputs on the Cortex-M4: 2.0-2.8 -> 1.3-1.9 instructions per MAC), for one byte of flash per
#: weight, at most SHORT_K a channel; --max-flash (lean_weights) takes them back to int8
SHORT_K = 24


def widened_by_default(g: Graph, op: Operator) -> bool:
    """dsp_gemm's default for a layer without a tuned configuration: weights widened to int16
    (rows of at most SHORT_K inputs always; else small layers, see WIDEN_BYTES)."""
    w, y = g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    k = w.size // max(w.shape[0], 1)
    if k <= SHORT_K:
        return True
    short = k <= 4 * SMALL_QUADS
    return w.size <= WIDEN_BYTES and (short or y.size // max(y.shape[-1], 1) >= WIDEN_ROWS)


def gemm_knobs(g: Graph, op: Operator, geo: Geometry) -> dict[str, tuple[Any, ...]]:
    """The dsp_gemm variants' knobs, defaults first: ``weights`` (int8 or int16, see
    :func:`mac4_knobs`): int8 by default, int16 where :func:`widened_by_default`; where rows
    are read in place one at a time, ``widen``: each row widened into scratch first (fewer
    instructions with several blocks, more RAM) or not (the default: no scratch); and ``consts``:
    the requantization constants as words (m, c, e per channel, the default) or "packed" (one
    word per channel, 12 bytes of flash fewer, expanded into 12 bytes of scratch per channel at
    each call: two instructions more per block of channels and row, or pair of rows; where the
    layer's constants do not pack, kernels/dsp.py gemm_plan, the words)."""
    knobs: dict[str, tuple[Any, ...]] = {
        "weights": ("int16", "int8") if widened_by_default(g, op) else ("int8", "int16")}
    if widen_applies(geo, False) and geo.kq > SMALL_QUADS:
        knobs["widen"] = (False, True)
    knobs["consts"] = ("words", "packed")
    return knobs


def gemm_packed(op: Operator) -> bool:
    """dsp_gemm packs its per-channel constants (see :func:`gemm_knobs`)."""
    return knob(op, "consts", "words") == "packed"


def gemm_widen(op: Operator) -> bool:
    """dsp_gemm widens rows read one at a time into scratch first (see :func:`gemm_knobs`)."""
    return bool(knob(op, "widen", False))


def gemm_wide(g: Graph, op: Operator) -> bool:
    """dsp_gemm takes the weights widened to int16 (see :func:`gemm_knobs`)."""
    return knob(op, "weights", "int16" if widened_by_default(g, op) else "int8") == "int16"


def lean_weights(g: Graph, op: Operator, config: dict[str, Any], target: Target) -> dict[str, Any] | None:
    """``OpDef.lean`` of the layers with the ``weights`` knob: int16 weights (tuned, or the default
    of :func:`widened_by_default`) back to int8, and dsp_gemm's constants packed (knob
    ``consts``, :func:`gemm_knobs`; the other variants ignore it)."""
    lean = dict(config)
    if config.get("weights") == "int16" or (not config and len(op.inputs) > 1
                                            and g.tensors[op.inputs[1]].is_constant
                                            and widened_by_default(g, op)):
        lean["weights"] = "int8"
    if config.get("consts", "words") == "words":
        lean["consts"] = "packed"
    return lean if lean != config else None


def lean_tuned_weights(g: Graph, op: Operator, config: dict[str, Any], target: Target) -> dict[str, Any] | None:
    """``OpDef.lean`` of layers whose int16 weights only a tuning log asks for (TRANSPOSE_CONV)."""
    return {**config, "weights": "int8"} if config.get("weights") == "int16" else None
