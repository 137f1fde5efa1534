"""Helium (MVE) kernels of utvm/lower/helium.py and utvm/kernels_mve.h.

- the plain-C requantization of kernels_mve.h equals the numpy reference of fixedpoint.py;
- which layers the Helium kernels take;
- the generated C compiles with strict warnings for the host (plain-C fallbacks), Cortex-M4
  and Cortex-M55;
- convolutions of several shapes are bit-exact with TFLite Micro on mps3/an547 (Cortex-M55).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tflite_builder import conv2d_model
from utvm.compiler import CompileOptions, compile_model
from utvm.errors import UtvmError
from utvm.importer import load_model
from utvm.lower import fixedpoint as fp
from utvm.lower.helium import helium_kernel
from utvm.run import qemu
from utvm.run.runner import run_model

INCLUDE = Path(__file__).resolve().parents[1] / "lib" / "crt" / "include"
STRICT = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror"]


def _toolchain_problem() -> str | None:
    try:
        qemu.find_tools(qemu=True)
    except UtvmError as exc:
        return str(exc)
    return None


def test_fallback_requantization_matches_numpy(tmp_path: Path) -> None:
    if shutil.which("gcc") is None:
        pytest.skip("no host gcc")
    rng = np.random.default_rng(1)
    n = 4000
    x = np.concatenate([rng.integers(-(2**31), 2**31, n // 2), rng.integers(-(2**20), 2**20, n // 2),
                        [fp.INT32_MIN, fp.INT32_MAX, 0, -1, 1]]).astype(np.int64)
    m = rng.integers(2**30, 2**31, x.size).astype(np.int64)
    m[-5:] = [fp.INT32_MAX, 2**30, 2**31 - 1, 2**30, 2**30 + 1]
    s = rng.integers(-31, 8, x.size).astype(np.int64)
    # left shifts only on values that do not overflow (TFLite's assumption)
    s = np.where((s > 0) & (np.abs(x) >= 2**23), -s, s)
    src = tmp_path / "t.c"
    values = ",".join(f"{{{a}, {b}, {c}}}" for a, b, c in zip(x, m, s))
    src.write_text(
        '#include <stdio.h>\n#include "utvm/kernels_mve.h"\n'
        f"static const long long v[][3] = {{{values}}};\n"
        "int main(void) {\n"
        "  for (unsigned i = 0; i < sizeof v / sizeof v[0]; ++i)\n"
        "    printf(\"%ld\\n\", (long)utvm_mve_mbqm((int32_t)v[i][0], (int32_t)v[i][1], (int32_t)v[i][2]));\n"
        "  return 0;\n}\n")
    exe = tmp_path / "t"
    subprocess.run(["gcc", *STRICT, f"-I{INCLUDE}", str(src), "-o", str(exe)], check=True)
    got = np.array([int(v) for v in subprocess.run([str(exe)], capture_output=True, text=True,
                                                     check=True).stdout.split()])
    want = fp.np_multiply_by_quantized_multiplier(x, m, s)
    assert np.array_equal(got, want)


def _model(tmp_path: Path, name: str, **kwargs: object) -> Path:
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(conv2d_model(**kwargs))  # type: ignore[arg-type]
    return path


CASES = {
    "conv3x3_same_c16": dict(input_shape=(1, 9, 7, 16), out_channels=12, activation="RELU"),
    "conv3x3_same_c3": dict(input_shape=(1, 10, 10, 3), out_channels=8, seed=1),
    "conv3x3_s2_same": dict(input_shape=(1, 9, 10, 24), out_channels=20, stride=(2, 2), seed=2),
    "conv5x2_valid": dict(input_shape=(1, 12, 6, 1), out_channels=16, kernel=(5, 2), padding="VALID", seed=3),
    "pointwise": dict(input_shape=(1, 5, 5, 40), out_channels=20, kernel=(1, 1), seed=4, activation="RELU6"),
    "pointwise_s2": dict(input_shape=(1, 6, 6, 8), out_channels=8, kernel=(1, 1), stride=(2, 2), seed=5),
    "pointwise_per_tensor": dict(input_shape=(1, 3, 3, 32), out_channels=16, kernel=(1, 1), per_channel=False,
                                 seed=6),
    "dw3x3_same": dict(input_shape=(1, 7, 5, 20), depthwise=True, activation="RELU", seed=7),
    "dw3x3_s2_same": dict(input_shape=(1, 9, 8, 8), depthwise=True, stride=(2, 2), seed=8),
    "dw3x3_valid": dict(input_shape=(1, 6, 6, 12), depthwise=True, padding="VALID", seed=9),
    "dw3x3_narrow": dict(input_shape=(1, 4, 1, 4), depthwise=True, seed=10),
    "dw3x3_c6": dict(input_shape=(1, 5, 5, 6), depthwise=True, seed=11),  # generic kernel
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_helium_kernel_taken(tmp_path: Path, name: str) -> None:
    g = load_model(_model(tmp_path, name, **CASES[name]))
    op = g.ops[0]
    assert (helium_kernel(g, op) is None) == (name == "dw3x3_c6")


def test_float_and_other_layers_left_to_generic(tmp_path: Path) -> None:
    g = load_model(_model(tmp_path, "f", dtype="float32"))
    assert helium_kernel(g, g.ops[0]) is None
    g = load_model(_model(tmp_path, "dm", input_shape=(1, 5, 5, 4), depthwise=True, depth_multiplier=2))
    assert helium_kernel(g, g.ops[0]) is None


def _compilers() -> list[tuple[str, list[str]]]:
    out: list[tuple[str, list[str]]] = []
    if shutil.which("gcc"):
        out.append(("gcc", []))
    if shutil.which("arm-none-eabi-gcc"):
        out.append(("arm-none-eabi-gcc", ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"]))
        out.append(("arm-none-eabi-gcc", ["-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard"]))
    return out


def test_generated_c_compiles_strictly(tmp_path: Path) -> None:
    compilers = _compilers()
    if not compilers:
        pytest.skip("no C compiler")
    sources = []
    for name in ("conv3x3_s2_same", "pointwise", "dw3x3_same", "conv5x2_valid"):
        out = tmp_path / name
        compile_model(_model(tmp_path, name, **CASES[name]), out, CompileOptions(cpu="cortex-m55"))
        src = next((out / "codegen" / "host" / "src").glob("*_lib0.c"))
        assert '#include "utvm/kernels_mve.h"' in src.read_text()
        sources.append((src, out / "runtime" / "include"))
    for cc, flags in compilers:
        for src, include in sources:
            subprocess.run([cc, *STRICT, *flags, f"-I{include}", "-c", str(src), "-o", str(tmp_path / "k.o")],
                           check=True)


@pytest.mark.skipif(_toolchain_problem() is not None, reason="bare-metal toolchain missing")
@pytest.mark.parametrize("name", sorted(CASES))
def test_bit_exact_on_cortex_m55(tmp_path: Path, name: str) -> None:
    report = run_model(_model(tmp_path, name, **CASES[name]), "mps3/an547", workdir=tmp_path / "work")
    assert report.outputs_match_reference
    assert report.max_abs_diff == 0


@pytest.mark.parametrize("name", ["conv3x3_same_c16", "pointwise_per_tensor", "dw3x3_same", "dw3x3_valid"])
def test_constants_compact_and_scratch_planned(tmp_path: Path, name: str) -> None:
    """Requantization constants no larger than the generic kernels' (int32 bias, int32
    multipliers only per channel, shifts packed or scalar); temporary buffers are scratch
    arguments (in the memory plan), never on the stack or from TVMBackendAllocWorkspace."""
    g = load_model(_model(tmp_path, name, **CASES[name]))
    kdef = helium_kernel(g, g.ops[0])
    assert kdef is not None
    cout = g.tensors[g.ops[0].outputs[0]].shape[-1]
    consts = [a.constant for a in kdef.args if a.constant is not None]
    assert sum(c.nbytes for c in consts) <= 8 * cout
    if name == "pointwise_per_tensor":
        assert sum(c.nbytes for c in consts) == 4 * cout
    scratch = [a.role for a in kdef.args if a.scratch]
    assert scratch == {"conv3x3_same_c16": ["col"], "dw3x3_same": ["pad"]}.get(name, [])
    out = tmp_path / "out"
    compile_model(_model(tmp_path, name, **CASES[name]), out, CompileOptions(cpu="cortex-m55"))
    src = next((out / "codegen" / "host" / "src").glob("*_lib0.c")).read_text()
    assert "TVMBackendAllocWorkspace" not in src
    assert not re.search(r"\bint8_t \w+\[\d+\]", src)


def test_packed_shift_width_matches_the_header() -> None:
    """helium.py packs shifts into bias words with kernels.py's SHIFT_BITS; kernels_mve.h
    unpacks them with UTVM_MVE_RQ_SHIFT_BITS: the two must agree."""
    from utvm.lower.kernels import SHIFT_BITS

    header = (Path(__file__).resolve().parents[1] / "lib/crt/include/utvm/kernels_mve.h").read_text()
    (bits,) = re.findall(r"#define UTVM_MVE_RQ_SHIFT_BITS (\d+)", header)
    assert int(bits) == SHIFT_BITS
