#!/usr/bin/env python3
"""Autotuning on the emulated boards: instructions per MAC, default configuration vs tuned.

For each int8 model (the four shared ones and the int8 corpus models with a CONV_2D,
DEPTHWISE_CONV_2D or FULLY_CONNECTED layer) and each board: `utvm tune` (QEMU's exact
instruction counts, every kernel measured alone), then the whole model run untuned and with
the log (`run --tuning-log`, outputs compared with TFLite Micro both times).

    python3 benchmarks/bench_tune.py [--boards mps2/an386,mps3/an547] [--models kws_ref_model,...]
                                     [--trials 8] [--jobs 2] [--update]

Writes benchmarks/results/tune_<cpu>.md, tune_<cpu>.json and tune_<cpu>.png per board (CPU);
progress on stderr. Not a test: figures only.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from utvm.configs.log import read_log  # noqa: E402
from utvm.errors import UtvmError  # noqa: E402
from utvm.run.boards import get_board  # noqa: E402
from utvm.run.runner import run_model  # noqa: E402
from utvm.tune.tuner import KernelResult, TuneOptions, tune_model  # noqa: E402

SHARED = ["kws_ref_model", "vww_96_int8", "pretrainedResnet_quant", "ad01_int8"]
SHORT = {"kws_ref_model": "KWS", "vww_96_int8": "VWW", "pretrainedResnet_quant": "IC", "ad01_int8": "AD"}
BOARD_NAMES = ["mps2/an386", "mps3/an547"]
#: the issue's targets: (every layer, every shared model), instructions per MAC
TARGETS = {"cortex-m4": (2.0, 1.3), "cortex-m55": (1.0, 0.35)}
MAC_OPS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")


def corpus_models(models_dir: Path) -> list[str]:
    """The int8 corpus models whose README row names a layer with MACs."""
    readme = (models_dir / "corpus" / "README.md").read_text()
    out = []
    for line in readme.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 3 and cells[1].endswith("_int8.tflite") and any(f"{op}:" in cells[3] for op in MAC_OPS):
            out.append("corpus/" + cells[1].removesuffix(".tflite"))
    return out


def _shape(workload: dict[str, Any]) -> str:
    """input x weights -> output, with stride and multiplier where the operator has them."""
    t = workload["tensors"]
    act = [x["shape"] for x in t if not x["constant"]]
    weights = [x["shape"] for x in t if x["constant"] and len(x["shape"]) > 1]
    a = workload["attrs"]
    text = f"{act[0]} x {weights[0] if weights else '?'} -> {act[-1]}"
    stride = a.get("stride") or a.get("strides")
    if stride:
        text += f", stride {stride}"
    if a.get("depth_multiplier", 1) not in (1, None):
        text += f", multiplier {a['depth_multiplier']}"
    return text


def kernel_rows(model: str, results: list[KernelResult], log: Path) -> list[dict[str, Any]]:
    workloads = {r["key"]: r["workload"] for r in read_log(log)}
    rows = []
    for r in results:
        d, b = r.default.instructions or 0, r.best.instructions or 0
        rows.append({
            "model": model, "layer": r.source, "op": r.op, "shape": _shape(workloads[r.key]), "macs": r.macs,
            "configurations": r.configs, "measured": r.measured, "rejected": r.rejected,
            "default_config": r.default.config, "default_instructions": d,
            "tuned_config": r.best.config, "tuned_instructions": b,
            "default_ipm": round(d / r.macs, 3) if r.macs else None,
            "tuned_ipm": round(b / r.macs, 3) if r.macs else None,
            # the executor's fixed cost around one operator (the null model), and the tuned
            # operator's own instructions without it: what the per-layer targets are about
            "fixed_instructions": r.best.fixed,
            "tuned_own_ipm": round(r.best.own / r.macs, 3) if r.macs and r.best.own is not None else None,
        })
    return rows


def _model_run(path: Path, board: str, log: Path | None, work: Path) -> dict[str, Any]:
    r = run_model(path, board, workdir=work, tuning_log=log)
    return {"instructions": r.instructions, "macs": r.macs, "match": r.outputs_match_reference,
            "ipm": round(r.instructions_per_mac, 3) if r.instructions_per_mac else None}


def bench_model(path: Path, board: str, trials: int, jobs: int, work: Path,
                log_dir: Path | None = None) -> dict[str, Any]:
    name = path.stem if path.parent.name != "corpus" else f"corpus/{path.stem}"
    if log_dir is not None:
        log_dir.mkdir(parents=True, exist_ok=True)
    log = (log_dir or work) / f"{path.stem}.json"
    start = time.monotonic()
    results = tune_model(path, log, TuneOptions(board=board, trials=trials, jobs=jobs, work_dir=work / "tune"),
                         lambda msg: print(f"    {msg}", file=sys.stderr, flush=True))
    seconds = time.monotonic() - start
    untuned = _model_run(path, board, None, work / "untuned")
    tuned = _model_run(path, board, log, work / "tuned")
    return {"model": name, "board": board, "cpu": get_board(board).cpu, "trials": trials, "jobs": jobs,
            "tune_seconds": round(seconds, 1), "kernels": kernel_rows(name, results, log),
            "measured": sum(r.measured for r in results), "untuned": untuned, "tuned": tuned}


def _f(v: Any, spec: str = ".2f") -> str:
    return "-" if v is None else format(v, spec)


def _cfg(c: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" if k != "variant" else str(v) for k, v in c.items())


def markdown(rows: list[dict[str, Any]], cpu: str) -> str:
    layer_max, model_max = TARGETS.get(cpu, (None, None))
    out = [f"# Autotuning on {rows[0]['board']} ({cpu}): instructions per MAC, default vs tuned", "",
           "## Models", "",
           "| model | MACs | untuned instr. | untuned instr./MAC | tuned instr. | tuned instr./MAC | matches TFLM "
           "(untuned/tuned) | kernels | trials measured | tuning s |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            out.append(f"| {r['model']} | ERROR: {r['error']} |" + " |" * 8)
            continue
        u, t = r["untuned"], r["tuned"]
        label = f"{SHORT[r['model']]} ({r['model']})" if r["model"] in SHORT else r["model"]
        out.append(f"| {label} | {u['macs']:,} | {_f(u['instructions'], ',')} | {_f(u['ipm'])} "
                   f"| {_f(t['instructions'], ',')} | {_f(t['ipm'])} | {'yes' if u['match'] else 'NO'}/"
                   f"{'yes' if t['match'] else 'NO'} | {len(r['kernels'])} | {r['measured']} | {r['tune_seconds']:.0f} |")
    ok = [r for r in rows if "error" not in r]
    total_s = sum(r["tune_seconds"] for r in ok)
    out += ["", f"Tuning: `--trials {ok[0]['trials'] if ok else '?'} --jobs {ok[0]['jobs'] if ok else '?'}`, "
            f"{sum(r['measured'] for r in ok)} configurations measured in {total_s:.0f} s wall clock "
            "(2 cores shared with other work, under nice)."]
    out += ["", "## Kernels (each distinct workload, measured alone)", "",
            "| model | layer | shape | MACs | configs | default | default instr./MAC | tuned | tuned instr./MAC "
            "| tuned, operator alone |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    over = []
    for r in ok:
        for k in r["kernels"]:
            mark = ""
            own = k.get("tuned_own_ipm")
            if layer_max is not None and (own if own is not None else k["tuned_ipm"] or 0) > layer_max:
                mark = " **>" + str(layer_max) + "**"
                over.append(f"{r['model']} {k['layer']}")
            out.append(f"| {r['model']} | {k['layer']} | {k['shape']} | {k['macs']:,} | {k['configurations']} "
                       f"| {_cfg(k['default_config'])} | {_f(k['default_ipm'])} | {_cfg(k['tuned_config'])} "
                       f"| {_f(k['tuned_ipm'])} | {_f(own)}{mark} |")
    if layer_max is not None:
        shared = [r for r in ok if r["model"] in SHORT]
        model_over = [r["model"] for r in shared if (r["tuned"]["ipm"] or 0) > model_max]
        out += ["", f"Targets ({cpu}): every layer <= {layer_max} instr./MAC: "
                f"{'met' if not over else f'not met by {len(over)} kernels'}; each shared model <= {model_max}: "
                f"{'met' if not model_over else 'not met by ' + ', '.join(model_over)}."]
    fixed = sorted({k["fixed_instructions"] for r in ok for k in r["kernels"] if k.get("fixed_instructions")})
    out += ["", "Kernel figures (default, tuned) are a one-operator model run alone, the executor's fixed cost "
            "around the operator included (run entry, I/O checks, binding the tensors, the call: "
            f"{', '.join(map(str, fixed)) or '?'} instructions, measured in the same firmware by the model with its "
            "operator replaced by an empty function). \"Operator alone\" leaves that fixed cost out: the "
            "operator's packed function and kernel, what the per-layer targets are checked against. "
            "Instructions: QEMU -icount, FPGAIO counter (resolution 40 instructions on MPS2, 50 on the AN547)."]
    return "\n".join(out) + "\n"


def chart(rows: list[dict[str, Any]], cpu: str, png: Path) -> None:
    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = [r for r in rows if "error" not in r]
    kernels = [(f"{SHORT.get(r['model'], r['model'].removeprefix('corpus/'))} {k['layer']}", k)
               for r in ok for k in r["kernels"]]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(max(8, 0.32 * len(kernels)), 9),
                                      gridspec_kw={"height_ratios": [1, 2]})
    names = [SHORT.get(r["model"], r["model"].removeprefix("corpus/")) for r in ok]
    x = range(len(ok))
    top.bar([i - 0.2 for i in x], [r["untuned"]["ipm"] or 0 for r in ok], 0.4, label="untuned")
    top.bar([i + 0.2 for i in x], [r["tuned"]["ipm"] or 0 for r in ok], 0.4, label="tuned")
    top.set_xticks(list(x), names, rotation=30, ha="right", fontsize=8)
    top.set_ylabel("instructions / MAC")
    top.set_title(f"{ok[0]['board']} ({cpu}): models")
    bx = range(len(kernels))
    bottom.bar([i - 0.2 for i in bx], [k["default_ipm"] or 0 for _, k in kernels], 0.4, label="default")
    bottom.bar([i + 0.2 for i in bx], [k["tuned_ipm"] or 0 for _, k in kernels], 0.4, label="tuned")
    bottom.set_xticks(list(bx), [n for n, _ in kernels], rotation=90, fontsize=6)
    bottom.set_ylabel("instructions / MAC")
    bottom.set_title("kernels (measured alone)")
    if cpu in TARGETS:
        top.axhline(TARGETS[cpu][1], color="grey", ls="--", lw=0.8, label="model target")
        bottom.axhline(TARGETS[cpu][0], color="grey", ls="--", lw=0.8, label="layer target")
    top.legend(fontsize=8)
    bottom.legend(fontsize=8)
    bottom.set_yscale("log")
    bottom.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    bottom.yaxis.set_minor_formatter(matplotlib.ticker.FormatStrFormatter("%.1f"))
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


def _split(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--boards", type=_split, default=BOARD_NAMES)
    ap.add_argument("--models", type=_split, help="comma-separated (default: shared int8 + corpus CNNs)")
    ap.add_argument("--models-dir", type=Path, default=ROOT.parent / "shared" / "models")
    ap.add_argument("--out-dir", type=Path, default=ROOT / "benchmarks" / "results")
    ap.add_argument("--trials", type=int, default=8)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--keep-logs", type=Path, help="directory to keep the tuning logs in")
    ap.add_argument("--update", action="store_true",
                    help="replace only the given models' rows of the existing tune_<cpu>.json, keep the others")
    args = ap.parse_args(argv)
    models = args.models or [*SHARED, *corpus_models(args.models_dir)]
    args.out_dir.mkdir(parents=True, exist_ok=True)
    if args.keep_logs:
        args.keep_logs.mkdir(parents=True, exist_ok=True)
    status = 0
    for board in args.boards:
        cpu = get_board(board).cpu
        rows: list[dict[str, Any]] = []
        for i, model in enumerate(models, 1):
            print(f"[{i}/{len(models)}] {model} on {board} ...", file=sys.stderr, flush=True)
            with tempfile.TemporaryDirectory(prefix="utvm-bench-tune-") as tmp:
                try:
                    row = bench_model(args.models_dir / f"{model}.tflite", board, args.trials, args.jobs,
                                      Path(tmp), args.keep_logs and args.keep_logs / cpu)
                except UtvmError as exc:
                    print(f"    error: {exc}", file=sys.stderr, flush=True)
                    rows.append({"model": model, "board": board, "cpu": cpu, "error": str(exc)})
                    status = 1
                    continue
            rows.append(row)
            print(f"    {row['untuned']['ipm']} -> {row['tuned']['ipm']} instr./MAC, tuned in "
                  f"{row['tune_seconds']} s", file=sys.stderr, flush=True)
            if not (row["untuned"]["match"] and row["tuned"]["match"]):
                status = 1
        stem = args.out_dir / f"tune_{cpu}"
        if args.update and stem.with_suffix(".json").is_file():
            fresh = {r["model"]: r for r in rows}
            old = json.loads(stem.with_suffix(".json").read_text())
            rows = [fresh.pop(r["model"], r) for r in old] + list(fresh.values())
        stem.with_suffix(".md").write_text(markdown(rows, cpu))
        stem.with_suffix(".json").write_text(json.dumps(rows, indent=2) + "\n")
        chart(rows, cpu, stem.with_suffix(".png"))
        print(f"wrote {stem}.md, .json, .png", file=sys.stderr, flush=True)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
