"""The hostile-model campaign of tests/fuzz/model_fuzz.py with a fixed list of seeds, and a smoke
run of the libFuzzer target for the model descriptor's entry points (tests/fuzz/fuzz_model_run.c).

Every case must keep the contract: exit 0 and a host build under ASan/UBSan that runs cleanly, or
exactly one short error line, exit 2 and nothing left behind, within bounded time and memory.
The long campaign is ``python tests/fuzz/model_fuzz.py --budget SECONDS`` (tests/fuzz/README.md).
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import tflite_builder as tb

ROOT = Path(__file__).resolve().parents[1]
FUZZ = ROOT / "tests" / "fuzz"
#: seeds per mutation class of the quick set; the slow variant (also in CI) runs SLOW_SEEDS more,
#: so that the fuzz and sanitizer tests stay within 10 minutes of CI; longer campaigns are
#: ``tests/fuzz/model_fuzz.py --budget SECONDS``
CI_SEEDS = 40
SLOW_SEEDS = 30


def load_fuzz() -> ModuleType:
    spec = importlib.util.spec_from_file_location("model_fuzz", FUZZ / "model_fuzz.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def seed_models(directory: Path, models_dir: Path) -> list[Path]:
    """Small models of the MLPerf Tiny operators (quick to compile and build) and two real ones."""
    small = {
        "conv": tb.conv2d_model(),
        "depthwise": tb.conv2d_model(depthwise=True, out_channels=3, stride=(2, 2)),
        "fc": tb.fully_connected_model(1, 16, 8, per_channel=True),
        "avgpool": tb.pool2d_model(),
        "maxpool": tb.pool2d_model("MAX_POOL_2D", padding="SAME"),
        "add": tb.add_model(),
        "softmax": tb.softmax_model((1, 10)),
        "conv_float": tb.conv2d_model(dtype="float32"),
    }
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, data in small.items():
        path = directory / f"{name}.tflite"
        path.write_bytes(data)
        paths.append(path)
    return [*paths, models_dir / "kws_ref_model.tflite", models_dir / "ad01_int8.tflite"]


def sanitizers_available() -> bool:
    from toolchains import sanitizers_problem

    probe = Path(__import__("tempfile").mkdtemp(prefix="utvm-probe-"))
    try:
        return sanitizers_problem(probe) == ""
    finally:
        shutil.rmtree(probe, ignore_errors=True)


def campaign(tmp_path: Path, models_dir: Path, seeds: range) -> None:
    fuzz = load_fuzz()
    models = seed_models(tmp_path / "seeds", models_dir)
    work = tmp_path / "cases"
    work.mkdir()
    result = fuzz.run_campaign(fuzz.cases(models, fuzz.CLASSES, seeds), work, run=True,
                               sanitize=sanitizers_available(), keep=tmp_path / "unclean")
    print("\n" + result.summary())
    assert len(result.outcomes) == len(fuzz.CLASSES) * len(seeds)
    assert not result.unclean, "\n".join(f"{o.model} {o.cls} {o.seed}: {o.problem}" for o in result.unclean[:20])
    compiled = sum(1 for o in result.outcomes if o.exit == 0)
    assert 0 < compiled < len(result.outcomes)  # both sides of the contract were exercised


def test_fuzz_models_fixed_seeds(tmp_path: Path, models_dir: Path) -> None:
    campaign(tmp_path, models_dir, range(CI_SEEDS))


@pytest.mark.slow
def test_fuzz_models_more_seeds(tmp_path: Path, models_dir: Path) -> None:
    campaign(tmp_path, models_dir, range(CI_SEEDS, CI_SEEDS + SLOW_SEEDS))


def test_mutations_are_deterministic(models_dir: Path) -> None:
    fuzz = load_fuzz()
    data = (models_dir / "kws_ref_model.tflite").read_bytes()
    for cls in fuzz.CLASSES:
        a, b = fuzz.mutate(data, cls, 7), fuzz.mutate(data, cls, 7)
        assert a == b and a != data, cls


def test_fuzz_model_descriptor_smoke(tmp_path: Path) -> None:
    """10 s of libFuzzer on the descriptor's run of a small compiled model."""
    if shutil.which("clang") is None:
        pytest.skip("clang is not installed (scripts/setup.sh installs it): no libFuzzer run")
    from utvm.compiler import CompileOptions, compile_model

    model = tmp_path / "conv.tflite"
    model.write_bytes(tb.conv2d_model())
    compile_model(model, tmp_path / "mlf", CompileOptions(name="fz"))
    exe = tmp_path / "fuzz_model_run"
    build = subprocess.run(["bash", str(FUZZ / "build_model.sh"), str(tmp_path / "mlf"), "fz", str(exe)],
                           capture_output=True, text=True)
    if build.returncode != 0 and "fuzzer" in build.stderr and "not found" in build.stderr:
        pytest.skip(f"clang has no libFuzzer runtime: {build.stderr.strip()[:200]}")
    assert build.returncode == 0, build.stderr[-3000:]
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for mode in range(16):
        (corpus / f"mode{mode}").write_bytes(bytes([mode << 4 | mode]) + bytes(range(64)))
    run = subprocess.run([str(exe), "-max_len=4096", "-max_total_time=10", "-print_final_stats=1",
                          f"-artifact_prefix={tmp_path}/", str(corpus)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    stats = [ln for ln in run.stderr.splitlines() if ln.startswith("stat::number_of_executed_units")]
    assert stats and int(stats[0].split(":")[-1]) > 100
