"""docs/VALIDATION.md, written from the declarations of the modules whose checks it classifies
(``utvm ops --validation``): every operator module's ``VALIDATION`` rows (:class:`~utvm.ops.base.Validation`,
with ``VALIDATION_TITLE`` where its heading is not "<module> (ops/<module>.py)"), then the
importer's; the sum lines are counted from the rows. A test fails when the file and the
declarations differ, and another when a raise site has no row."""

from __future__ import annotations

import importlib
import pkgutil
from collections import Counter
from types import ModuleType

from .. import ops
from ..ops.base import VALIDATION_CLASSES, Validation

#: the importer's modules with rows, in the file's order (after the operators')
IMPORTER_MODULES = ("__init__", "limits", "tflite_import", "onnx_import")

INTRO = """Issue 23, item 1. Every place in `scripts/utvm/ops/*.py` and `scripts/utvm/importer/{__init__,limits,tflite_import,onnx_import}.py`
that raises `OpError(...)` or `UtvmError(...)` has one row below (file:function, in source order), classified against what
TFLite Micro does for the same condition:

- **refused-by-TFLM**: TFLite Micro refuses the model too (a `TF_LITE_ENSURE*` or `MicroPrintf` + `kTfLiteError` in Prepare/Eval,
  or a `TFLITE_CHECK` that aborts, as in QuantizeMultiplier). Kept.
- **would-compute-differently**: TFLite Micro does not refuse it, but accepting it would make utvm compute something other than
  TFLite Micro: TFLite Micro reads or writes out of bounds, divides by zero, relies on a `TFLITE_DCHECK` that release builds drop,
  or utvm lacks the kernel (a feature gap, not a validity check). Kept, the reason given.
- **neither**: TFLite Micro runs the model and utvm could compute the same. Relaxed (with a test that the model compiles and is
  bit-exact with TFLite Micro), or, where relaxing needs kernel work not done here, kept and listed under *Left*.
- **not-a-model-check**: file access, resource limits of the reader, internal consistency (importer bugs), helpers that
  rewrap another check. Kept.

TFLite Micro sources: tensorflow/tflite-micro at 90b983c (2026-08-20); `k/` is `tensorflow/lite/micro/kernels/`, `reference` is
`tensorflow/lite/kernels/internal/reference/`, `quantization_util.cc` and `kernel_util.cc` are under `tensorflow/lite/kernels/`.
The tests' reference is the tflite-micro Python interpreter (reference kernels, release build: `TFLITE_DCHECK`s off).
ONNX-only checks are classified against the ONNX spec and onnxruntime. `tests/test_validation.py` keeps this file honest:
every raise site has its row (counted per file:function), and the sum line matches the rows.

The TFLite import rules' own refusals (`ctx.fail(...)` in the operator modules, {rules} sites) have their own table and sum line
after these; the ONNX import rules' (`imp.fail(...)`, 68 sites) are not classified (see *Left*)."""

RULES_INTRO = """The refusals of the operator modules' TFLite import rules (`from_tflite` and helpers), classified as above. The ONNX
import rules' refusals (`imp.fail`, 68 sites) are not classified here."""

