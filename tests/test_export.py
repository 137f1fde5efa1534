"""Issue 6: ``--export static-lib`` and ``--constants object``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from archive_check import assert_archive_runs_bit_exact
from toolchains import arm_tools_problem
from utvm.compiler import CompileOptions, compile_model
from utvm.package.constobj import constants_object, host_target, layout
from utvm.package.staticlib import archiver_for
from utvm.run.runner import HOST_BOARD, run_model

ROOT = Path(__file__).resolve().parents[1]
MODEL = "kws_ref_model.tflite"


needs_arm = pytest.mark.skipif(arm_tools_problem() is not None, reason=arm_tools_problem() or "")


def test_archiver_for() -> None:
    if shutil.which("arm-none-eabi-ar"):
        assert archiver_for("arm-none-eabi-gcc") == "arm-none-eabi-ar"
    assert archiver_for("does-not-exist-gcc") == "ar"


def test_constants_object_layout() -> None:
    blob, syms = layout([("a", b"\x01" * 3), ("b", b"\x02" * 20), ("c", b"")])
    assert [(n, off) for n, off, _ in syms] == [("a", 0), ("b", 16), ("c", 48)]
    assert [size for _, _, size in syms] == [3, 20, 4]
    assert blob[16:36] == b"\x02" * 20
    for target, magic in (("host", b"\x7fELF\x02"), ("arm", b"\x7fELF\x01")):
        assert constants_object([("a", b"x")], target).startswith(magic)


@needs_arm
def test_static_lib_links_and_runs_on_qemu(models_dir: Path, tmp_path: Path) -> None:
    from utvm.run.boards import get_board

    board = get_board("mps2/an386")
    model = models_dir / MODEL
    result = compile_model(model, tmp_path / "kws", CompileOptions(
        name="kws", cpu=board.cpu, export="static-lib", cc="arm-none-eabi-gcc",
        cflags=" ".join([*board.gcc_flags, "-O2"])))
    lib = result.mlf_dir / "lib"
    assert (lib / "libkws.a").is_file()
    assert (lib / "include" / "tvmgen_kws.h").is_file()
    assert (lib / "include" / "utvm" / "model.h").is_file()
    members = subprocess.run(["arm-none-eabi-ar", "t", str(lib / "libkws.a")], capture_output=True,
                             text=True, check=True).stdout
    assert "platform" not in members  # the firmware provides the port

    assert_archive_runs_bit_exact(model, result, board, tmp_path)


def test_constants_object_host(models_dir: Path, tmp_path: Path) -> None:
    if shutil.which("cc") is None:
        pytest.skip("no host C compiler 'cc'")
    model = models_dir / MODEL
    result = compile_model(model, tmp_path / "m", CompileOptions(name="m", constants="object"))
    src = result.mlf_dir / "codegen" / "host"
    assert not (src / "src" / "m_lib2.c").exists()
    assert (src / "lib" / f"m_constants_{host_target().name}.o").is_file()
    obj = run_model(model, HOST_BOARD, constants="object")
    arrays = run_model(model, HOST_BOARD)
    assert obj.outputs_match_reference
    assert all(np.array_equal(a, b) for a, b in zip(obj.outputs, arrays.outputs))
    assert obj.constants_bytes == arrays.constants_bytes


@needs_arm
def test_constants_object_qemu(models_dir: Path) -> None:
    report = run_model(models_dir / MODEL, "mps2/an385", constants="object")
    assert report.outputs_match_reference, report.max_abs_diff
    assert report.memory["constants_in_flash"] is True
    assert report.memory["flash_constants_bytes"] >= report.constants_bytes


def test_static_lib_missing_compiler(models_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "utvm", "compile", str(models_dir / MODEL), "-o", str(out),
         "--export", "static-lib", "--cc", "does-not-exist-gcc"],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT / "scripts")},
        cwd=tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "does-not-exist-gcc" in lines[0]
    assert not out.exists() and not out.with_name("out.tar").exists()
    assert [p.name for p in tmp_path.iterdir()] == []


_SPECIAL_BITS = [0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7FC12345, 0x7F800001, 0xFF812345,
                 0x80000000, 0x00000001, 0x7F7FFFFF, 0x3DCCCCCD]


def test_float_constants_in_c_are_exact(tmp_path: Path) -> None:
    """Every float32 bit pattern (inf, NaN with sign and payload, -0, denormals) survives
    the C text of --constants c, with -std=c99 -pedantic -Werror."""
    from utvm.emit.aot import NONFINITE_PRELUDE, c_float

    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("no gcc")
    values = np.array(_SPECIAL_BITS, dtype=np.uint32).view(np.float32)
    (tmp_path / "c.c").write_text(
        "#include <stdint.h>\n#include <stdio.h>\n#include <string.h>\n" + "\n".join(NONFINITE_PRELUDE)
        + "\nstatic const float c[] = {" + ", ".join(c_float(v) for v in values) + "};\n"
        "int main(void) {\n  size_t i;\n  for (i = 0; i < sizeof c / sizeof c[0]; i++) {\n"
        "    uint32_t b;\n    memcpy(&b, &c[i], 4);\n    printf(\"%08x\\n\", (unsigned)b);\n  }\n  return 0;\n}\n")
    for cc in (gcc, shutil.which("arm-none-eabi-gcc")):
        if cc is None:
            continue
        r = subprocess.run([cc, "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-c", str(tmp_path / "c.c"),
                            "-o", str(tmp_path / "c.o")], capture_output=True, text=True, check=False)
        assert r.returncode == 0, r.stderr
    r = subprocess.run([gcc, "-std=c99", str(tmp_path / "c.c"), "-o", str(tmp_path / "c")], capture_output=True,
                       text=True, check=False)
    assert r.returncode == 0, r.stderr
    out = subprocess.run([str(tmp_path / "c")], capture_output=True, text=True, check=True).stdout.split()
    assert [int(x, 16) for x in out] == _SPECIAL_BITS


def test_infinite_and_nan_constants_reach_the_outputs(tmp_path: Path) -> None:
    """A float model whose bias holds inf, -inf and a NaN: --constants c (C arrays) and
    --constants object (raw bytes) compute the same bits, and those are not finite."""
    from tflite_builder import ModelBuilder

    m = ModelBuilder("fc with non-finite bias")
    x = m.add_tensor("input", [1, 4], "float32")
    w = m.add_tensor("weights", [3, 4], "float32", data=np.linspace(-1, 1, 12).reshape(3, 4))
    bias = np.array([0x7F800000, 0xFF800000, 0x7FC12345], dtype=np.uint32).view(np.float32)
    b = m.add_tensor("bias", [3], "float32", data=bias)
    y = m.add_tensor("output", [1, 3], "float32")
    m.add_operator("FULLY_CONNECTED", [x, w, b], [y], {"fused_activation_function": "NONE"})
    model = tmp_path / "fc_nonfinite.tflite"
    model.write_bytes(m.finish([x], [y]))
    lib2 = compile_model(model, tmp_path / "c", CompileOptions(name="nf")).mlf_dir / "codegen/host/src/nf_lib2.c"
    text = lib2.read_text()
    assert "INFINITY" in text and 'UTVM_NANF("0x12345")' in text
    arrays = run_model(model, HOST_BOARD).outputs[0].reshape(-1)
    objects = run_model(model, HOST_BOARD, constants="object").outputs[0].reshape(-1)
    assert np.isposinf(arrays[0]) and np.isneginf(arrays[1]) and np.isnan(arrays[2])
    assert np.array_equal(arrays.view(np.uint32), objects.view(np.uint32))


@pytest.mark.parametrize(("system", "machine", "elf_class", "e_machine"), [
    ("Linux", "x86_64", "ELFCLASS64", "EM_X86_64"),
    ("Linux", "aarch64", "ELFCLASS64", "EM_AARCH64"),
    ("FreeBSD", "arm64", "ELFCLASS64", "EM_AARCH64"),
    ("Linux", "i686", "ELFCLASS32", "EM_386"),
])
def test_host_constants_object_is_for_the_host(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, system: str,
                                                machine: str, elf_class: str, e_machine: str) -> None:
    """--constants object for the host writes the host's ELF format, not always x86-64."""
    from elftools.elf.elffile import ELFFile

    import utvm.package.constobj as constobj

    monkeypatch.setattr(constobj.platform, "system", lambda: system)
    monkeypatch.setattr(constobj.platform, "machine", lambda: machine)
    path = tmp_path / "c.o"
    path.write_bytes(constants_object([("tvmgen_m_c0", bytes(range(10)))], "host"))
    with path.open("rb") as f:
        elf = ELFFile(f)
        assert (elf.elfclass, elf["e_machine"], elf["e_type"]) == (64 if "64" in elf_class else 32, e_machine, "ET_REL")
        (sym,) = [s for s in elf.get_section_by_name(".symtab").iter_symbols() if s.name == "tvmgen_m_c0"]
        assert sym["st_size"] == 10


