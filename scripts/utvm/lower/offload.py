"""What an external module is: operator patterns it takes, the C it emits for them, its library.

An external module (CMSIS-NN, a vendor library, the in-repo plain-C module) looks at each
operator of the graph in order and may *claim* it. A claimed operator is not lowered by TVM:
the AOT executor calls a small C function (the glue) that the module writes, and the glue
calls the library. Tensors, constants and scratch of the call are planned exactly like those
of a TVM kernel, so the call's arguments are pool offsets, application buffers or flash
constants.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..ir import Graph, Operator
from ..ops import get


@dataclass
class ExternalArg:
    """A parameter of a glue function: a graph tensor, or a constant the module adds."""

    ctype: str                            # C type of the parameter, e.g. "const int8_t*"
    name: str                             # C parameter name used in the body
    tensor: str = ""                      # graph tensor name
    constant: np.ndarray | None = None    # new constant (weights in another layout, tables)
    role: str = ""                        # short name used for the constant's symbol


@dataclass
class ExternalKernel:
    """What a module emits for one claimed operator.

    The glue function is ``int32_t <symbol>(<args...>, <output>, uint8_t* scratch,
    int32_t scratch_size)``; ``body`` is its statements and must return 0 on success.
    ``scratch`` points at ``scratch_bytes`` bytes of the workspace pool (NULL when 0).
    """

    args: list[ExternalArg]
    output: ExternalArg
    body: list[str]
    scratch_bytes: int = 0
    #: what was offloaded, for the glue's comment and the report (e.g. "arm_convolve_wrapper_s8")
    function: str = ""
    #: module-defined text from which ``finalize`` works out ``scratch_bytes`` (e.g. a C call)
    size_query: str = ""


@dataclass
class LibraryFiles:
    """Files of a module's library copied into the MLF under codegen/<dir>/lib/.

    ``root`` is the directory they come from; paths are relative to it and keep their
    layout. ``include_dirs`` (relative too) go on the compiler's include path.
    """

    root: Path
    sources: list[str] = field(default_factory=list)
    headers: list[str] = field(default_factory=list)
    include_dirs: list[str] = field(default_factory=list)


@dataclass
class OffloadOptions:
    """Settings an external module may need."""

    #: CPU the C is compiled for (cortex-m4, cortex-m55, ...); None: any (host builds)
    cpu: str | None = None
    #: where CMSIS-NN's sources are (Include/, Source/)
    cmsis_nn_dir: Path | None = None


@dataclass(frozen=True)
class Pattern:
    """An operator shape a module registered from outside utvm takes (utvm's own modules are
    named by the operators' definitions instead, ``OpDef.offload``): the operator kind with the
    element type of its first input, and the module method that builds the glue. The method may
    still decline (return None) for attributes the library does not support; TVM then lowers
    the operator.
    """

    kind: str
    dtype: str
    handler: str


class ExternalModule(ABC):
    """One external library. Subclasses set ``name`` and implement ``library`` and one handler
    per operator that names the module (``OpDef.offload``) or per pattern of their own."""

    #: the name users give to --offload
    name: str = ""
    #: one-line description for --help and errors
    summary: str = ""
    #: operators this module takes besides those whose definitions name it
    patterns: tuple[Pattern, ...] = ()

    def __init__(self, options: OffloadOptions) -> None:
        self.options = options

    @property
    def c_name(self) -> str:
        """The name as a C identifier and MLF directory (cmsis-nn -> cmsis_nn)."""
        return self.name.replace("-", "_")

    def claim(self, graph: Graph, op: Operator) -> ExternalKernel | None:
        """The glue for ``op`` if the operator's definition names this module for its input's type
        (or one of the module's own patterns matches) and the handler accepts the operator, else
        None (TVM lowers it)."""
        dtype = graph.tensors[op.inputs[0]].dtype if op.inputs else ""
        opdef = get(op.kind)
        handlers = [o.handler for o in (opdef.offload if opdef is not None else ())
                    if o.module == self.name and dtype in o.types]
        handlers += [p.handler for p in self.patterns if p.kind == op.kind and p.dtype == dtype]
        for handler in handlers:
            kernel: ExternalKernel | None = getattr(self, handler)(graph, op)
            if kernel is not None:
                return kernel
        return None

    @abstractmethod
    def library(self, used_functions: set[str]) -> LibraryFiles:
        """The library files the glue needs, given the library functions it calls."""

    def finalize(self, kernels: list[ExternalKernel]) -> None:
        """Called once with every kernel this module claimed, before memory planning (to
        settle sizes that need one batch of work, such as asking the library)."""
        return None

    def headers(self) -> list[str]:
        """Headers the glue file includes."""
        return []
