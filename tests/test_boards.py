"""The int8 MLPerf Tiny models on emulated Cortex-M3 (mps2/an385) and Cortex-M55 (mps3/an547).

For every model and board: the firmware's outputs are bit-identical to TFLite Micro's, the
instruction count that QEMU -icount gives is the same on a second run of the same ELF, and
the model's constants stay in flash. Each model is compiled, built and run once per board
(a module-scoped fixture), and its ELF run a second time.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from toolchains import toolchain_problem
from utvm.run import qemu
from utvm.run.boards import get_board
from utvm.run.harness import parse_harness_output
from utvm.run.runner import RunReport, parse_cycles, run_model

MODELS = ["kws_ref_model", "vww_96_int8", "pretrainedResnet_quant", "ad01_int8"]
BOARDS = ["mps2/an385", "mps3/an547"]


_PROBLEM = toolchain_problem()
pytestmark = pytest.mark.skipif(_PROBLEM is not None, reason=f"bare-metal toolchain missing: {_PROBLEM}")


@dataclass(frozen=True)
class BoardRun:
    report: RunReport
    elf: Path
    #: Instructions and outputs of a second QEMU run of the same ELF.
    rerun_instructions: int | None
    rerun_outputs: list[np.ndarray]


@pytest.fixture(scope="module", params=[(m, b) for m in MODELS for b in BOARDS],
                ids=lambda p: f"{p[0]}-{p[1].replace('/', '_')}")
def board_run(request: pytest.FixtureRequest, models_dir: Path,
              tmp_path_factory: pytest.TempPathFactory) -> BoardRun:
    model, board_name = request.param
    path = models_dir / f"{model}.tflite"
    if not path.is_file():
        pytest.skip(f"{path} is missing")
    workdir = tmp_path_factory.mktemp(f"{model}-{board_name.replace('/', '_')}")
    report = run_model(path, board_name, workdir=workdir)
    elf = workdir / "fw" / "firmware.elf"
    if not elf.is_file():
        found = sorted(workdir.rglob("*.elf"))
        assert found, f"run_model left no firmware ELF in {workdir}"
        elf = found[0]
    board = get_board(board_name)
    rerun = qemu.run_firmware(board, elf)
    assert rerun.fault is None, rerun.fault
    ticks = parse_cycles(rerun.stdout)
    outputs, _, status = parse_harness_output(rerun.stdout, [o.dtype.name for o in report.outputs],
                                              [o.shape for o in report.outputs])
    assert status == 0
    return BoardRun(report=report, elf=elf,
                    rerun_instructions=board.ticks_to_instructions(ticks) if ticks is not None else None,
                    rerun_outputs=outputs)


def test_outputs_identical_to_tflite_micro(board_run: BoardRun) -> None:
    r = board_run.report
    assert r.reference == "tflite-micro"
    assert r.outputs and all(o.dtype == np.int8 for o in r.outputs)
    assert r.outputs_match_reference, f"{r.model} on {r.board}: max abs diff {r.max_abs_diff}"
    assert r.max_abs_diff == 0


def test_instruction_count_is_repeatable(board_run: BoardRun) -> None:
    r = board_run.report
    assert r.instructions is not None and r.instructions > 0
    assert r.macs > 0 and r.instructions_per_mac is not None
    assert board_run.rerun_instructions == r.instructions, (
        f"{board_run.elf}: {r.instructions} then {board_run.rerun_instructions} instructions")
    for first, second in zip(r.outputs, board_run.rerun_outputs):
        np.testing.assert_array_equal(first, second)


def test_constants_in_flash(board_run: BoardRun) -> None:
    mem = board_run.report.memory
    assert mem["constants_in_flash"] is True
    # Every weight byte is in the image's flash part, none copied to RAM.
    assert mem["flash_constants_bytes"] >= board_run.report.constants_bytes
    assert mem["ram_pool_bytes"] >= board_run.report.workspace_bytes
