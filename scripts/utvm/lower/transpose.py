"""The transpose kernel: permute the axes of a tensor (attr ``perm``, numpy semantics).

``out.shape[d] == x.shape[perm[d]]`` and ``out[j0, .., jn] == x[k]`` with ``k[perm[d]] == j[d]``.
The ONNX importer uses it to move 4-D activations between NCHW (the model's view) and NHWC
(utvm's layout). It only moves elements, so it is exact for every dtype.
"""

from __future__ import annotations

from tvm import te

from ..errors import UtvmError
from ..ir import Graph, Operator
from .kerneldef import KernelArg, KernelDef


def transpose(g: Graph, op: Operator) -> KernelDef:
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    perm = tuple(int(p) for p in op.attrs["perm"])
    if sorted(perm) != list(range(len(x.shape))):
        raise UtvmError(f"{op.source}: perm {list(perm)} is not a permutation of {len(x.shape)} axes")
    out_shape = tuple(x.shape[p] for p in perm)
    if out_shape != tuple(y.shape):
        raise UtvmError(f"{op.source}: transpose of {list(x.shape)} by {list(perm)} gives "
                        f"{list(out_shape)}, not {list(y.shape)}")
    X = te.placeholder(x.shape, x.dtype, name="x")
    inverse = [0] * len(perm)
    for d, p in enumerate(perm):
        inverse[p] = d

    def f(*j):  # type: ignore[no-untyped-def]
        return X[tuple(j[inverse[a]] for a in range(len(perm)))]

    out = te.compute(out_shape, f, name="out")
    return KernelDef([KernelArg(X, tensor=x.name)], out, y.name)
