"""Hostile models for ``utvm compile``: a seeded mutator of .tflite flatbuffers and a checker of
the command line's contract.

Every case is one seed model, one mutation class and one seed. The mutated file goes through
``utvm compile`` (``utvm.cli.main``, in a long-lived worker process that imports TVM once); the
contract is:

- exit 0, the MLF directory and its .tar written, nothing else left beside them, and (with
  ``run``) the compiled model built on the host and run on random inputs returns status 0; or
- exit 2 and exactly one line on stderr, starting with ``error:`` and at most
  ``MAX_ERROR_CHARS`` long, and no output directory, no .tar, no temporary directory left;
- within ``CASE_SECONDS`` and ``CASE_MEMORY`` bytes of address space (the worker's limit).

A case that breaks it is *unclean*; its file is kept for reproduction.

Mutation classes (each keeps the file a flatbuffer most of the time, so the damage reaches the
importer's and the operators' checks rather than the first parse):

- ``structure``: bit flips in the flatbuffer's tables and vectors (offsets, vtables, indices),
  never inside the weights' bytes;
- ``quant``: quantization scales (NaN, inf, 0, negative, huge, tiny), zero points (far outside
  the type), quantized dimensions;
- ``shape``: tensor dimensions, tensor types and buffer indices;
- ``options``: the operators' option fields (strides, padding, dilation, activation, axes) and
  their tensor index lists;
- ``truncate``: the file cut at a random length;
- ``tensors``: the weights and biases replaced by random or extreme values (these models still
  compile; the run checks the kernels on them).

``python tests/fuzz/model_fuzz.py --budget 600`` runs a longer campaign (see tests/fuzz/README.md).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import resource
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLASSES = ("structure", "quant", "shape", "options", "truncate", "tensors")
MAX_ERROR_CHARS = 400
CASE_SECONDS = 60.0
CASE_MEMORY = 4 << 30

# -- where things are in a flatbuffer ------------------------------------------------------


@dataclass
class Field:
    """Bytes of one field or vector element: position, width, kind ("int", "uint", "float")."""

    pos: int
    width: int
    kind: str


@dataclass
class Regions:
    structure: list[tuple[int, int]] = field(default_factory=list)   # byte ranges outside weights
    quant: list[Field] = field(default_factory=list)
    shape: list[Field] = field(default_factory=list)
    options: list[Field] = field(default_factory=list)
    tensors: list[tuple[int, int]] = field(default_factory=list)     # weight byte ranges


def _vector(tab, slot: int) -> tuple[int, int] | None:  # type: ignore[no-untyped-def]
    off = tab.Offset(slot)
    if not off:
        return None
    return tab.Vector(off), tab.VectorLen(off)


def _scalar(tab, slot: int) -> int | None:  # type: ignore[no-untyped-def]
    off = tab.Offset(slot)
    return tab.Pos + off if off else None


def _table_fields(data: bytes, pos: int) -> Iterator[int]:
    """Positions of the fields present in the table at ``pos`` (from its vtable)."""
    vt = pos - struct.unpack_from("<i", data, pos)[0]
    vt_len = struct.unpack_from("<H", data, vt)[0]
    for k in range(4, vt_len, 2):
        off = struct.unpack_from("<H", data, vt + k)[0]
        if off:
            yield pos + off


def regions(data: bytes) -> Regions:
    """The mutable places of a valid .tflite file."""
    import tflite

    model = tflite.Model.GetRootAsModel(data, 0)
    reg = Regions()
    weights: list[tuple[int, int]] = []
    for b in range(model.BuffersLength()):
        v = _vector(model.Buffers(b)._tab, 4)
        if v and v[1]:
            weights.append((v[0], v[0] + v[1]))
    reg.tensors = weights
    start = 0
    for lo, hi in sorted(weights):
        if lo > start:
            reg.structure.append((start, lo))
        start = max(start, hi)
    if start < len(data):
        reg.structure.append((start, len(data)))
    for s in range(model.SubgraphsLength()):
        sg = model.Subgraphs(s)
        for t in range(sg.TensorsLength()):
            tensor = sg.Tensors(t)
            tab = tensor._tab
            v = _vector(tab, 4)
            if v:
                reg.shape += [Field(v[0] + 4 * i, 4, "int") for i in range(v[1])]
            for slot, width in ((6, 1), (8, 4)):
                p = _scalar(tab, slot)
                if p is not None:
                    reg.shape.append(Field(p, width, "uint"))
            q = tensor.Quantization()
            if q is None:
                continue
            qt = q._tab
            for slot, width, kind in ((8, 4, "float"), (10, 8, "int"), (4, 4, "float"), (6, 4, "float")):
                v = _vector(qt, slot)
                if v:
                    reg.quant += [Field(v[0] + width * i, width, kind) for i in range(v[1])]
            p = _scalar(qt, 16)
            if p is not None:
                reg.quant.append(Field(p, 4, "int"))
        for o in range(sg.OperatorsLength()):
            op = sg.Operators(o)
            tab = op._tab
            for slot in (6, 8):
                v = _vector(tab, slot)
                if v:
                    reg.options += [Field(v[0] + 4 * i, 4, "int") for i in range(v[1])]
            opts = op.BuiltinOptions()
            if opts is not None:
                reg.options += [Field(p, 1, "uint") for p in _table_fields(data, opts.Pos)]
    return reg


# -- mutations -----------------------------------------------------------------------------

_INTS = (0, 1, -1, 2, 3, 7, 255, 256, -128, 127, 65535, 2**31 - 1, -2**31, 2**31 + 4, 2**32 - 1, 2**40, -2**40,
         2**63 - 1)
_FLOATS = (0.0, -0.0, -1.0, 1.0, float("nan"), float("inf"), float("-inf"), 1e-45, 1e-30, 1e30, 3.4e38, 2.0**-31,
           1.0 / 256, 65536.0)


def _put_int(buf: bytearray, f: Field, rng: random.Random) -> None:
    if rng.random() < 0.3:
        bit = rng.randrange(f.width * 8)
        buf[f.pos + bit // 8] ^= 1 << (bit % 8)
        return
    value = rng.choice(_INTS) if rng.random() < 0.7 else rng.randrange(-300, 300)
    mask = (1 << (8 * f.width)) - 1
    buf[f.pos:f.pos + f.width] = (value & mask).to_bytes(f.width, "little")


def _put_float(buf: bytearray, f: Field, rng: random.Random) -> None:
    if rng.random() < 0.3:
        bit = rng.randrange(32)
        buf[f.pos + bit // 8] ^= 1 << (bit % 8)
        return
    value = rng.choice(_FLOATS) if rng.random() < 0.8 else rng.uniform(-10, 10)
    struct.pack_into("<f", buf, f.pos, value)


def mutate(data: bytes, cls: str, seed: int) -> bytes:
    """The case (``cls``, ``seed``) of the seed model ``data``: 1 to 4 changes of that class."""
    rng = random.Random(f"{cls}:{seed}")
    buf = bytearray(data)
    if cls == "truncate":
        return bytes(buf[:rng.randrange(len(buf))])
    reg = regions(data)
    n = rng.choice((1, 1, 1, 2, 3, 4))
    if cls == "structure":
        spans = [r for r in reg.structure if r[1] > r[0]]
        for _ in range(n):
            lo, hi = rng.choice(spans)
            bit = rng.randrange(lo * 8, hi * 8)
            buf[bit // 8] ^= 1 << (bit % 8)
    elif cls in ("quant", "shape", "options"):
        fields: list[Field] = getattr(reg, cls)
        if not fields:
            return mutate(data, "structure", seed)
        for _ in range(n):
            f = rng.choice(fields)
            (_put_float if f.kind == "float" else _put_int)(buf, f, rng)
    elif cls == "tensors":
        for lo, hi in rng.sample(reg.tensors, min(len(reg.tensors), n)):
            how = rng.choice(("random", "min", "max", "zero"))
            if how == "random":
                buf[lo:hi] = rng.randbytes(hi - lo)
            else:
                buf[lo:hi] = {"min": b"\x80", "max": b"\x7f", "zero": b"\x00"}[how] * (hi - lo)
    else:
        raise ValueError(f"unknown mutation class {cls}")
    return bytes(buf)


# -- one case in the worker ----------------------------------------------------------------


@dataclass
class Outcome:
    model: str
    cls: str
    seed: int
    clean: bool
    exit: int | None
    seconds: float
    problem: str = ""
    error: str = ""


def check_contract(rc: int | None, stderr: str, out: Path) -> str:
    """'' when (rc, stderr, what is on disk) keep the contract, else what is wrong."""
    tar = out.with_name(out.name + ".tar")
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    leftovers = [p.name for p in out.parent.iterdir() if p.name.startswith(".")] if out.parent.exists() else []
    if leftovers:
        return f"left behind: {leftovers}"
    if rc == 0:
        if not (out / "metadata.json").is_file() or not tar.is_file():
            return "exit 0 without the MLF and its .tar"
        return ""
    if rc != 2:
        return f"exit {rc}: {stderr.strip()[-300:]}"
    if len(lines) != 1 or not lines[0].startswith("error:"):
        return f"not one error line ({len(lines)} lines): {stderr.strip()[-300:]}"
    if len(lines[0]) > MAX_ERROR_CHARS:
        return f"error line of {len(lines[0])} characters"
    if out.exists() or tar.exists():
        return "output written although compile failed"
    return ""


def compile_in_process(model: Path, out: Path) -> tuple[int | None, str]:
    """``utvm compile model -o out`` in this process: (exit code, stderr). An exception escaping
    the command line is a traceback: exit None."""
    from utvm import cli

    err = io.StringIO()
    rc: int | None
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            rc = cli.main(["compile", str(model), "-o", str(out), "--json"])
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 1
        except BaseException as exc:  # noqa: BLE001 - anything escaping is what we look for
            rc = None
            err.write(f"Traceback: {type(exc).__name__}: {str(exc)[:300]}\n")
    return rc, err.getvalue()


def run_compiled(out: Path, sanitize: bool) -> str:
    """Build the compiled model on the host (with ASan/UBSan when ``sanitize``) and run it on
    random inputs: '' when it returns status 0, else what went wrong."""
    sys.path.insert(0, str(ROOT / "tests"))
    from sanitizer_build import build_and_run

    meta = json.loads((out / "metadata.json").read_text())
    name = next(iter(meta["modules"]))
    return build_and_run(out, name, sanitize=sanitize, randoms=1, workdir=out.parent / "bin").problem


def worker() -> None:
    """Read cases (JSON lines) from stdin, answer one JSON line each."""
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (CASE_MEMORY, hard))  # the sanitizer builds lift it again
    sys.path.insert(0, str(ROOT / "scripts"))
    import utvm.cli  # noqa: F401 - import TVM once, before the first case's clock starts

    print("ready", flush=True)
    for line in sys.stdin:
        case = json.loads(line)
        model, out = Path(case["model"]), Path(case["out"])
        start = time.monotonic()
        rc, stderr = compile_in_process(model, out)
        problem = check_contract(rc, stderr, out)
        if not problem and rc == 0 and case.get("run"):
            problem = run_compiled(out, case.get("sanitize", True))
        shutil.rmtree(out.parent / "bin", ignore_errors=True)
        print(json.dumps({"exit": rc, "problem": problem, "error": stderr.strip()[:MAX_ERROR_CHARS + 50],
                          "seconds": time.monotonic() - start}), flush=True)


class Worker:
    """A worker process; restarted after a case that kills or hangs it."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        env = dict(os.environ, PYTHONPATH=str(ROOT / "scripts"))
        proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--worker"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
                                start_new_session=True)
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != "ready":
            raise RuntimeError("the fuzz worker did not start")
        return proc

    def run(self, case: dict[str, object], timeout: float) -> dict[str, object] | None:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = self._start()
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(case) + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            self.close()
            return None
        return json.loads(line)

    def close(self) -> None:
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            self.proc = None


