"""Bare-metal build-and-run layer: arm-none-eabi-gcc + picolibc + qemu-system-arm.

Builds tests/fixtures/baremetal/probe.c with the baremetal platform port for every board,
runs it twice under QEMU and checks output, exit status, instruction counting and that the
constant table stays in flash.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from toolchains import toolchain_problem
from utvm.errors import UtvmError
from utvm.run import qemu as runner
from utvm.run.boards import BOARDS, BoardSpec, get_board
from utvm.run.elfreport import constants_in_flash, memory_report, model_symbols

ROOT = Path(__file__).resolve().parents[1]
PROBE = ROOT / "tests" / "fixtures" / "baremetal" / "probe.c"
PORT_DIR = ROOT / "lib" / "crt" / "ports" / "baremetal"
PORT_SOURCES = sorted(PORT_DIR.glob("*.c"))
CRT_INCLUDE = ROOT / "lib" / "crt" / "include"

LOOP_ITERS = 100_000
EXIT_CODE = 42
#: FNV-1a over the probe's table (i * 2654435761 mod 2**32, i = 0..255).
EXPECTED_CHECKSUM = "0xfd44f0c5"
STACK_SIZE = 16 * 1024


_SKIP = toolchain_problem()
pytestmark = pytest.mark.skipif(
    _SKIP is not None, reason=f"bare-metal toolchain: {_SKIP}"
)

BOARD_NAMES = sorted(BOARDS)


def _build(board: BoardSpec, out_dir: Path, **defines: str) -> Path:
    return runner.build_firmware(
        board,
        [PROBE, *PORT_SOURCES],
        [CRT_INCLUDE],
        {"PROBE_LOOP_ITERS": f"{LOOP_ITERS}u", **defines},
        out_dir,
        ["-std=c99", "-Wextra", "-Werror"],
    )


@dataclass(frozen=True)
class ProbeResult:
    board: BoardSpec
    elf: Path
    runs: tuple[runner.QemuRun, runner.QemuRun]


@pytest.fixture(scope="module", params=BOARD_NAMES)
def probe(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> ProbeResult:
    board = get_board(request.param)
    out = tmp_path_factory.mktemp(board.qemu_machine)
    elf = _build(board, out, PROBE_EXIT_CODE=str(EXIT_CODE))
    first = runner.run_firmware(board, elf, timeout_s=30)
    second = runner.run_firmware(board, elf, timeout_s=30)
    return ProbeResult(board=board, elf=elf, runs=(first, second))


def _loop_ticks(stdout: str) -> dict[int, int]:
    found = re.findall(r"probe: loop_iters=(\d+) ticks=(\d+)", stdout)
    return {int(iters): int(ticks) for iters, ticks in found}


def test_stdout_and_exit_code(probe: ProbeResult) -> None:
    for run in probe.runs:
        assert run.exit_code == EXIT_CODE, run.stdout + run.stderr
        assert "probe: hello from baremetal\n" in run.stdout
        assert f"probe: checksum={EXPECTED_CHECKSUM} pool0=197" in run.stdout
    assert probe.runs[0].stdout == probe.runs[1].stdout


def test_instruction_count_deterministic_and_plausible(probe: ProbeResult) -> None:
    board = probe.board
    ticks = [_loop_ticks(run.stdout) for run in probe.runs]
    assert set(ticks[0]) == {LOOP_ITERS, 2 * LOOP_ITERS}
    # Identical on every run: the virtual clock only advances with executed instructions.
    assert ticks[0] == ticks[1]
    per_tick = board.instructions_per_tick
    # The loop body is `subs` + `bne`: 2 instructions per iteration, plus a few
    # instructions around it, measured with a resolution of one counter tick.
    for iters, count in ticks[0].items():
        instructions = board.ticks_to_instructions(count)
        assert abs(instructions - 2 * iters) <= per_tick + 32, (iters, instructions)
    # Doubling the loop adds 2 * LOOP_ITERS instructions, overheads cancel.
    extra = board.ticks_to_instructions(ticks[0][2 * LOOP_ITERS] - ticks[0][LOOP_ITERS])
    assert abs(extra - 2 * LOOP_ITERS) <= 2 * per_tick
    # Two back-to-back counter reads are a handful of instructions: 0 or 1 tick.
    empty = re.search(r"probe: empty_ticks=(\d+)", probe.runs[0].stdout)
    assert empty is not None and int(empty.group(1)) <= 1


def test_const_table_in_flash_and_not_copied(probe: ProbeResult) -> None:
    board = probe.board
    check = constants_in_flash(probe.elf, board, prefix="tvmgen_probe_")
    assert check.ok, check.problems
    assert [c.name for c in check.constants] == ["tvmgen_probe_const_table"]
    table = check.constants[0]
    assert table.size == 1024
    assert board.flash.contains(table.address, table.size)
    assert not table.copied_to_ram
    # The same answer from the ELF alone, as `west tvm report` uses it.
    assert constants_in_flash(probe.elf, None, prefix="tvmgen_probe_").ok

    symbols = model_symbols(probe.elf, "probe", board)
    assert [s.name for s in symbols.pool] == ["tvmgen_probe_pool"]
    assert symbols.pool_bytes == 1024
    assert board.ram.contains(symbols.pool[0].address, 1024)
    assert symbols.constants_bytes == 1024

    report = memory_report(probe.elf, board)
    assert report.unplaced == ()
    assert report.ram_pool == 1024
    assert report.ram_stack == STACK_SIZE
    assert report.flash_constants >= 1024
    assert report.flash_code > 1000
    # Only picolibc's few bytes of .data have a load image; the table is not copied.
    assert report.flash_data_init < 256
    assert report.flash_total <= board.flash.size
    assert report.ram_total <= board.ram.size
    # Without a board the split is the same.
    assert memory_report(probe.elf, None).as_dict() | {
        "flash_capacity": None,
        "ram_capacity": None,
    } == report.as_dict() | {"flash_capacity": None, "ram_capacity": None}


def test_writable_table_is_reported(tmp_path: Path) -> None:
    board = get_board("mps2/an385")
    elf = _build(board, tmp_path, PROBE_TABLE_WRITABLE="1")
    check = constants_in_flash(elf, board, prefix="tvmgen_probe_")
    assert not check.ok
    assert any(
        "tvmgen_probe_const_table" in p and "copied" in p for p in check.problems
    )
    named = constants_in_flash(elf, board, names=["tvmgen_probe_const_table"])
    assert not named.ok
    assert memory_report(elf, board).flash_data_init >= 1024
    run = runner.run_firmware(board, elf, timeout_s=30)
    assert f"checksum={EXPECTED_CHECKSUM}" in run.stdout


def test_abort_exits_with_code(tmp_path: Path) -> None:
    board = get_board("mps3/an547")
    elf = _build(board, tmp_path, PROBE_ABORT="7")
    run = runner.run_firmware(board, elf, timeout_s=30)
    assert run.exit_code == 7
    assert "utvm: abort(7)" in run.stdout


def _qemu_processes_for(elf: Path) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if str(elf).encode() in cmdline:
            pids.append(int(entry.name))
    return pids


def test_timeout_kills_qemu(tmp_path: Path) -> None:
    board = get_board("mps2/an385")
    elf = _build(board, tmp_path, PROBE_HANG="1")
    with pytest.raises(UtvmError, match="timed out after 1 s"):
        runner.run_firmware(board, elf, timeout_s=1)
    assert _qemu_processes_for(elf) == []


@pytest.mark.parametrize("board_name", BOARD_NAMES)
def test_platform_port_is_strict_c99(board_name: str, tmp_path: Path) -> None:
    board = get_board(board_name)
    tools = runner.find_tools(qemu=False)
    for src in PORT_SOURCES:
        cmd = [
            str(tools.gcc),
            *board.gcc_flags,
            "--specs=picolibc.specs",
            "-std=c99",
            "-Wall",
            "-Wextra",
            "-Wpedantic",
            "-Werror",
            "-O2",
            f"-I{CRT_INCLUDE}",
            *[f"-D{k}={v}" for k, v in board.defines.items()],
            "-c",
            str(src),
            "-o",
            str(tmp_path / f"{src.stem}.o"),
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stderr


def test_build_error_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.c"
    bad.write_text("int main(void) { return undefined_name; }\n")
    with pytest.raises(UtvmError) as info:
        runner.build_firmware(get_board("mps2/an385"), [bad], [], {}, tmp_path / "out")
    message = str(info.value)
    assert "\n" not in message
    assert "bad.c" in message and "undefined_name" in message


def test_missing_tools_name_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    real_which = shutil.which

    def no_qemu(cmd: str, *args: object, **kwargs: object) -> str | None:
        return None if cmd == runner.QEMU else real_which(cmd)

    monkeypatch.setattr(runner.shutil, "which", no_qemu)
    with pytest.raises(UtvmError, match="install the Debian package qemu-system-arm"):
        runner.find_tools()
    assert runner.find_tools(qemu=False).qemu is None

    monkeypatch.setattr(runner.shutil, "which", lambda cmd, *a, **k: None)
    with pytest.raises(UtvmError, match="install the Debian package gcc-arm-none-eabi"):
        runner.find_tools(qemu=False)


def test_get_board() -> None:
    assert get_board("mps2/an386").cpu == "cortex-m4"
    assert get_board("mps3-an547") is get_board("mps3/corstone300/an547")
    assert get_board("mps2/an500").instructions_per_tick == 40
    assert get_board("mps3/an547").instructions_per_tick == 50
    with pytest.raises(UtvmError) as info:
        get_board("nrf52840dk")
    message = str(info.value)
    assert "\n" not in message
    for name in BOARDS:
        assert name in message
