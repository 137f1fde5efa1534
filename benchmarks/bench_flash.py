"""Where a model's constant bytes go: per layer, the bytes its kernel's constants take in flash
against the layer's bytes in the model (int8 weights, int32 biases), for each CPU.

    python3 benchmarks/bench_flash.py [--cpus cortex-m4,cortex-m55] [--models kws_ref_model,...] [--layers]
                                      [--bound] [--max-flash BYTES]

Compiles (lowers) each model for each CPU the way `utvm compile --cpu` does, channels that only
meet zero weights dropped (lower/channels.py), and prints per model and CPU the model's constant
bytes, the compiled constants and their ratio, and the ratio to the "TFLM form": the int8 weights
plus 12 bytes per output channel of each weighted layer (bias, multiplier and shift, what TFLite
Micro keeps per channel); with --layers also every kernel's constants beside its layer's own
bytes and its variant. With --bound, per weighted layer what its per-channel data needs at
least, stored losslessly in the narrowest form (bound_rows): the folded bias (bias - zx * sum(w),
what a kernel adds to its accumulator) in the bits its values need, the multiplier in 30 bits
(QuantizeMultiplier's are in [2**30, 2**31): the top bit implied) or nothing when the layer's are
all equal, the shift in the bits that tell its distinct values apart, bit-packed per channel,
whole bytes per channel. With --max-flash BYTES, compiled as `utvm compile --max-flash` does:
a model whose constants are over BYTES with every operator's leanest configuration (OpDef.lean:
int8 weights kept as int8, packed constants). With --out FILE also a markdown table of the
totals. Not a test.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import numpy as np  # noqa: E402

from utvm.compiler import lean_configs  # noqa: E402
from utvm.importer import load_model  # noqa: E402
from utvm.ir import Graph  # noqa: E402
from utvm.kernels import fixedpoint as fp  # noqa: E402
from utvm.kernels.requant import effective_scales  # noqa: E402
from utvm.kernels.target import Target  # noqa: E402
from utvm.lower.channels import drop_channels  # noqa: E402
from utvm.lower.lowering import Lowered, lower_graph  # noqa: E402
from utvm.plan.memory import resolve_alias  # noqa: E402

MODELS = ["kws_ref_model", "vww_96_int8", "pretrainedResnet_quant", "ad01_int8"]
CPUS = ["cortex-m4", "cortex-m55"]


def model_bytes(g: Graph, names: list[str] | None = None) -> int:
    """Bytes of the model's constants (of ``names`` only, when given)."""
    return sum(t.nbytes for n, t in g.tensors.items() if t.is_constant and (names is None or n in names))


#: bytes per output channel besides the int8 weights in the TFLM form: bias, multiplier, shift
PER_CHANNEL = 12


def tflm_bytes(g: Graph) -> int:
    """The model's constants with every weighted layer's biases as PER_CHANNEL bytes a channel."""
    total = model_bytes(g)
    for op in g.ops:
        if op.kind in ("conv2d", "depthwise_conv2d", "fully_connected") and len(op.inputs) > 2 and op.inputs[2]:
            b = g.tensors[op.inputs[2]]
            if b.is_constant:
                total += PER_CHANNEL * b.size - b.nbytes
    return total


WEIGHTED = ("conv2d", "depthwise_conv2d", "fully_connected")


def _signed_bits(v: np.ndarray) -> int:
    """Bits of the narrowest two's complement type that holds every value of ``v``."""
    lo, hi = int(v.min()), int(v.max())
    return next(n for n in range(1, 65) if -(1 << (n - 1)) <= lo and hi < (1 << (n - 1)))