# -- campaigns -----------------------------------------------------------------------------


@dataclass
class Campaign:
    outcomes: list[Outcome] = field(default_factory=list)

    def by_class(self) -> dict[str, tuple[int, int]]:
        tried: Counter[str] = Counter(o.cls for o in self.outcomes)
        clean: Counter[str] = Counter(o.cls for o in self.outcomes if o.clean)
        return {c: (tried[c], clean[c]) for c in tried}

    @property
    def unclean(self) -> list[Outcome]:
        return [o for o in self.outcomes if not o.clean]

    def summary(self) -> str:
        rows = [f"{c:<10} {n:>5} tried {k:>5} clean" for c, (n, k) in sorted(self.by_class().items())]
        compiled = sum(1 for o in self.outcomes if o.exit == 0)
        internal = sum(1 for o in self.outcomes if "internal error" in o.error)
        rows.append(f"{'total':<10} {len(self.outcomes):>5} tried {len(self.outcomes) - len(self.unclean):>5} clean, "
                    f"{len(self.unclean)} unclean; {compiled} compiled and ran, {internal} internal errors "
                    "(one line, exit 2: clean, but a bug to report)")
        return "\n".join(rows)


def cases(models: list[Path], classes: Iterable[str], seeds: Iterable[int]) -> Iterator[tuple[Path, str, int]]:
    classes = list(classes)
    for seed in seeds:
        for cls in classes:
            yield models[seed % len(models)], cls, seed


