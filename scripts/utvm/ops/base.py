"""What an operator is to utvm: one :class:`OpDef` per operator kind of the graph IR.

An operator module (``utvm/ops/<kind>.py``) keeps everything about its operator in one
place and exposes it as ``OPS``, a tuple of :class:`OpDef`:

- how TFLite builtins and ONNX operators become it (:class:`SourceOp`: the import rule, the
  input types and the constraints shown by ``utvm ops``);
- its parameter checks, run once on the imported graph (as TFLite Micro's ``Prepare``);
- its reference semantics (which reference kernel it is bit-exact with);
- its kernel variants (:class:`Variant`), tried in order: the first whose builder returns a
  kernel for the operator on the target CPU is used, the last one is the generic kernel;
- what the planner and the external modules need to know (``OpDef.patch_stage``, ``inplace``,
  ``shift_margin``, ``offload``, ...).

Its checks' rows of docs/VALIDATION.md, classified against TFLite Micro, are the module's
``VALIDATION`` (:class:`Validation`; ``utvm ops --validation`` writes the file); docs/OPERATORS.md
is written from ``OPS`` (``utvm ops --markdown``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import UtvmError
from ..ir import Graph, Operator
from ..kernels.kerneldef import KernelDef
from ..kernels.target import Target


class OpError(UtvmError):
    """A problem with one operator of the model; the importer prefixes the file and the operator."""


#: converts one source-model operator: (importer context, node) -> None (appends to the graph)
Convert = Callable[[Any, Any], None]


@dataclass(frozen=True)
class SourceOp:
    """A TFLite builtin or ONNX operator and how it is imported."""

    name: str                       # CONV_2D, Conv, ...
    convert: Convert
    #: element types of the (first) input it accepts, for the operator table
    types: tuple[str, ...] = ("int8", "float32")
    #: what else must hold, in a few words ("fused activation NONE/RELU/RELU6/RELU_N1_TO_1")
    constraints: str = ""
    #: False: it becomes no operator of its own (VAR_HANDLE names a variable, CALL_ONCE gives
    #: the variables' first values); the operator table shows no kind for it
    operator: bool = True
    #: an ONNX operator in a statically quantized (QDQ) model: how ``utvm.importer.onnx_qdq``
    #: turns its group (DequantizeLinear inputs, QuantizeLinear output) into integer operators:
    #: "passthrough" (it only moves or selects values: with the same quantization in and out it
    #: runs on the int8 values), "mac" (Conv, MatMul, Gemm -> QLinearConv, QLinearMatMul, QGemm),
    #: "elementwise" (Add -> QLinearAdd), "pool" (-> QLinear<op>); None: it stays float between them
    qdq: str | None = None


#: builds a kernel for an operator on a target, or returns None when the variant does not apply
Build = Callable[[Graph, Operator, Target], "KernelDef | None"]

#: the values each knob of a variant can take for an operator, the default first
Knobs = Callable[[Graph, Operator, Target], dict[str, tuple[Any, ...]]]


def knob(op: Operator, name: str, default: Any) -> Any:
    """The value of knob ``name`` in the configuration the operator is built with (``op.config``,
    which the lowering sets from its ``KernelConfigs``), else ``default`` (the untuned rule)."""
    return (op.config or {}).get(name, default)


@dataclass(frozen=True)
class Variant:
    """One kernel implementation of an operator."""

    name: str
    build: Build
    #: the CPUs it is meant for, for the operator table ("" = any CPU)
    cpus: str = ""
    #: input element types it handles, for the operator table
    types: tuple[str, ...] = ("int8",)
    #: the tuning knobs of this variant for an operator (see :func:`knob`), None: none
    knobs: Knobs | None = None
    #: it writes the output's rows (NHWC axis 1) in increasing order, and once it has written
    #: into row y it reads the input only from the first row of y's window on; with
    #: ``OpDef.shift_margin`` the output may then start a few rows before its input in one buffer
    #: (a convolution in place, ``utvm.plan.sharing.choose_shifted``)
    rows_in_order: bool = False


#: the classes of docs/VALIDATION.md: how a check compares with what TFLite Micro does
VALIDATION_CLASSES = ("refused-by-TFLM", "would-compute-differently", "neither", "not-a-model-check")


@dataclass(frozen=True)
class Validation:
    """One row of docs/VALIDATION.md: a check that raises in ``function`` of the module that
    declares it (``rule``: a refusal of its TFLite import rule, ``ctx.fail``), the condition, what
    TFLite Micro does there, its class (:data:`VALIDATION_CLASSES`) and what utvm does about it."""

    function: str
    condition: str
    tflm: str
    klass: str
    action: str
    rule: bool = False


@dataclass(frozen=True)
class Weights:
    """The filter and bias inputs of a MAC layer, as TFLite Micro reads their quantization
    (:func:`utvm.importer.tflite_import.tflm_quantization`): the filter's scales per output
    channel; its zero points never (``offset`` "never": ConvPerChannel, DepthwiseConvPerChannel,
    TransposeConv take no weights offset) or only per tensor ("per_tensor": FULLY_CONNECTED, whose
    FullyConnectedPerChannel takes none); the bias's quantization not at all."""

    filter: int = 1
    bias: int = 2
    offset: str = "never"
    #: the layout (``ir.PLAIN``: channels last, as a MatMul/Gemm output; ``ir.NHWC``: ONNX's
    #: channels on axis 1) in which the ONNX importer folds an Add of a constant per-output-channel
    #: vector right after the layer into its bias input, when the layer has none yet and no fused
    #: activation (``OnnxImporter.fuse_bias``); None: such an Add stays an ADD
    onnx_bias: str | None = None


