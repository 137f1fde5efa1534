"""Where a model's constant bytes go: per layer, the bytes its kernel's constants take in flash
against the layer's bytes in the model (int8 weights, int32 biases), for each CPU.

    python3 benchmarks/bench_flash.py [--cpus cortex-m4,cortex-m55] [--models kws_ref_model,...] [--layers]

Compiles (lowers) each model for each CPU the way `utvm compile --cpu` does, channels that only
meet zero weights dropped (lower/channels.py), and prints per model and CPU the model's constant
bytes, the compiled constants and their ratio, and the ratio to the "TFLM form": the int8 weights
plus 12 bytes per output channel of each weighted layer (bias, multiplier and shift, what TFLite
Micro keeps per channel); with --layers also every kernel's constants beside its layer's own
bytes and its variant. With --out FILE also a markdown table of the totals. Not a test.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from utvm.importer import load_model  # noqa: E402
from utvm.ir import Graph  # noqa: E402
from utvm.lower.channels import drop_channels  # noqa: E402
from utvm.lower.lowering import lower_graph  # noqa: E402
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


def report(path: Path, cpu: str, layers: bool) -> tuple[int, int, int]:
    """(model constant bytes, its TFLM form, compiled constant bytes) of one model on one CPU."""
    source = load_model(path)
    graph, dropped = drop_channels(source)
    lowered = lower_graph(graph, f"tvmgen_{graph.name}", cpu)
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
    weights, tflm = model_bytes(source), tflm_bytes(source)
    print(f"{path.stem:24} {cpu:11} model {weights:9,} B  constants {total:9,} B  {total / weights:5.2f}x"
          f"  TFLM form {tflm:9,} B {total / tflm:5.2f}x  ({dropped} channels dropped)")
    return weights, tflm, total


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cpus", default=",".join(CPUS), help="comma-separated (default: %(default)s)")
    p.add_argument("--models", default=",".join(MODELS), help="comma-separated model names")
    p.add_argument("--models-dir", type=Path, default=ROOT.parent / "shared" / "models")
    p.add_argument("--layers", action="store_true", help="every kernel's constants too")
    p.add_argument("--out", type=Path, help="also write the totals as a markdown table here")
    args = p.parse_args()
    rows = ["| model | CPU | model constants B | TFLM form B | compiled constants B | / model | / TFLM form |",
            "|---|---|---|---|---|---|---|"]
    for name in args.models.split(","):
        for cpu in args.cpus.split(","):
            weights, tflm, total = report(args.models_dir / f"{name}.tflite", cpu, args.layers)
            rows.append(f"| {name} | {cpu} | {weights:,} | {tflm:,} | {total:,} | {total / weights:.2f} "
                        f"| {total / tflm:.2f} |")
    if args.out:
        note = ("\nModel constants: the .tflite's (int8 weights, int32 biases). TFLM form: the int8 weights plus "
                f"{PER_CHANNEL} B per output channel (bias, multiplier, shift). Compiled: the constants utvm emits "
                "(benchmarks/bench_flash.py; channels that cannot change an output dropped first).\n")
        args.out.write_text("# Constants in flash against the model's weights\n\n" + "\n".join(rows) + "\n" + note)
    return 0


if __name__ == "__main__":
    sys.exit(main())
