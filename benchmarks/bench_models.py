#!/usr/bin/env python3
"""Instructions per inference and per MAC of a MobileNetV2-style model, the LSTM and SVDF models and
the multiply-accumulate operators beyond int8 CONV_2D (TRANSPOSE_CONV, BATCH_MATMUL,
UNIDIRECTIONAL_SEQUENCE_LSTM, SVDF, 16x8 CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED) on the
emulated Cortex-M4 (mps2/an386) and Cortex-M55 (mps3/an547).

For each model x board: compile, build with arm-none-eabi-gcc + picolibc, run in QEMU with
-icount, compare the outputs with TFLite Micro (bench_boards.bench_one), and collect instructions,
MACs, instructions per MAC, the workspace pool and flash (code + constants). The MobileNetV2-style
model and the BATCH_MATMUL and 16x8 DEPTHWISE_CONV_2D / FULLY_CONNECTED models are built here with
tests/tflite_builder.py (seeded random weights, per-channel int8 as TFLite's converter makes them);
the others come from ../shared/models (TFLite Micro's keyword_scrambled models, SVDF: copy them
from tensorflow/lite/micro/models of the tflite-micro commit the other tflm/ models come from).
The stateful models (LSTM, SVDF) are measured on their first run, which resets their state.

    python3 benchmarks/bench_models.py [--boards mps2/an386,mps3/an547] [--models mobilenet_v2_style,...]
                                       [--offload cmsis-nn [--cmsis-nn-dir DIR]]

Writes benchmarks/results/models.md and models.json (with --offload M: models_M.md and .json, the
operators M supports run in M's library: CMSIS-NN's kernels beside utvm's); prints the table;
progress goes to stderr. Not a test: figures only.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_boards import (  # noqa: E402
    ICOUNT_NOTE,
    _fmt,
    _split,
    bench_one,
    error_row,
    flash_cell,
    match_cell,
    print_progress,
    table_lines,
    write_results,
)

from mac_cases import Layer  # noqa: E402
from op_check import quant_params  # noqa: E402
from tflite_builder import ModelBuilder  # noqa: E402
from utvm.errors import UtvmError  # noqa: E402
from utvm.run.boards import BOARDS  # noqa: E402

BOARD_NAMES = ["mps2/an386", "mps3/an547"]

# -- models built here ---------------------------------------------------------------------------


class Net:
    """A chain of int8 layers on one ModelBuilder: the current tensor, its shape and scale."""

    def __init__(self, m: ModelBuilder, rng: np.random.Generator, x: int, shape: tuple[int, ...],
                 scale: float) -> None:
        self.m, self.rng, self.x, self.shape, self.sx = m, rng, x, shape, scale
        self.zp = 0
        self.n = 0

    def _weights(self, tag: str, shape: tuple[int, ...], axis: int, depth: int,
                 activation: str) -> tuple[int, int, tuple[float, int]]:
        """Per-channel symmetric int8 weights and an int32 bias, their scales chosen as a trained
        layer's (the sums' spread about 6 under RELU6, so the clamp bites but rarely saturates);
        returns the weights, the bias and the output's (scale, zero point)."""
        channels = shape[axis]
        sw = self.rng.uniform(0.004, 0.02, channels)
        # about 3 standard deviations of the sums of ``depth`` products of uniform int8 values
        spread = float(np.sqrt(depth) * self.sx * np.mean(sw) * 73 * 73 * 3)
        if activation == "RELU6":
            sw *= 6.0 / spread
            out = (6.0 / 255.0, -128)
        else:
            out = (2 * spread / 255.0, 0)
        wt = self.m.add_tensor(f"{tag}_w", shape, "int8", data=self.rng.integers(-127, 128, shape), scale=sw,
                               zero_point=[0] * channels, quantized_dimension=axis)
        sb = (self.sx * sw).astype(np.float32)
        bt = self.m.add_tensor(f"{tag}_b", (channels,), "int32", data=np.round(self.rng.normal(0, 0.5, channels) / sb),
                               scale=sb, zero_point=[0] * channels)
        return wt, bt, out

    def conv(self, cout: int, k: int = 1, stride: int = 1, depthwise: bool = False,
             activation: str = "NONE") -> None:
        self.n += 1
        n, h, w, cin = self.shape
        op = "DEPTHWISE_CONV_2D" if depthwise else "CONV_2D"
        tag = f"{op.lower()}_{self.n}"
        cout = cin if depthwise else cout
        wt, bt, (scale, zp) = self._weights(tag, (1, k, k, cout) if depthwise else (cout, k, k, cin),
                                            3 if depthwise else 0, k * k * (1 if depthwise else cin), activation)
        oh, ow = -(-h // stride), -(-w // stride)
        y = self.m.add_tensor(f"{tag}_y", (n, oh, ow, cout), "int8", scale=scale, zero_point=zp)
        options: dict[str, object] = {"padding": "SAME", "stride_w": stride, "stride_h": stride,
                                      "dilation_w_factor": 1, "dilation_h_factor": 1,
                                      "fused_activation_function": activation}
        if depthwise:
            options["depth_multiplier"] = 1
        self.m.add_operator(op, [self.x, wt, bt], [y], options)
        self.x, self.shape, self.sx, self.zp = y, (n, oh, ow, cout), scale, zp

    def fully_connected(self, units: int) -> None:
        self.n += 1
        batch, depth = self.shape
        wt, bt, (scale, zp) = self._weights(f"fc_{self.n}", (units, depth), 0, depth, "NONE")
        y = self.m.add_tensor(f"fc_{self.n}_y", (batch, units), "int8", scale=scale, zero_point=zp)
        self.m.add_operator("FULLY_CONNECTED", [self.x, wt, bt], [y], {"fused_activation_function": "NONE"})
        self.x, self.shape, self.sx, self.zp = y, (batch, units), scale, zp

    def add(self, other: int, other_scale: float) -> None:
        self.n += 1
        scale = 1.5 * max(self.sx, other_scale)
        y = self.m.add_tensor(f"add_{self.n}", self.shape, "int8", scale=scale, zero_point=0)
        self.m.add_operator("ADD", [self.x, other], [y], {"fused_activation_function": "NONE"})
        self.x, self.sx, self.zp = y, scale, 0

    def inverted_residual(self, cout: int, stride: int, expand: int = 6) -> None:
        x, sx, cin = self.x, self.sx, self.shape[3]
        self.conv(cin * expand, 1, activation="RELU6")
        self.conv(0, 3, stride, depthwise=True, activation="RELU6")
        self.conv(cout, 1)
        if stride == 1 and cin == cout:
            self.add(x, sx)


def mobilenet_v2_style(seed: int = 0) -> bytes:
    """1x64x64x3 int8: a 3x3 stride-2 conv, four inverted residual blocks (1x1 expand + RELU6,
    3x3 depthwise + RELU6, 1x1 project, ADD when the shapes match), global average pool,
    FULLY_CONNECTED, SOFTMAX."""
    m = ModelBuilder("MobileNetV2-style, seeded random weights")
    rng = np.random.default_rng(seed)
    x = m.add_tensor("input", (1, 64, 64, 3), "int8", scale=1 / 128, zero_point=0)
    net = Net(m, rng, x, (1, 64, 64, 3), 1 / 128)
    net.conv(8, 3, 2, activation="RELU6")
    for cout, stride in [(16, 2), (16, 1), (24, 2), (24, 1)]:
        net.inverted_residual(cout, stride)
    n, h, w, c = net.shape
    # the average pool and the reshape keep the scale and zero point of their input (TFLite requires it)
    pooled = m.add_tensor("pool", (n, 1, 1, c), "int8", scale=net.sx, zero_point=net.zp)
    m.add_operator("AVERAGE_POOL_2D", [net.x], [pooled],
                   {"padding": "VALID", "stride_w": 1, "stride_h": 1, "filter_width": w, "filter_height": h,
                    "fused_activation_function": "NONE"})
    shape = m.add_tensor("flat_shape", (2,), "int32", data=[1, c])
    flat = m.add_tensor("flat", (1, c), "int8", scale=net.sx, zero_point=net.zp)
    m.add_operator("RESHAPE", [pooled, shape], [flat], {"new_shape": [1, c]})
    net.x, net.shape = flat, (1, c)
    net.fully_connected(10)
    y = m.add_tensor("output", (1, 10), "int8", scale=1 / 256, zero_point=-128)
    m.add_operator("SOFTMAX", [net.x], [y], {"beta": 1.0})
    return m.finish([x], [y])


def batch_matmul_int8(seed: int = 0) -> bytes:
    """BATCH_MATMUL int8 of two inputs: [1, 4, 32, 64] x [1, 4, 64, 32] (attention-sized)."""
    rng = np.random.default_rng(seed)
    m = ModelBuilder("batch_matmul int8")
    qa, qb = quant_params(rng, -3.0, 3.0), quant_params(rng, -3.0, 3.0)
    qy = quant_params(rng, -20.0, 20.0)
    a = m.add_tensor("a", (1, 4, 32, 64), "int8", scale=qa[0], zero_point=qa[1])
    b = m.add_tensor("b", (1, 4, 64, 32), "int8", scale=qb[0], zero_point=qb[1])
    y = m.add_tensor("y", (1, 4, 32, 32), "int8", scale=qy[0], zero_point=qy[1])
    m.add_operator("BATCH_MATMUL", [a, b], [y], {"adj_x": False, "adj_y": False})
    return m.finish([a, b], [y])


def depthwise_int16(seed: int = 0) -> bytes:
    """16x8 DEPTHWISE_CONV_2D 3x3, SAME, on 1x24x24x32, int64 bias."""
    rng = np.random.default_rng(seed)
    m = ModelBuilder("depthwise_conv_2d 16x8")
    L = Layer(m, rng, "dw", "int16")
    x = L.input((1, 24, 24, 32), [], [])
    wt = L.weights((1, 3, 3, 32), 3)
    bt = L.bias(32, "int64")
    y = L.output((1, 24, 24, 32), 9)
    m.add_operator("DEPTHWISE_CONV_2D", [x, wt, bt], [y],
                   {"padding": "SAME", "stride_w": 1, "stride_h": 1, "dilation_w_factor": 1,
                    "dilation_h_factor": 1, "depth_multiplier": 1, "fused_activation_function": "NONE"})
    return m.finish([x], [y])


def fully_connected_int16(seed: int = 0) -> bytes:
    """16x8 FULLY_CONNECTED [8, 256] x [128, 256]^T, int64 bias."""
    rng = np.random.default_rng(seed)
    m = ModelBuilder("fully_connected 16x8")
    L = Layer(m, rng, "fc", "int16")
    x = L.input((8, 256), [], [])
    wt = L.weights((128, 256), 0)
    bt = L.bias(128, "int64")
    y = L.output((8, 128), 256)
    m.add_operator("FULLY_CONNECTED", [x, wt, bt], [y], {"fused_activation_function": "NONE"})
    return m.finish([x], [y])


#: name -> builder of the models made here
BUILT: dict[str, Callable[[], bytes]] = {
    "mobilenet_v2_style": mobilenet_v2_style,
    "batch_matmul_int8": batch_matmul_int8,
    "depthwise_conv_2d_int16": depthwise_int16,
    "fully_connected_int16": fully_connected_int16,
}
#: name -> path under ../shared/models of the stored ones
SHARED = {
    "trained_lstm_int8": "tflm/trained_lstm_int8.tflite",
    "lstm_unrolled_int8": "corpus/lstm_unrolled_int8.tflite",
    "transpose_conv_int8": "corpus/transpose_conv_int8.tflite",
    "seanet_conv0_int16": "tflm/seanet/conv/conv0.tflite",
    "seanet_transpose_conv0_int16": "tflm/seanet/transpose_conv/transpose_conv0.tflite",
    "keyword_scrambled": "tflm/keyword_scrambled.tflite",
    "keyword_scrambled_8bit": "tflm/keyword_scrambled_8bit.tflite",
}
MODELS = ["mobilenet_v2_style", "trained_lstm_int8", "lstm_unrolled_int8", "keyword_scrambled",
          "keyword_scrambled_8bit", "transpose_conv_int8", "seanet_conv0_int16", "seanet_transpose_conv0_int16",
          "batch_matmul_int8", "depthwise_conv_2d_int16", "fully_connected_int16"]
WHAT = {
    "mobilenet_v2_style": "int8 CONV_2D, DEPTHWISE_CONV_2D, ADD, AVERAGE_POOL_2D, FULLY_CONNECTED, SOFTMAX",
    "trained_lstm_int8": "int8 UNIDIRECTIONAL_SEQUENCE_LSTM, FULLY_CONNECTED, SOFTMAX (TFLite Micro's trained LSTM)",
    "lstm_unrolled_int8": "int8 LSTM unrolled: FULLY_CONNECTED, LOGISTIC, TANH, MUL, ADD, STRIDED_SLICE",
    "keyword_scrambled": "int8 SVDF (int16 state) x7, FULLY_CONNECTED, SOFTMAX, QUANTIZE (TFLite Micro's keyword "
                         "benchmark)",
    "keyword_scrambled_8bit": "int8 SVDF (int8 state) x7, FULLY_CONNECTED, SOFTMAX, QUANTIZE (TFLite Micro's "
                              "keyword benchmark, 8-bit state)",
    "transpose_conv_int8": "int8 TRANSPOSE_CONV",
    "seanet_conv0_int16": "16x8 CONV_2D (SEANet conv0)",
    "seanet_transpose_conv0_int16": "16x8 TRANSPOSE_CONV (SEANet transpose_conv0)",
    "batch_matmul_int8": "int8 BATCH_MATMUL [1,4,32,64] x [1,4,64,32]",
    "depthwise_conv_2d_int16": "16x8 DEPTHWISE_CONV_2D 3x3 on 1x24x24x32",
    "fully_connected_int16": "16x8 FULLY_CONNECTED [8,256] x [128,256]^T",
}


def model_path(name: str, models_dir: Path, build_dir: Path) -> Path:
    if name in SHARED:
        return models_dir / SHARED[name]
    path = build_dir / f"{name}.tflite"
    path.write_bytes(BUILT[name]())
    return path


def markdown(rows: list[dict[str, Any]]) -> str:
    head = ("| model | operators | board (CPU) | matches TFLM | instructions | MACs | instr./MAC | pool B "
            "| flash B (code + constants) |")

    def cells(r: dict[str, Any]) -> list[str]:
        return [match_cell(r), _fmt(r["instructions"]), _fmt(r["macs"]), _fmt(r["instructions_per_mac"]),
                _fmt(r["workspace_bytes"]), flash_cell(r)]

    lines = table_lines(head, rows, lambda r: f"{r['model']} | {WHAT.get(r['model'], '')}", cells)
    notes = [
        "",
        ICOUNT_NOTE + " MACs: utvm's count of the model's multiply-accumulates (the operators' `macs`).",
        "Matches TFLM: outputs identical to TFLite Micro's reference kernels on the same inputs "
        "(the runner's seeded random inputs). Flash: the model's code and constants in the linked firmware.",
        "Stateful models (LSTM, SVDF): the first run, which also resets the state (the keyword models: "
        "about 42,000 instructions of it clear 10 KiB of state).",
        "TFLite Micro's own Cortex-M build is not buildable here; models_cmsis-nn.md (--offload cmsis-nn) "
        "runs the operators CMSIS-NN has a utvm glue for (int8 conv, depthwise, fully connected, pooling, "
        "softmax, add) in Arm's kernels instead, as TFLite Micro + CMSIS-NN would.",
    ]
    return "\n".join(lines + notes) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--boards", type=_split, default=BOARD_NAMES, help="comma-separated (default: an386, an547)")
    ap.add_argument("--models", type=_split, default=None, help=f"comma-separated (default: {','.join(MODELS)})")
    ap.add_argument("--models-dir", type=Path, default=ROOT.parent / "shared" / "models")
    ap.add_argument("--out-dir", type=Path, default=ROOT / "benchmarks" / "results")
    ap.add_argument("--offload", action="append", default=[], help="external module (e.g. cmsis-nn)")
    ap.add_argument("--cmsis-nn-dir", type=Path, help="CMSIS-NN sources (default: $CMSIS_NN_DIR)")
    args = ap.parse_args(argv)
    offload = tuple(args.offload)
    for board in args.boards:
        if board not in BOARDS:
            ap.error(f"unknown board {board!r}")
    missing = [m for m in MODELS if m in SHARED and not (args.models_dir / SHARED[m]).is_file()]
    if args.models is None:  # the default list: a stored model that is not there is left out, said on stderr
        for model in missing:
            print(f"note: {SHARED[model]} not in {args.models_dir}: {model} left out", file=sys.stderr)
        args.models = [m for m in MODELS if m not in missing]
    for model in args.models:
        if model not in MODELS:
            ap.error(f"unknown model {model!r} (choose from {', '.join(MODELS)})")
        if model in missing:
            ap.error(f"model {model!r} not found in {args.models_dir}")

    rows: list[dict[str, Any]] = []
    total = len(args.models) * len(args.boards)
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="utvm-bench-models-") as build:
        for model in args.models:
            path = model_path(model, args.models_dir, Path(build))
            for board in args.boards:
                print(f"[{len(rows) + 1}/{total}] {model} on {board} ...", file=sys.stderr, flush=True)
                with tempfile.TemporaryDirectory(prefix="utvm-bench-") as tmp:
                    try:
                        row = bench_one(path, board, Path(tmp), offload, args.cmsis_nn_dir)
                    except UtvmError as exc:
                        rows.append(error_row(model, board, exc))
                        continue
                row["model"] = model
                rows.append(row)
                print_progress(row, t0)
    title = "MobileNetV2-style, LSTM, SVDF and MAC-operator models on the emulated boards"
    title += f" (--offload {', '.join(offload)})" if offload else ""
    return write_results(args.out_dir, "models" + "".join(f"_{m}" for m in offload), title, markdown(rows), rows, t0)


if __name__ == "__main__":
    raise SystemExit(main())