@dataclass(frozen=True)
class Offload:
    """An external module (``--offload``, :mod:`utvm.external`) that may take the operator instead
    of a TVM kernel: the module's name, the element types of the (first) input it takes, and the
    module's method that writes the glue (which may still decline: then TVM lowers it)."""

    module: str
    types: tuple[str, ...]
    handler: str


@dataclass(frozen=True)
class Channels:
    """How channel pruning (:mod:`utvm.lower.channels`) may look through the operator.

    ``role`` "mac": each output channel is a weighted sum over all input channels (filter input
    1, output channels on its axis 0 and input channels on its last axis; bias input 2): input
    channels whose weights are all zero may be dropped, and output channels whose weights are all
    zero are constants that may fold into a later "mac" layer's bias, where ``when`` holds for
    that later layer (each output pixel reads one input pixel, no padding; None: always).
    "depthwise": output channel j is input channel j alone (filter input 1, channels on its last
    axis; bias input 2), where ``when`` holds: a dropped channel is dropped through it.
    "passes": a constant input channel j is output channel j, the same constant clamped to the
    fused activation's range (``attrs["activation"]``), where ``when`` holds and input and output
    share one quantization."""

    role: str
    when: Callable[[Graph, Operator], bool] | None = None


@dataclass(frozen=True)
class Slot:
    """Where one input of a kernel-less operator (CONCATENATION) lies inside its output: the
    element offset of the input's first element and, when the input's elements are not one
    contiguous run of the output, the output's element strides for the input's axes."""

    offset: int
    strides: tuple[int, ...] | None = None


