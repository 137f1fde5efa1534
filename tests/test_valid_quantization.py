"""Valid but unusual quantization metadata compiles and matches TFLite Micro bit for bit.

TFLite Micro reads a tensor's quantization only where a kernel needs it: filters per output
channel (whatever their ``quantized_dimension``), everything else per tensor through
``TfLiteTensor.params`` (the first scale and zero point); a bias's parameters and every
tensor's min/max are never read. Converters write such fields freely (the person-detection
MobileNetV1 of issue 23 has 1-D biases with ``quantized_dimension`` 3), so utvm must accept
them and compute what TFLite Micro computes. The generator below rewrites real int8 models
(../shared/models/corpus and the VWW MobileNetV1) with seeded random variants of these fields.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from op_check import check_model
from tflite_patch import edit_model

MODELS_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "models"
#: kernels' (builtin code, input position) reading a filter per output channel
_FILTERS = {(3, 1), (4, 1), (9, 1), (67, 1)}  # CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, TRANSPOSE_CONV(filter)
#: quantize/dequantize read their own per-channel parameters: left alone
_OWN = {6, 114}
_INT8 = 9


def _roles(model: Any) -> tuple[set[int], set[int], set[int]]:
    """(filters, biases, tensors of QUANTIZE/DEQUANTIZE) by tensor index."""
    sg = model.subgraphs[0]
    filters: set[int] = set()
    biases: set[int] = set()
    own: set[int] = set()
    for op in sg.operators:
        oc = model.operatorCodes[op.opcodeIndex]
        code = max(oc.builtinCode, oc.deprecatedBuiltinCode)
        ins = [int(i) for i in (op.inputs if op.inputs is not None else [])]
        outs = [int(i) for i in (op.outputs if op.outputs is not None else [])]
        if code in _OWN:
            own.update(ins + outs)
        for k, i in enumerate(ins):
            if (code, k) in _FILTERS and i >= 0:
                filters.add(i)
            if k == 2 and code in (3, 4, 9) and i >= 0:
                biases.add(i)
        if code == 67 and len(ins) > 3 and ins[3] >= 0:
            biases.add(ins[3])
    return filters, biases, own


def unusual_quantization(data: bytes, seed: int, kinds: tuple[str, ...] = ("bias_axis", "bias_values",
                         "per_channel_activations", "min_max")) -> bytes:
    """``data`` with valid-but-unusual quantization metadata, chosen by ``seed``:

    - ``bias_axis``: every 1-D quantized tensor gets ``quantized_dimension`` 3 (issue 23);
    - ``bias_values``: bias scales (zero and negative too) and zero points of any value (no
      kernel reads them);
    - ``per_channel_activations``: activation tensors get several scales and zero points after
      their own (read per tensor: only the first counts), with any quantized dimension;
    - ``min_max``: min/max empty, or any values, on every quantized tensor.
    """
    rng = np.random.default_rng(seed)

    def edit(model: Any) -> None:
        sg = model.subgraphs[0]
        _, biases, own = _roles(model)
        for index, t in enumerate(sg.tensors):
            q = t.quantization
            if q is None or q.scale is None or len(q.scale) == 0 or index in own:
                continue
            shape = [int(d) for d in t.shape] if t.shape is not None else []
            constant = model.buffers[t.buffer].data is not None and len(model.buffers[t.buffer].data) > 0
            if "bias_axis" in kinds and len(shape) == 1:
                q.quantizedDimension = 3
            if "bias_values" in kinds and index in biases:
                n = int(rng.integers(1, 5)) if rng.random() < 0.5 else len(q.scale)
                q.scale = list(rng.uniform(1e-6, 10.0, n).astype(np.float32) * rng.choice([1, 0, -1]))
                q.zeroPoint = list(rng.integers(-1000, 1000, n))
            if "per_channel_activations" in kinds and not constant and t.type == _INT8 and rng.random() < 0.5:
                n = int(rng.integers(2, 9))
                q.scale = [q.scale[0], *rng.uniform(1e-3, 1.0, n - 1).astype(np.float32)]
                zp = int(q.zeroPoint[0]) if q.zeroPoint is not None and len(q.zeroPoint) else 0
                q.zeroPoint = [zp, *rng.integers(-128, 128, n - 1)]
                q.quantizedDimension = int(rng.integers(0, 5))
            if "min_max" in kinds:
                if rng.random() < 0.5:
                    q.min, q.max = [], []
                else:
                    n = int(rng.integers(1, 4))
                    q.min = list(rng.uniform(-100, 0, n).astype(np.float32))
                    q.max = list(rng.uniform(0, 100, n).astype(np.float32))

    return edit_model(data, edit)


def _int8_corpus() -> list[Path]:
    return sorted(p for p in (MODELS_DIR / "corpus").glob("*_int8.tflite"))


def _patched_biases(path: Path) -> bytes:
    """The model with every bias's quantized_dimension 3, as the person detector of issue 23."""
    return unusual_quantization(path.read_bytes(), 0, ("bias_axis",))


