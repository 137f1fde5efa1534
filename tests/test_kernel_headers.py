"""The C kernel headers, one per operator family and instruction set (lib/crt/include/utvm/kernels/,
issue 24): each compiles alone, warning-free, on the host and the Arm CPUs; the old headers are
umbrellas that still include every piece; generated kernels include only the headers of the
names they use, and an MLF ships only those."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from utvm.compiler import CompileOptions, compile_model
from utvm.lower.kernel_headers import UMBRELLAS, closure, includes_for

INCLUDE = Path(__file__).resolve().parents[1] / "lib" / "crt" / "include"
KERNELS = sorted(p.name for p in (INCLUDE / "utvm" / "kernels").glob("*.h"))
COMPILERS = {
    "host": ["gcc"],
    "cortex-m4": ["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"],
    "cortex-m55": ["arm-none-eabi-gcc", "-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard"],
}


@pytest.mark.parametrize("cpu", sorted(COMPILERS))
def test_every_kernel_header_compiles_alone(cpu: str, tmp_path: Path) -> None:
    cc = COMPILERS[cpu]
    if shutil.which(cc[0]) is None:
        pytest.skip(f"{cc[0]} is not installed")
    failures = []
    for header in [f"kernels/{h}" for h in KERNELS] + list(UMBRELLAS):
        src = tmp_path / "one.c"
        src.write_text(f'#include "utvm/{header}"\nint main(void) {{ return 0; }}\n')
        for opt in ("-O2", "-O0"):
            r = subprocess.run([*cc, opt, "-std=c99", "-Wall", "-Wextra", "-Werror", f"-I{INCLUDE}", "-c",
                                str(src), "-o", str(tmp_path / "one.o")], capture_output=True, text=True)
            if r.returncode != 0:
                failures.append(f"{header} {opt}: {r.stderr.strip().splitlines()[0]}")
    assert not failures, "\n".join(failures)


def test_the_umbrellas_include_every_piece() -> None:
    pieces = set()
    for umbrella in UMBRELLAS:
        text = (INCLUDE / "utvm" / umbrella).read_text()
        pieces |= closure(re.findall(r'^#include "(?:utvm/)?kernels/([\w.]+\.h)"', text, re.M))
    assert pieces == set(KERNELS)
    assert '#include "kernels_dsp.h"' in (INCLUDE / "utvm" / "kernels.h").read_text()  # kernels.h: all


def test_includes_follow_the_names_used() -> None:
    assert includes_for("return utvm_dwp_s8(y, x);") == ["depthwise_dsp.h"]
    assert includes_for("utvm_dsp_conv_rw16n(o, x);") == ["gemm_dsp.h"]  # made by UTVM_DSP_CONV_ENTRY
    assert includes_for("utvm_dsp_tiny_fc(y, x);") == ["fully_connected_dsp.h"]
    # mac_c.h includes mac_dsp.h (the SIMD32 variants of the same helpers): named once
    assert includes_for("utvm_mac4_s8(a, x, w, 4); utvm_dot4_acc_s8(0, a, b);") == ["mac_c.h"]
    assert includes_for("utvm_mve_conv42_s8(o); utvm_sat_s8(v);") == ["requant_c.h", "conv_mve.h"]
    assert includes_for("no helper here") == []


def test_mlf_ships_only_the_kernel_headers_it_includes(models_dir: Path, tmp_path: Path) -> None:
    result = compile_model(models_dir / "kws_ref_model.tflite", tmp_path / "kws",
                           CompileOptions(name="kws", cpu="cortex-m4"))
    kernels = (result.mlf_dir / "codegen/host/src/kws_lib0.c").read_text()
    used = re.findall(r'^#include "\.\./include/utvm/kernels/([\w.]+\.h)"', kernels, re.M)
    assert used == ["depthwise_dsp.h", "gemm_dsp.h"]  # KWS on the M4: DEPTHWISE_CONV_2D and the GEMMs
    inc = result.mlf_dir / "codegen/host/include/utvm"
    shipped = {p.name for p in (inc / "kernels").glob("*.h")}
    assert shipped == closure(used) and not any(h.endswith("_mve.h") for h in shipped)
    assert not any((inc / u).exists() for u in UMBRELLAS)
    assert (inc / "model.h").is_file() and (inc / "crt.h").is_file()
    # the runtime copy stays whole, for hand-written code that includes the umbrellas
    assert {p.name for p in (result.mlf_dir / "runtime/include/utvm/kernels").glob("*.h")} == set(KERNELS)