def test_host_constants_object_on_a_non_elf_host(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """macOS and Windows link Mach-O / COFF: one error line, exit code 2, nothing left behind."""
    import utvm.package.constobj as constobj
    from utvm import cli

    monkeypatch.setattr(constobj.platform, "system", lambda: "Darwin")
    monkeypatch.setattr(constobj.platform, "machine", lambda: "arm64")
    out = tmp_path / "m"
    rc = cli.main(["compile", str(ROOT / "samples/utvm_inference/model/kws_ref_model.tflite"), "-o", str(out),
                   "--constants", "object", "--json"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "use --constants c" in err[0], err
    assert not out.exists()


def test_constants_c_compiles_for_elf_and_mach_o_hosts(tmp_path: Path) -> None:
    """The constants' C compiles for macOS hosts (Mach-O, whose sections are named
    "segment,section": clang refuses ".rodata.tvm") as for ELF, where the constants keep
    their section. clang cross-compiles this file without an SDK (it includes <stdint.h> only)."""
    from elftools.elf.elffile import ELFFile

    clang = shutil.which("clang")
    if clang is None:
        pytest.skip("clang is not installed (it cross-compiles for the macOS targets)")
    model = ROOT / "samples/utvm_inference/model/kws_ref_model.tflite"
    lib2 = compile_model(model, tmp_path / "m", CompileOptions(name="m")).mlf_dir / "codegen/host/src/m_lib2.c"
    flags = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-ffreestanding", "-c", str(lib2)]
    for target in ("arm64-apple-macos11", "x86_64-apple-macos10.15", "x86_64-linux-gnu"):
        obj = tmp_path / f"{target}.o"
        r = subprocess.run([clang, "-target", target, *flags, "-o", str(obj)], capture_output=True, text=True,
                           check=False)
        assert r.returncode == 0, f"{target}: {r.stderr[:1000]}"
    with (tmp_path / "x86_64-linux-gnu.o").open("rb") as f:
        section = ELFFile(f).get_section_by_name(".rodata.tvm")
        assert section is not None and section.data_size >= 26672  # every KWS weight