#: what follows the tables: the relaxed checks with their tests, what was missing, what is left
CLOSING = """## Relaxed (tests/test_validation.py, each against the tflite-micro Python interpreter on the host)

| Check | Now | Test | Figure |
|---|---|---|---|
| pool2d check, int8 pool quantization | zero points equal, scales (float32) at most 1e-6 apart, as `PoolingPrepare` | `test_pool_scales_within_tflm_tolerance_compile_bit_exact`: AVERAGE/MAX_POOL_2D, scales 9e-7 and 4e-7 apart, NONE/RELU/RELU6; 3e-6 apart still refused | max abs diff 0 |
| logistic_tanh check, output quantization | int8 LOGISTIC: zero point -128 only; int8 TANH: any; int16: zero point 0 and CheckedLog2(scale) == -15 within 1e-3 | `test_logistic_tanh_output_quantization_tflm_does_not_read`: int8 LOGISTIC out (0.02, -128), TANH out (0.03, 7) over all 256 inputs, int16 out 2^-15 x 1.0004 / 0.9997; zero point 0 (int8 LOGISTIC), 2^-14 and 2^-15 x 1.01 (int16) still refused | max abs diff 0 |
| softmax check, beta | float32: any finite beta | `test_float_softmax_any_beta_bit_exact`: beta 0, -0.7, -2.5 on 3x10 rows; int8 beta -1 and float32 beta inf still refused | max abs diff 0 |
| common quant_conv and transpose_conv check, filter zero points | the TFLite importer sets the filter zero points TFLite Micro never reads to 0 (`tflm_quantization`): CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV, and FULLY_CONNECTED quantized per channel | `test_filter_zero_points_tflm_ignores_compile_bit_exact`: 4 CONV_2D, 4 DEPTHWISE_CONV_2D, 4 per-channel FULLY_CONNECTED, 4 TRANSPOSE_CONV int8 and a 16x8 CONV_2D (test_op_mac's random layers) with filter zero points in [-40, 40] | max abs diff 0 |
| limits check_tensor, zero point count | zero points of another count than the scales become the first one for every channel (`tflm_quantization`), as TFLite Micro's allocator does | `test_zero_point_count_other_than_scales_first_one_bit_exact`: ADD and DEQUANTIZE with 1 scale and 3 zero points on every tensor | max abs diff 0 |

## Missing (TFLite Micro refuses or computes otherwise, utvm accepted)

- **Per-channel FULLY_CONNECTED with nonzero filter zero points** computed a different result: utvm subtracted the first zero
  point, TFLite Micro's FullyConnectedPerChannel takes no weights offset. Max abs diff 58 on the test above before the fix;
  fixed with the filter zero points (0 at import).
- **int8 SOFTMAX output scale**: TFLite Micro requires `scale == 1/256` exactly (`k/softmax_common.cc:104`); utvm accepts scales
  within 1e-8 of it and computes as for 1/256. Harmless (the result is TFLite's for 1/256), not changed.
- **STRIDED_SLICE of 5 dimensions**: TFLite Micro's kMaxDim is 4 (`k/strided_slice_common.cc:66`); utvm slices 5-D correctly.
  Not changed (utvm computes the defined result).
- **Per-channel QUANTIZE output**: TFLite Micro refuses it (`TF_LITE_ENSURE(scale->size == 1)`, `k/quantize_common.cc:54`);
  utvm quantized with the first scale. Check added (`ops/quantize.py:check`, test_per_channel_quantize_output_refused_as_tflm).
- **Per-channel LSTM weights** (TFLite): the importer reads them per tensor (first scale), as `TfLiteTensor.params`; TFLite
  Micro's integer LSTM builds its gates with per-tensor `FullyConnectedParams` from per-channel data. What TFLite Micro computes
  there was not established; no test model has them.

## Left

- Classified **neither** but kept, because relaxing needs kernel or planner work beyond these checks:
  int8/int16 tensors without quantization parameters where TFLite Micro's kernel never reads them (`ops/common.py:check_io_types`;
  e.g. MAX_POOL_2D with no quantization on either side), dimensions of 0 (`importer/limits.py:check_tensor`; empty tensors),
  scales outside 1e-30 .. 1e30 (utvm's effective scales not compared with TFLite Micro's float32 products there), zero points outside the type's range (TFLite Micro keeps them in
  int32; not every utvm kernel was checked for offsets beyond the type), reductions with an empty axis list.
- Strides and dilations above 65536 (`ops/common.py:check_window`) run in TFLite Micro; the bound stays for utvm's int32 index
  arithmetic.
- int16 SOFTMAX with beta <= 0: TFLite Micro runs it (QuantizeMultiplier of a non-positive value); utvm's LUT path not compared.
- FULLY_CONNECTED with shuffled weights (a TFLite import rule): TFLite Micro ignores weights_format; kept refused.
- MIRROR_PAD with a mode other than REFLECT and SYMMETRIC (a TFLite import rule, classified **neither**): TFLite Micro pads it
  as SYMMETRIC (`offset = mode != Reflect ? 0 : 1`, k/mirror_pad.cc:190); utvm could too; kept refused, no test model has one.
- READ_VARIABLE of another type with the variable's byte count (`ops/resource_variables.py:check`, classified with the
  byte-count case as would-compute-differently) and ASSIGN_VARIABLE of such a value (`ops/assign.py:check`): TFLite Micro copies
  the raw bytes; utvm refuses the type change. No converter writes it.
- Extra inputs or outputs of FILL and inputs of VAR_HANDLE (import rules refusing them, classified by the missing-operand case):
  TFLite Micro does not count them and never reads them. No converter writes them.
- The ONNX import rules' refusals (`imp.fail`, 68 sites) are not classified."""


def modules() -> list[tuple[str, ModuleType]]:
    """(path under scripts/utvm, module) of every module that may declare rows, in the file's order."""
    found = [("ops/__init__.py", ops)]
    for info in sorted(pkgutil.iter_modules(ops.__path__), key=lambda m: m.name):
        found.append((f"ops/{info.name}.py", importlib.import_module(f"{ops.__name__}.{info.name}")))
    for name in IMPORTER_MODULES:
        found.append((f"importer/{name}.py", importlib.import_module(f"{__package__}{'' if name == '__init__' else '.' + name}")))
    return found


def _row(path: str, v: Validation) -> str:
    check = f"{'rule ' if v.rule else ''}`{path}:{v.function}`"
    return f"| {check} | {v.condition} | {v.tflm} | {v.klass} | {v.action} |"


def _sum(rows: list[Validation]) -> str:
    classes = Counter(v.klass for v in rows)
    return ", ".join(f"{k} {classes[k]}" for k in VALIDATION_CLASSES if classes[k])


def as_markdown() -> str:
    checks: list[Validation] = []
    rules: list[tuple[str, Validation]] = []
    sections: list[str] = []
    for path, module in modules():
        declared: tuple[Validation, ...] = getattr(module, "VALIDATION", ())
        own = [v for v in declared if not v.rule]
        rules += [(path, v) for v in declared if v.rule]
        checks += own
        if own:
            stem = path.rsplit("/", 1)[-1][:-3]
            title = getattr(module, "VALIDATION_TITLE", f"{stem} ({path})")
            sections += [f"## {title}", "", "| Check | Condition | TFLite Micro | Class | Action |",
                         "|---|---|---|---|---|", *(_row(path, v) for v in own), ""]
    actions = Counter(v.action.split(None, 1)[0].rstrip(":,;") for v in checks)
    out = ["# Validation that matches the reference", "",
           f"Sum: {_sum(checks)} ({len(checks)} checks; actions: "
           f"{', '.join(f'{a} {n}' for a, n in actions.most_common())}).", "",
           INTRO.replace("{rules}", str(len(rules))), "", *sections,
           "## Import rules of TFLite operators (`ctx.fail`)", "",
           f"Rules sum: {_sum([v for _, v in rules])} ({len(rules)} rules).", "", RULES_INTRO, "",
           "| Rule | Condition | TFLite Micro | Class | Action |", "|---|---|---|---|---|",
           *(_row(path, v) for path, v in rules), "", CLOSING]
    return "\n".join(out) + "\n"