def test_generator_writes_the_fields(models_dir: Path) -> None:
    """The rewritten model really carries the unusual fields (the test below is not vacuous)."""
    import tflite

    data = _patched_biases(models_dir / "vww_96_int8.tflite")
    sg = tflite.Model.GetRootAsModel(data, 0).Subgraphs(0)
    biases = [sg.Tensors(i) for i in range(sg.TensorsLength()) if sg.Tensors(i).ShapeLength() == 1
              and sg.Tensors(i).Quantization() is not None and sg.Tensors(i).Quantization().ScaleLength() > 1]
    assert len(biases) >= 14
    assert all(b.Quantization().QuantizedDimension() == 3 for b in biases)


def test_person_detection_biases_with_dimension_3(models_dir: Path, tmp_path: Path) -> None:
    """Issue 23: the MobileNetV1 person detector whose 1-D biases say quantized_dimension 3
    compiles (it was refused) and matches TFLite Micro exactly."""
    report = check_model(_patched_biases(models_dir / "vww_96_int8.tflite"), tmp_path)
    assert report.max_abs_diff == 0


@pytest.mark.parametrize("path", _int8_corpus(), ids=lambda p: p.stem)
def test_unusual_quantization_bit_exact(path: Path, tmp_path: Path, models_dir: Path) -> None:
    """Every kind of unusual metadata at once, on each int8 model of the corpus."""
    report = check_model(unusual_quantization(path.read_bytes(), seed=len(path.stem)), tmp_path)
    assert report.max_abs_diff == 0


def test_filter_dimension_without_its_channels_is_refused(tmp_path: Path) -> None:
    """What TFLite Micro refuses stays refused: a filter whose quantized dimension has not as many
    channels as it has scales (kernel_util.cc: num_channels != filter dims[quantized_dimension])."""
    from op_check import assert_refused

    data = (MODELS_DIR / "corpus" / "pad_conv_int8.tflite").read_bytes()

    def edit(model: Any) -> None:
        filters, _, _ = _roles(model)
        for i in filters:
            model.subgraphs[0].tensors[i].quantization.quantizedDimension = 1

    assert_refused(edit_model(data, edit), "quantization scales for", tmp_path)


def _every_shared_model() -> list[Path]:
    return sorted(MODELS_DIR.rglob("*.tflite"))


def test_every_shared_model_is_accepted(models_dir: Path, tmp_path: Path) -> None:
    """Every model of ../shared/models (MLPerf Tiny, corpus, TFLite Micro's examples and SEANet
    layer tests), and each rewritten with unusual quantization metadata, passes import and every
    check (refused only for an unsupported operator, with that message). Their compiles and
    bit-exact runs are test_models, test_shared_models, test_seanet's and the tests above."""
    from utvm.errors import UtvmError
    from utvm.importer import load_model

    paths = _every_shared_model()
    assert len(paths) > 150
    refused: list[str] = []
    for k, path in enumerate(paths):
        variants = [path.read_bytes()]
        if k % 3 == 0:  # the rewrites (tflite-micro's object API) are the slow part: every third model
            variants.append(unusual_quantization(variants[0], seed=k))
        for data in variants:
            copy = tmp_path / path.name
            copy.write_bytes(data)
            try:
                load_model(copy)
            except UtvmError as exc:
                if "unsupported operators" not in str(exc):
                    refused.append(f"{path.relative_to(MODELS_DIR)}: {exc}")
    assert refused == []