def run_campaign(case_list: Iterable[tuple[Path, str, int]], workdir: Path, run: bool = True,
                 sanitize: bool = True, budget_s: float | None = None, keep: Path | None = None,
                 log: bool = False) -> Campaign:
    campaign = Campaign()
    worker_ = Worker()
    start = time.monotonic()
    seen: dict[Path, bytes] = {}
    try:
        for model, cls, seed in case_list:
            if budget_s is not None and time.monotonic() - start > budget_s:
                break
            data = seen.setdefault(model, model.read_bytes())
            case_dir = Path(tempfile.mkdtemp(prefix=f"{cls}-{seed}-", dir=workdir))
            path = case_dir / f"{model.stem}.tflite"
            path.write_bytes(mutate(data, cls, seed))
            out = case_dir / "out" / "mlf"
            out.parent.mkdir()
            t0 = time.monotonic()
            ans = worker_.run({"model": str(path), "out": str(out), "run": run, "sanitize": sanitize},
                              CASE_SECONDS)
            seconds = time.monotonic() - t0
            if ans is None:
                o = Outcome(model.name, cls, seed, False, None, seconds, f"no answer within {CASE_SECONDS:.0f} s "
                            "or the worker died")
            else:
                problem = str(ans["problem"]) or check_contract(ans["exit"], str(ans["error"]), out)  # type: ignore[arg-type]
                o = Outcome(model.name, cls, seed, not problem, ans["exit"], seconds, problem,  # type: ignore[arg-type]
                            str(ans["error"]))
            campaign.outcomes.append(o)
            if log:
                print(f"{o.model} {o.cls} {o.seed}: exit {o.exit} {o.seconds:.1f}s "
                      f"{'clean' if o.clean else 'UNCLEAN ' + o.problem} {o.error[:160]}", flush=True)
            if not o.clean and keep is not None:
                keep.mkdir(parents=True, exist_ok=True)
                shutil.copy(path, keep / f"{model.stem}-{cls}-{seed}.tflite")
            shutil.rmtree(case_dir, ignore_errors=True)
    finally:
        worker_.close()
    return campaign


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="mutate .tflite models and check utvm compile's contract")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--model", type=Path, action="append", default=[],
                   help="seed model (default: the shared MLPerf Tiny int8 models)")
    p.add_argument("--class", dest="classes", action="append", choices=CLASSES, help="mutation class (default all)")
    p.add_argument("--first-seed", type=int, default=1000)
    p.add_argument("--seeds", type=int, default=1_000_000, help="seeds per class at most")
    p.add_argument("--budget", type=float, default=600, help="seconds to run (default 600)")
    p.add_argument("--no-run", action="store_true", help="do not build and run the models that compile")
    p.add_argument("--keep", type=Path, default=ROOT / "build" / "fuzz" / "unclean", help="where unclean cases go")
    p.add_argument("--json", type=Path, help="write every outcome here")
    args = p.parse_args(argv)
    if args.worker:
        worker()
        return 0
    models = args.model or [ROOT.parent / "shared" / "models" / f for f in
                            ("kws_ref_model.tflite", "ad01_int8.tflite", "vww_96_int8.tflite",
                             "pretrainedResnet_quant.tflite")]
    with tempfile.TemporaryDirectory(prefix="utvm-fuzz-") as tmp:
        campaign = run_campaign(cases(models, args.classes or CLASSES,
                                      range(args.first_seed, args.first_seed + args.seeds)),
                                Path(tmp), run=not args.no_run, budget_s=args.budget, keep=args.keep, log=True)
    print(campaign.summary())
    if args.json:
        args.json.write_text(json.dumps([asdict(o) for o in campaign.outcomes], indent=1))
    return 1 if campaign.unclean else 0


if __name__ == "__main__":
    sys.exit(main())
