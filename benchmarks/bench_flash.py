"""Where a model's constant bytes go: per layer, the bytes its kernel's constants take in flash
against the layer's bytes in the model (int8 weights, int32 biases), for each CPU.

    python3 benchmarks/bench_flash.py [--cpus cortex-m4,cortex-m55] [--models kws_ref_model,...] [--layers]

Compiles (lowers) each model for each CPU the way `utvm compile --cpu` does, channels that only
meet zero weights dropped (lower/channels.py), and prints per model and CPU the model's constant
bytes, the compiled constants and their ratio; with --layers also every kernel's constants
beside its layer's own bytes and its variant. Not a test: figures only (no files written).
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


def report(path: Path, cpu: str, layers: bool) -> tuple[int, int]:
    """(model constant bytes, compiled constant bytes) of one model on one CPU."""
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
    weights = model_bytes(source)
    print(f"{path.stem:24} {cpu:11} model {weights:9,} B  constants {total:9,} B  {total / weights:5.2f}x"
          f"  ({dropped} channels dropped)")
    return weights, total


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cpus", default=",".join(CPUS), help="comma-separated (default: %(default)s)")
    p.add_argument("--models", default=",".join(MODELS), help="comma-separated model names")
    p.add_argument("--models-dir", type=Path, default=ROOT.parent / "shared" / "models")
    p.add_argument("--layers", action="store_true", help="every kernel's constants too")
    args = p.parse_args()
    for name in args.models.split(","):
        for cpu in args.cpus.split(","):
            report(args.models_dir / f"{name}.tflite", cpu, args.layers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
