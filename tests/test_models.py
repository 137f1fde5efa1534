"""The seven MLPerf Tiny reference models: compiled, built for the host, compared with TFLite Micro."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from model_cache import run_cached
from utvm.run.runner import run_model

INT8 = ["kws_ref_model", "vww_96_int8", "pretrainedResnet_quant", "ad01_int8"]
FLOAT = ["vww_96_float", "pretrainedResnet", "ad01_fp32"]


@pytest.mark.parametrize("name", INT8)
def test_int8_bit_exact_with_tflite_micro(models_dir: Path, tmp_root: Path, name: str) -> None:
    report, _ = run_cached(models_dir, tmp_root, name)
    assert report.outputs_match_reference
    assert report.max_abs_diff == 0


@pytest.mark.parametrize("name", FLOAT)
def test_float_within_1e5_relative(models_dir: Path, tmp_root: Path, name: str) -> None:
    report, _ = run_cached(models_dir, tmp_root, name)
    assert report.outputs_match_reference
    assert report.max_rel_diff <= 1e-5


@pytest.mark.parametrize("name", INT8)
def test_int8_weights_stay_int8(models_dir: Path, tmp_root: Path, name: str) -> None:
    """No float constants, and the constants stay within two bytes per int8 weight (the DSP
    kernels pack int8 weights four to an int32 word beside per-channel requantization words;
    int16 weights only for small layers on large maps or with rows of at most 8 inputs): far from
    float32's four bytes."""
    from utvm.importer import load_model

    report, work = run_cached(models_dir, tmp_root, name)
    consts = (work / "mlf" / "codegen" / "host" / "src").glob("*_lib2.c")
    text = next(consts).read_text()
    assert "const float" not in text
    model_bytes = sum(t.nbytes for t in load_model(models_dir / f"{name}.tflite").tensors.values()
                      if t.data is not None)
    assert report.constants_bytes < 2 * model_bytes


@pytest.mark.parametrize("name", ["kws_ref_model", "ad01_fp32"])
def test_host_binary_uses_no_heap(models_dir: Path, tmp_root: Path, name: str) -> None:
    _, work = run_cached(models_dir, tmp_root, name)
    out = subprocess.run(["nm", "-u", str(work / "model_host")], capture_output=True, text=True, check=True).stdout
    undefined = {line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()}
    assert not undefined & {"malloc", "free", "calloc", "realloc"}, undefined


@pytest.mark.parametrize("name", INT8 + FLOAT)
def test_generated_c_is_warning_clean_for_host_and_cortex_m4(models_dir: Path, tmp_root: Path, name: str) -> None:
    _, work = run_cached(models_dir, tmp_root, name)
    mlf = work / "mlf"
    sources = sorted((mlf / "codegen" / "host" / "src").glob("*.c"))
    sources += sorted((mlf / "runtime" / "src").glob("*.c"))
    flags = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-c",
             f"-I{mlf / 'codegen' / 'host' / 'include'}", f"-I{mlf / 'runtime' / 'include'}"]
    compilers = [["gcc", "-O1"]]
    if shutil.which("arm-none-eabi-gcc"):
        compilers.append(["arm-none-eabi-gcc", "-O1", "-mcpu=cortex-m4", "-mthumb"])
    for cc in compilers:
        for src in sources:
            proc = subprocess.run([*cc, *flags, str(src), "-o", str(work / (src.stem + ".o"))],
                                  capture_output=True, text=True)
            assert proc.returncode == 0, f"{cc[0]} {src.name}: {proc.stderr[:2000]}"
    if len(compilers) == 1:
        pytest.skip("arm-none-eabi-gcc is not installed (apt-get install gcc-arm-none-eabi)")


@pytest.mark.parametrize("name", ["kws_ref_model", "ad01_int8"])
def test_io_in_pool_runs_in_the_least_ram(models_dir: Path, tmp_path: Path, name: str) -> None:
    """Inputs and outputs inside the pool: same outputs, no I/O bytes outside it, and the pool
    no larger than the largest operator's input + output (shared/models/README.md)."""
    lower_bound = {"kws_ref_model": 16000, "ad01_int8": 768}[name]
    report = run_model(models_dir / f"{name}.tflite", "host", io_in_pool=True, workdir=tmp_path)
    assert report.outputs_match_reference and report.max_abs_diff == 0
    assert report.io_bytes == 0
    assert report.workspace_bytes <= 1.1 * lower_bound


@pytest.mark.parametrize("io_in_pool", [False, True])
def test_output_that_is_a_reshaped_input_gets_its_own_buffer(tmp_path: Path, io_in_pool: bool) -> None:
    """A model whose output is a RESHAPE of its input: no kernel would write the output, so
    the importer adds a copy; the run matches TFLite Micro."""
    from tflite_builder import reshape_model

    model = tmp_path / "reshape.tflite"
    model.write_bytes(reshape_model())
    report = run_model(model, "host", io_in_pool=io_in_pool)
    assert report.outputs_match_reference and report.max_abs_diff == 0
    assert report.outputs[0].shape == (1, 24)
