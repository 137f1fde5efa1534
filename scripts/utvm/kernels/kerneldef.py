"""What a kernel builder returns: TE placeholders bound to tensors, the output, a schedule."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import tvm
from tvm import te


@dataclass
class KernelArg:
    """A kernel parameter: a graph tensor, a constant created by the lowering, or (``scratch``)
    a temporary buffer of the placeholder's shape that the memory planner places in the pool,
    live only during this kernel's call (instead of TVM's own workspace or stack allocation)."""

    placeholder: te.Tensor
    tensor: str = ""                       # graph tensor name
    constant: np.ndarray | None = None     # new constant (folded bias, requantization table)
    role: str = ""                         # short name used for new constant symbols
    scratch: bool = False


@dataclass
class KernelDef:
    args: list[KernelArg]
    output: te.Tensor
    output_tensor: str
    schedule: Callable[[tvm.s_tir.Schedule], None] | None = None
    #: the kernel reads every input element before it writes the output element at the same
    #: index and never after: the memory planner may give the output the bytes of a same-shaped
    #: input that dies here (as for the elementwise operators of ``OpDef.inplace``)
    inplace: bool = False
    #: this configuration writes output rows out of order although its variant declares
    #: ``Variant.rows_in_order`` (the planner then does not run it shifted)
    rows_out_of_order: bool = False
    #: C definitions the kernel calls (static functions generated for this layer, e.g.
    #: ``kernels/tiny.py``), placed in the kernels' source before TVM's prototypes of them
    source: str = ""
