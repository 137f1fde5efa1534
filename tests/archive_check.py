"""A static library (``--export static-lib``) linked alone with the QEMU harness and run on a
board, compared with TFLite Micro (shared by the export and external-module tests)."""

from __future__ import annotations

from pathlib import Path

from utvm.run.runner import compare

ROOT = Path(__file__).resolve().parents[1]


def assert_archive_runs_bit_exact(model: Path, result, board, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Link DIR/lib/lib<name>.a of ``result`` with the QEMU harness and the bare-metal port
    only (no other generated file), run it on ``board`` and compare with TFLite Micro."""
    from utvm.run import qemu
    from utvm.run.harness import parse_harness_output, write_harness
    from utvm.run.reference import random_inputs, run_reference

    lib = result.mlf_dir / "lib"
    g = result.graph
    x = random_inputs(g)
    harness = write_harness(tmp_path, result.name, x, [g.tensors[n].nbytes for n in g.outputs])
    port = ROOT / "lib" / "crt" / "ports" / "baremetal" / "platform_baremetal.c"
    elf = qemu.build_firmware(board, [harness, port, lib / f"lib{result.name}.a"], [lib / "include"], {},
                              tmp_path / "fw")
    run = qemu.run_firmware(board, elf)
    assert run.fault is None, run.stdout
    outputs, _, status = parse_harness_output(run.stdout, [g.tensors[n].dtype for n in g.outputs],
                                              [g.tensors[n].shape for n in g.outputs])
    assert status == 0
    ref, _ = run_reference(model, x, len(g.outputs), 1)
    ok, max_abs, _ = compare(outputs, ref)
    assert ok, f"max abs diff {max_abs}"
