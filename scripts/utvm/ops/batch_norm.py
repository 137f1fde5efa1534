"""BatchNormalization in inference mode: a per-channel scale and offset, ``x * scale[c] +
offset[c]`` along axis ``axis`` (attrs ``axis``, ``activation``; inputs x and the two float32
constants of the channel count).

Import: ONNX BatchNormalization (training_mode 0; scale, B, mean and var constant). After a
float32 Conv that only it reads, it is folded into the convolution's filter and bias (as
onnxruntime's Conv-BatchNormalization fusion); otherwise into this operator as onnxruntime folds
it in float32: ``scale' = scale / sqrt(var + epsilon)``, ``offset = B - mean * scale'``. A value
held channels-last stays so; a following Relu/Clip becomes the fused activation.
Semantics: onnxruntime's BatchNormalization (float32, within its tolerance).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tvm import te

from ..ir import NHWC, PLAIN, Graph, Operator
from ..kernels.kerneldef import KernelArg, KernelDef
from ..kernels.requant import float_clamp
from ..kernels.target import Target
from .base import OpDef, OpError, SourceOp, Validation, Variant
from .common import io


def fold(scale: np.ndarray, bias: np.ndarray, mean: np.ndarray, var: np.ndarray,
         epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """(per-channel scale, offset) in float32, as onnxruntime computes them."""
    f32 = np.float32
    inv_std = f32(1.0) / np.sqrt(var.astype(f32) + f32(epsilon))
    new_scale = (inv_std * scale.astype(f32)).astype(f32)
    return new_scale, (bias.astype(f32) - mean.astype(f32) * new_scale).astype(f32)


#: where the output channels are in utvm's filters: conv2d OHWI, depthwise 1HWC
_FILTER_CHANNEL_AXIS = {"conv2d": 0, "depthwise_conv2d": 3}


def _into_conv(imp: Any, x: str, out: str, scale: np.ndarray, bias: np.ndarray, mean: np.ndarray,
               var: np.ndarray, epsilon: float) -> bool:
    """Fold into the float32 convolution computing ``x`` (its only consumer), as onnxruntime's
    Conv-BatchNormalization fusion does: filter * alpha, (bias - mean) * alpha + B with
    alpha = scale / sqrt(var + epsilon). False when there is no such convolution."""
    op = imp.fusable_producer(x)
    if op is None or op.kind not in _FILTER_CHANNEL_AXIS or op.attrs.get("activation") != "none":
        return False
    w = imp.tensors[op.inputs[1]]
    if w.dtype != "float32" or w.data is None:
        return False
    f32 = np.float32
    alpha = (scale.astype(f32) / np.sqrt(var.astype(f32) + f32(epsilon))).astype(f32)
    shape = [1] * w.data.ndim
    shape[_FILTER_CHANNEL_AXIS[op.kind]] = alpha.size
    old_bias = imp.tensors[op.inputs[2]].data if len(op.inputs) > 2 and op.inputs[2] else np.zeros_like(alpha)
    new_bias = ((old_bias.astype(f32) - mean.astype(f32)) * alpha + bias.astype(f32)).astype(f32)
    op.inputs[1] = imp.add_const(f"{out}_weight", (w.data * alpha.reshape(shape)).astype(f32))
    op.inputs[2:] = [imp.add_const(f"{out}_bias", new_bias)]
    imp.retarget(op, out, NHWC)
    return True


def from_onnx(imp: Any, node: Any) -> None:
    attrs = imp.attrs(node)
    if int(attrs.get("training_mode", 0)) or len([o for o in node.output if o]) > 1:
        raise imp.fail("only inference mode (training_mode=0, one output) is supported")
    x, out = node.input[0], node.output[0]
    shape = imp.shape(x)
    if len(shape) < 2:
        raise imp.fail(f"expects an input of at least 2 axes (N, C, ...), got {list(shape)}")
    scale, bias, mean, var = (imp.float_const(node.input[k], what).reshape(-1)
                              for k, what in enumerate(("scale", "B", "mean", "var"), start=1))
    channels = shape[1]
    if any(a.size != channels for a in (scale, bias, mean, var)):
        raise imp.fail(f"scale, B, mean and var must have {channels} elements (the channels)")
    epsilon = float(attrs.get("epsilon", 1e-5))
    if _into_conv(imp, x, out, scale, bias, mean, var, epsilon):
        return
    s, b = fold(scale, bias, mean, var, epsilon)
    if len(shape) == 4 and NHWC in imp.vals.get(x, {}):
        tensor, layout, axis = imp.get(x, NHWC), NHWC, 3
    else:
        tensor, layout, axis = imp.get(x, PLAIN), PLAIN, 1
    imp.emit("batch_norm", [tensor, imp.add_const(f"{out}_scale", s), imp.add_const(f"{out}_offset", b)],
             out, layout, {"axis": axis, "activation": "none"})


def check(g: Graph, op: Operator) -> None:
    x, y = io(g, op)
    axis = int(op.attrs["axis"])
    if x.dtype != "float32" or y.dtype != "float32" or x.shape != y.shape:
        raise OpError(f"{op.source}: float32 input and output of one shape expected")
    if not 0 <= axis < len(x.shape):
        raise OpError(f"{op.source}: axis {axis} out of range")
    for name in op.inputs[1:]:
        t = g.tensors[name]
        if t.data is None or t.shape != (x.shape[axis],):
            raise OpError(f"{op.source}: scale and offset must be constants of {x.shape[axis]} elements")


def _generic(g: Graph, op: Operator, target: Target) -> KernelDef:
    x, y = io(g, op)
    axis = int(op.attrs["axis"])
    X = te.placeholder(x.shape, x.dtype, name="x")
    S = te.placeholder((x.shape[axis],), "float32", name="scale")
    B = te.placeholder((x.shape[axis],), "float32", name="offset")
    act = op.attrs.get("activation", "none")
    out = te.compute(x.shape, lambda *i: float_clamp(X[i] * S[i[axis]] + B[i[axis]], act), name="out")
    args = [KernelArg(X, tensor=x.name), KernelArg(S, tensor=op.inputs[1]), KernelArg(B, tensor=op.inputs[2])]
    return KernelDef(args, out, y.name)


OPS = (
    OpDef(
        kind="batch_norm",
        summary="per-channel scale and offset (inference batch normalization)",
        onnx=(SourceOp("BatchNormalization", from_onnx, ("float32",),
                       "inference mode; scale, B, mean, var constant"),),
        variants=(Variant("generic", _generic, types=("float32",)),),
        check=check,
        reference="onnxruntime BatchNormalization (scale and offset folded in float32)",
        fuses_activation=True,
        inplace=True,
    ),
)

#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("check", "BatchNormalization not float32, or output shape differs (ONNX only)",
               "onnxruntime also runs float16/double; utvm has a float32 kernel only",
               "would-compute-differently", "kept"),
    Validation("check", "channel axis outside the rank (ONNX only)",
               "ONNX shape inference refuses it (onnxruntime: 'Invalid input shape')",
               "refused-by-TFLM", "kept"),
    Validation("check", "scale/B/mean/var not constants of C elements (ONNX only)",
               "onnxruntime refuses other sizes; it takes non-constant ones, utvm folds them at compile time",
               "would-compute-differently", "kept"),
)