def bound_rows(g: Graph) -> list[tuple[str, int, int, int, int, int, int]]:
    """Per int8 weighted layer: (name, output channels, int8 weight bytes, folded-bias bits,
    multiplier bits, shift bits, least bytes of per-channel data in whole bytes per channel)."""
    rows = []
    for i, op in enumerate(g.ops):
        if op.kind not in WEIGHTED or len(op.inputs) < 2:
            continue
        x, w, y = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
        if w.data is None or w.dtype != "int8" or x.quant is None or w.quant is None or y.quant is None:
            continue
        depthwise = op.kind == "depthwise_conv2d"
        wd = w.data.astype(np.int64)
        cout = wd.shape[-1] if depthwise else wd.shape[0]
        wsum = wd.reshape(-1, cout).sum(axis=0) if depthwise else wd.reshape(cout, -1).sum(axis=1)
        b = g.tensors[op.inputs[2]] if len(op.inputs) > 2 and op.inputs[2] else None
        bias = b.data.astype(np.int64).reshape(-1) if b is not None and b.data is not None else np.zeros(cout, np.int64)
        folded = bias - x.quant.scalar()[1] * wsum
        pairs = [fp.quantize_multiplier(float(v)) for v in effective_scales(x, w, y, op.kind != "fully_connected")]
        mults, shifts = {m for m, _ in pairs}, {s for _, s in pairs}
        bbits = _signed_bits(folded)
        mbits = 30 if len(mults) > 1 else 0
        sbits = (len(shifts) - 1).bit_length()
        rows.append((f"{op.kind}_{i}", cout, wd.size, bbits, mbits, sbits, cout * -(-(bbits + mbits + sbits) // 8)))
    return rows


def bound(path: Path) -> tuple[int, int]:
    """Prints bound_rows of a model (channels that cannot change an output dropped first);
    (int8 weight bytes, least bytes of per-channel data)."""
    graph, _ = drop_channels(load_model(path))
    rows = bound_rows(graph)
    print(f"{path.stem}: layer, channels, int8 weights B, folded bias bits, multiplier bits, shift bits, "
          "least per-channel B")
    for name, cout, wbytes, bb, mb, sb, least in rows:
        print(f"  {name:24} {cout:5} {wbytes:8,} {bb:3} {mb:3} {sb:3} {least:7,}")
    weights, least = sum(r[2] for r in rows), sum(r[6] for r in rows)
    model = model_bytes(load_model(path))
    print(f"  int8 weights {weights:,} B + per-channel {least:,} B = {weights + least:,} B: "
          f"{(weights + least) / model:.3f}x the model's {model:,} B")
    return weights, least


def constants(lowered: Lowered) -> int:
    """Bytes of the constants the kernels of ``lowered`` take (each tensor once)."""
    names = {resolve_alias(arg, lowered.aliases) for call in lowered.calls for arg in call.args}
    return sum(lowered.graph.tensors[n].nbytes for n in names if lowered.graph.tensors[n].is_constant)


def report(path: Path, cpu: str, layers: bool, max_flash: int | None = None) -> tuple[int, int, int, list[str]]:
    """(model constant bytes, its TFLM form, compiled constant bytes, the markdown rows of its
    layers) of one model on one CPU (``max_flash``: see --max-flash)."""
    source = load_model(path)
    graph, dropped = drop_channels(source)
    outs = {op.outputs[0]: op for op in graph.ops if op.outputs}
    rows = []
    lowered = lower_graph(graph, f"tvmgen_{graph.name}", cpu)
    if max_flash is not None and constants(lowered) > max_flash:
        lowered = lower_graph(graph, f"tvmgen_{graph.name}", cpu, configs=lean_configs(graph, Target.for_cpu(cpu)))
    seen: set[str] = set()
    total = 0
    for call in lowered.calls:
        own = 0
        for arg in call.args:
            name = resolve_alias(arg, lowered.aliases)
            t = lowered.graph.tensors[name]
            if t.is_constant and name not in seen:
                seen.add(name)
                own += t.nbytes
        total += own
        if layers and own:
            op = source.ops[call.op_index]
            mine = model_bytes(source, [n for n in op.inputs if n])
            print(f"  {call.op_name:28} {call.variant:12} model {mine:8,} B  flash {own:8,} B  "
                  f"{own / max(mine, 1):5.2f}x")
            kept = outs.get(op.outputs[0], op)
            w = graph.tensors[kept.inputs[1]] if len(kept.inputs) > 1 and kept.inputs[1] else None
            cout = graph.tensors[kept.outputs[0]].shape[-1]
            wbytes = w.nbytes if w is not None and w.is_constant and w.dtype == "int8" else 0
            rows.append(f"| {call.op_name} | {call.variant} | {cout} | {wbytes:,} | {mine:,} | {own:,} | "
                        f"{(own - wbytes) / cout:.1f} |")
    weights, tflm = model_bytes(source), tflm_bytes(source)
    print(f"{path.stem:24} {cpu:11} model {weights:9,} B  constants {total:9,} B  {total / weights:5.2f}x"
          f"  TFLM form {tflm:9,} B {total / tflm:5.2f}x  ({dropped} channels dropped)")
    return weights, tflm, total, rows


#: where the bytes above the int8 weights go, per kernel (the layouts of lower/dsp.py, ops/, lower/helium.py)
LAYOUTS = """## Bytes per output channel above the int8 weights

- dsp_gemm (Cortex-M4/M7/M33), per-channel constants: the accumulator's start (the folded bias, once
  per block), m, c (rounding and output zero point at the channel's shift) and e (the shift | the
  last flag): 16 B, each an operand register of the requantization loaded by one LDM per channel
  and row pair; per-tensor constants (KWS's fully connected layer): the bias, and m, c, e per block
  of four channels; with knob consts "packed" (what --max-flash takes) 8 B where the layer has at
  most four shifts: the start and one word, m - 2**30 | the shift's index << 30, expanded into m,
  c, e in scratch at each call (12 B of RAM a channel, about 6 instructions a channel per call; no
  instruction more per block of pairs of rows, two per block of single rows).
- dsp_dwp: the bias, m and e | l << 8 | k << 16 (12 B), then the layer's r values; with knob
  consts "packed" (what --max-flash takes: about 3 instructions a channel more with the 3x3
  assembly) 8 B where they fit, the bias (a multiple of 2**l) carrying in its low bits the index
  of the channel's third word in a per-layer table.
- helium conv42 (Cortex-M55): per channel the bias, m and shift | output offset (12 B) after each
  pair of filter vectors; the weights padded to whole 16-byte steps (KWS's first layer: K 40 -> 48).
- helium dwg: a 32-byte record per channel: 9 taps and 13 zero lanes (the three filter vectors of a
  gather at offsets 6, 3 and 0 of one 22-byte window), the shift and a zero byte, the bias and m.
"""


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cpus", default=",".join(CPUS), help="comma-separated (default: %(default)s)")
    p.add_argument("--models", default=",".join(MODELS), help="comma-separated model names")
    p.add_argument("--models-dir", type=Path, default=ROOT.parent / "shared" / "models")
    p.add_argument("--layers", action="store_true", help="every kernel's constants too")
    p.add_argument("--bound", action="store_true", help="per layer the least lossless per-channel bytes")
    p.add_argument("--max-flash", type=int, metavar="BYTES", help="compile as `utvm compile --max-flash` does")
    p.add_argument("--out", type=Path, help="also write the totals as a markdown table here")
    args = p.parse_args()
    if args.bound:
        for name in args.models.split(","):
            bound(args.models_dir / f"{name}.tflite")
        return 0
    rows = ["| model | CPU | model constants B | TFLM form B | least B | compiled constants B | / model "
            "| least / model | / TFLM form |", "|---|---|---|---|---|---|---|---|---|"]
    per_layer = []
    for name in args.models.split(","):
        path = args.models_dir / f"{name}.tflite"
        least = sum(r[2] + r[6] for r in bound_rows(drop_channels(load_model(path))[0]))
        for cpu in args.cpus.split(","):
            weights, tflm, total, layer_rows = report(path, cpu, args.layers, args.max_flash)
            rows.append(f"| {name} | {cpu} | {weights:,} | {tflm:,} | {least:,} | {total:,} | {total / weights:.2f} "
                        f"| {least / weights:.3f} | {total / tflm:.2f} |")
            if layer_rows:
                per_layer += [f"\n### {name} on the {cpu}\n", "| layer | variant | output channels | int8 weights B "
                              "| model B | compiled B | (compiled - int8 weights) / channel B |", "|---|---|---|---|---|---|---|",
                              *layer_rows]
    if args.out:
        note = ("\nModel constants: the .tflite's (int8 weights, int32 biases). TFLM form: the int8 weights plus "
                f"{PER_CHANNEL} B per output channel (bias, multiplier, shift). Least: the int8 weights plus each "
                "layer's per-channel data stored losslessly in whole bytes per channel of the narrowest fields "
                "(`--bound`: the folded bias in the bits its values need, the multiplier in 30 bits unless the "
                "layer's are all equal, the shift in the bits that tell the layer's values apart). Compiled: the "
                "constants utvm emits (benchmarks/bench_flash.py; channels that cannot change an output dropped "
                "first).\n")
        layers_md = "\n" + LAYOUTS + "\n## Per layer (`--layers`)\n" + "\n".join(per_layer) + "\n" if per_layer else ""
        args.out.write_text("# Constants in flash against the model's weights\n\n" + "\n".join(rows) + "\n" + note
                            + layers_md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