@dataclass(frozen=True)
class OpDef:
    """One operator kind of utvm's graph IR (``Operator.kind``)."""

    kind: str
    summary: str
    tflite: tuple[SourceOp, ...] = ()
    onnx: tuple[SourceOp, ...] = ()
    #: kernel variants in order of preference; the last one must apply to every valid operator
    variants: tuple[Variant, ...] = ()
    #: parameter checks on the imported graph; raise OpError with one short line
    check: Callable[[Graph, Operator], None] | None = None
    #: the reference implementation the kernels agree with, in words
    reference: str = ""
    #: the output only renames the input's bytes: no kernel, the planner aliases them
    alias: bool = False
    #: elementwise: output element i depends only on element i of each same-shaped input, and
    #: every kernel variant reads input element i before it writes output element i and never
    #: after, so the output may take the bytes of such an input (same shape and dtype) when that
    #: input dies at this operator; the memory planner decides where (``utvm.plan.memory``)
    inplace: bool = False
    #: a windowed operator that may run in place over its (first) input: the bytes by which
    #: its output must start before the input in a shared buffer so that a ``rows_in_order``
    #: variant never writes over input rows it still reads (None: not worth it or not possible)
    shift_margin: Callable[[Graph, Operator], int | None] | None = None
    #: the output is its inputs side by side (CONCATENATION): ``input_slots`` gives each input's
    #: place in the output. There is no kernel for the whole operator: the producer of an input
    #: writes straight into its slot where it can (``utvm.lower.lowering``); the others are
    #: copied by the generic variant built for a one-input operator (a copy into the slot).
    input_slots: Callable[[Graph, Operator], list[Slot]] | None = None
    #: the element offset in the input when the output is one contiguous run of the input's
    #: bytes (a slice along the outermost axis that is not 1), else None: then the operator needs
    #: no kernel, its consumers read the input's bytes there (a view)
    view_of_input: Callable[[Graph, Operator], int | None] | None = None
    #: a following ReLU/Clip can be folded into ``attrs["activation"]`` (ONNX import)
    fuses_activation: bool = False
    #: multiply-accumulates of one run (for instructions-per-MAC figures)
    macs: Callable[[Graph, Operator], int] | None = None
    #: a configuration (as a tuning log gives one) whose kernel's scratch takes at most ``room``
    #: bytes, or as few as it reasonably can, for an operator whose default scratch would raise
    #: the pool (the compiler asks after planning, for operators without a tuned configuration);
    #: None: keep the default
    fit_scratch: Callable[[Graph, Operator, Target, int], dict[str, Any] | None] | None = None
    #: the configuration with the least flash (int8 weights kept int8, constants packed) for an
    #: operator built with ``config`` (its tuned or default one, {} for none), or None when that
    #: is already the leanest on ``target``: what ``--max-flash`` falls back to when the constants
    #: are over it
    lean: Callable[[Graph, Operator, dict[str, Any], Target], dict[str, Any] | None] | None = None
    #: a configuration whose kernel writes output rows in order (so that it may run shifted,
    #: see ``shift_margin``), for an operator at the pool's peak whose default kernel does not
    #: (``KernelDef.rows_out_of_order``), costing at most ``slack`` times the default's
    #: estimated instructions (None: any cost); the compiler keeps it only when the pool shrinks
    rows_in_order_config: Callable[[Graph, Operator, Target, float | None], dict[str, Any] | None] | None = None
    #: how the patch planner (``--memory-mode min``, :mod:`utvm.plan.patches`) may split it in a
    #: CNN's first stage: "window" (one NHWC activation input read through a window, constant
    #: weights (., kh, kw, .) as input 1, attrs strides/dilation/padding; each patch gets the
    #: padding it needs), "elementwise" (same-shaped NHWC activations, a patch reads the same
    #: region of each); None: the operator ends the stage
    patch_stage: str | None = None
    #: the external modules that may take it (the first that claims it when ``--offload`` names
    #: several; a module registered from outside utvm declares its own ``patterns``)
    offload: tuple[Offload, ...] = ()
    #: its constant filter and bias inputs (a MAC layer), see :class:`Weights`
    weights: Weights | None = None
    #: it checks and uses the per-channel parameters of its tensors itself (QUANTIZE, DEQUANTIZE);
    #: other operators' tensors, but a filter, are read per tensor (the first scale)
    per_channel_tensors: bool = False
    #: what channel pruning may do through it (:class:`Channels`), None: a channel ends there
    channels: Channels | None = None
    #: its output holds its (first) input's values, only moved (RESHAPE, TRANSPOSE): an output's
    #: quantization step is its input's (``utvm.run.runner.output_steps`` looks through it)
    rearranges: bool = False
    #: the quantization step of its float output (DEQUANTIZE: its input's scale), for the
    #: tolerance a quantized ONNX model's float outputs are compared with (``output_steps``)
    output_step: Callable[[Graph, Operator], float | None] | None = None

    def kernel(self, graph: Graph, op: Operator, target: Target) -> tuple[str, KernelDef]:
        """(variant name, kernel) of the variant the operator's tuned configuration names, if it
        applies, else of the first variant that applies."""
        chosen = knob(op, "variant", None)
        for variant in self.variants:
            if variant.name == chosen:
                kdef = variant.build(graph, op, target)
                if kdef is not None:
                    return variant.name, kdef
        for variant in self.variants:
            kdef = variant.build(graph, op, target)
            if kdef is not None:
                return variant.name, kdef
        raise OpError(f"{op.source}: no kernel for operator '{op.kind}' with these parameters")

#: the heading of this module's rows in docs/VALIDATION.md
VALIDATION_TITLE = "Kernel selection (ops/base.py)"
#: docs/VALIDATION.md's rows of this module's checks (and of its TFLite import rules' refusals,
#: ``rule=True``), in source order: ``utvm ops --validation`` writes the file from them
VALIDATION = (
    Validation("kernel", "no kernel variant builds for a checked operator",
               "— (internal: every operator that passes its check has a generic kernel)",
               "not-a-model-check", "kept"),
)
