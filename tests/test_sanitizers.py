"""The generated code of every shared, corpus and TFLite Micro model under AddressSanitizer and
UndefinedBehaviorSanitizer (tests/sanitizer_build.py): built on the host with
-fsanitize=address,undefined -fno-sanitize-recover=all, run on all-zero, all-minimum, all-maximum
and random inputs through every entry point (typed run, run_with_pool, the descriptor's run with
the static pool and an own pool), and every entry point refusing NULL and misaligned buffers.

The MLFs are those test_models compiled when it ran first in the session (model_cache). Corpus
models using operators this branch does not support yet are skipped, naming the operators.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from figures import report
from model_cache import mlf_cached
from sanitizer_build import build_and_run
from toolchains import sanitizers_problem
from utvm.errors import UtvmError

MODELS_DIR = Path(__file__).resolve().parents[2] / "shared" / "models"
SHARED = ["kws_ref_model", "vww_96_int8", "pretrainedResnet_quant", "ad01_int8", "vww_96_float",
          "pretrainedResnet", "ad01_fp32"]
CORPUS = sorted(p.stem for p in (MODELS_DIR / "corpus").glob("*.tflite"))
#: TFLite Micro's own models: the top-level ones and the first of each SEANet layer family
TFLM = sorted([p.relative_to(MODELS_DIR / "tflm").as_posix() for p in (MODELS_DIR / "tflm").glob("*.tflite")]
              + [f"seanet/{d.name}/{d.name}0.tflite" for d in (MODELS_DIR / "tflm" / "seanet").glob("*")
                 if (d / f"{d.name}0.tflite").is_file()])
#: the int8 models whose Helium variants run here through their portable C forms (compiled for
#: the Cortex-M55, built for the host)
HELIUM = ["kws_ref_model", "vww_96_int8", "pretrainedResnet_quant", "ad01_int8"]
#: random input sets per model besides the three extremes
RANDOMS = 1
#: the figures of this session's run: model -> input sets run (each through four entry points)
FIGURES: dict[str, int] = {}


@pytest.fixture(scope="session")
def sanitizers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    why = sanitizers_problem(tmp_path_factory.mktemp("probe"))
    if why:
        pytest.skip(why)
    yield
    sets = sum(FIGURES.values())
    report(f"sanitizer run: {len(FIGURES)} models built with ASan+UBSan, {sets} input sets, "
           f"{4 * sets} runs through the entry points, no finding (each would have failed its test)")


def check_model(model: Path, tmp_root: Path, tmp_path: Path) -> None:
    if not model.is_file():
        pytest.skip(f"{model} is not there")
    try:
        name, mlf = mlf_cached(model, tmp_root)
    except UtvmError as exc:
        if "unsupported operators" in str(exc):
            pytest.skip(f"not compiled on this branch: {str(exc).split(': ', 1)[-1]}")
        raise
    run = build_and_run(mlf, name, randoms=RANDOMS, workdir=tmp_path)
    assert run.problem == "", run.output[-3000:]
    assert run.inputs == 3 + RANDOMS
    FIGURES[model.stem] = run.inputs


@pytest.mark.parametrize("name", SHARED)
def test_shared_model_is_sanitizer_clean(sanitizers: None, tmp_root: Path, tmp_path: Path, name: str) -> None:
    check_model(MODELS_DIR / f"{name}.tflite", tmp_root, tmp_path)


@pytest.mark.parametrize("name", CORPUS)
def test_corpus_model_is_sanitizer_clean(sanitizers: None, tmp_root: Path, tmp_path: Path, name: str) -> None:
    check_model(MODELS_DIR / "corpus" / f"{name}.tflite", tmp_root, tmp_path)


@pytest.mark.parametrize("name", TFLM)
def test_tflm_model_is_sanitizer_clean(sanitizers: None, tmp_root: Path, tmp_path: Path, name: str) -> None:
    check_model(MODELS_DIR / "tflm" / name, tmp_root, tmp_path)


@pytest.mark.parametrize("name", HELIUM)
def test_helium_kernels_are_sanitizer_clean(sanitizers: None, tmp_path: Path, name: str) -> None:
    """The Helium variants' C (kernels_mve.h without MVE: the same loops, lane by lane) under
    ASan+UBSan: the model compiled for the Cortex-M55, its constants for the host."""
    from utvm.compiler import CompileOptions, compile_model

    model = MODELS_DIR / f"{name}.tflite"
    if not model.is_file():
        pytest.skip(f"{model} is not there")
    result = compile_model(model, tmp_path / "mlf", CompileOptions(cpu="cortex-m55", constants_target="host"))
    assert "helium" in {c.variant for c in result.lowered.calls}
    run = build_and_run(result.mlf_dir, result.graph.name, randoms=RANDOMS, workdir=tmp_path)
    assert run.problem == "", run.output[-3000:]
    FIGURES[f"{name} (cortex-m55)"] = run.inputs
