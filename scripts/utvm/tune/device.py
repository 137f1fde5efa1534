"""Measuring candidate kernels on devices through the RPC server.

All candidates of a kernel are compiled as models of their own and linked into one RPC server
firmware (the server serves several models). ``--flash CMD`` puts it on each device (for a
Zephyr board ``west flash -d {build}``; for an emulated board a command that restarts QEMU with
``{elf}``); then each device runs its share of the candidates (one worker per device), timed
with the board's cycle counter (several measurements, the median; a short candidate runs back to
back inside one measurement so that it spans many counter ticks), and returns the outputs.
"""

from __future__ import annotations

import shlex
import statistics
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ..errors import UtvmError
from ..ir import Graph, Operator
from ..options import CompileOptions
from ..rpc.client import RpcClient, RpcError
from ..rpc.server import (
    ServerSources,
    build_server,
    is_host_board,
    mlf_io_bytes,
    server_runtime_sources,
    write_model_table,
    write_zephyr_models,
)
from .measure import Candidate, compile_candidates, kernel_inputs
from .options import TuneOptions
from .space import Config

#: measurements of each candidate on a device; the median counts
REPEATS = 5
#: counter ticks one measurement should span: a candidate shorter than that runs back to back
#: several times inside one measurement (an MPS2 counter ticks every 40 instructions, Zephyr's
#: fallback clock may be a 32 kHz RTC), so the counter's resolution does not decide the choice
TARGET_TICKS = 2000
#: the CMake file in {build} by which samples/utvm_rpc_server serves the candidates
ZEPHYR_MODELS = "zephyr_models.cmake"


def server_sources(cands: list[Candidate], board: str, build: Path) -> ServerSources:
    """An RPC server serving every compiled candidate (the runtime once, each model's code)."""
    from ..package.mlf import model_sources

    built = [c for c in cands if c.mlf is not None]
    if not built:
        raise UtvmError("no candidate could be compiled")
    first = built[0].mlf
    assert first is not None
    port = "host" if is_host_board(board) else "baremetal"
    crt = first / "runtime"
    sources, ports = server_runtime_sources(crt, port)
    includes = [crt / "include"]
    codegen = []
    for c in built:
        model = model_sources(c.mlf)  # type: ignore[arg-type]
        codegen += [*model.sources, *model.objects]
        includes += model.include_dirs
    table = write_model_table(build / "rpc_models.c", [f"tvmgen_tune_c{c.index}_model" for c in built])
    io = sum((mlf_io_bytes(c.mlf) or 16) for c in built)  # type: ignore[arg-type]  # the server sizes for all
    # the same models for a Zephyr build of samples/utvm_rpc_server (-DUTVM_RPC_MODELS={build})
    write_zephyr_models(build / ZEPHYR_MODELS, [*codegen, table], includes[1:], io)
    return ServerSources(tuple([*codegen, *sources, *ports, table]), tuple(includes),
                         {"UTVM_RPC_MAIN": "", "UTVM_RPC_IO_BUF_SIZE": f"{max(io, 16)}u"})


def _flash(command: str, elf: Path, build: Path, device: str) -> None:
    argv = [a.replace("{elf}", str(elf)).replace("{build}", str(build)).replace("{device}", device)
            for a in shlex.split(command)]
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        last = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or [""]
        raise UtvmError(f"flashing {device} failed (exit {proc.returncode}): {last[0][:200]}")


def _connect(device: str, timeout_s: float = 20.0) -> RpcClient:
    """A synchronised client; the device may still be starting after flashing."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            client = RpcClient.over_url(device, 115200, timeout_s=5.0)
        except Exception as exc:  # the port is not there yet
            if time.monotonic() > deadline:
                raise UtvmError(f"cannot open {device}: {exc}") from None
            time.sleep(0.2)
            continue
        try:
            client.sync(timeout_s=5.0)
            return client
        except RpcError:
            client.close()
            if time.monotonic() > deadline:
                raise UtvmError(f"no RPC server answers on {device}") from None
            time.sleep(0.2)


def _measure_share(device: str, share: list[Candidate], inputs: list, board: str) -> None:  # type: ignore[type-arg]
    from ..run.boards import get_board

    try:  # an emulated board's counter ticks every N instructions; a real board counts cycles
        scale = 1 if is_host_board(board) else get_board(board).instructions_per_tick
    except UtvmError:
        scale = 1
    with _connect(device) as client:
        for c in share:
            try:
                index = client.find_model(f"tune_c{c.index}")
                client.set_inputs(index, inputs)
                first = client.run(index)
                if first.model_status != 0:
                    raise RpcError(f"the kernel returned status {first.model_status}")
                runs = min(0xFFFF, max(1, -(-TARGET_TICKS // max(first.cycles, 1))))
                cycles = []
                for _ in range(REPEATS):
                    run = client.run(index, repeats=runs)
                    if run.model_status != 0:
                        raise RpcError(f"the kernel returned status {run.model_status}")
                    cycles.append(run.cycles)
                c.instructions = round(statistics.median(cycles) * scale / runs)
                c.output = b"".join(a.tobytes() for a in client.get_outputs(index))
            except RpcError as exc:
                c.error = str(exc)


def measure_on_devices(graph: Graph, op: Operator, configs: list[Config], options: TuneOptions,
                       compile_options: CompileOptions, work: Path) -> list[Candidate]:
    """Compile the configurations, put them on every device, measure them there."""
    if not options.flash:
        raise UtvmError("--device needs --flash CMD: how the candidates' firmware gets onto the device")
    work.mkdir(parents=True, exist_ok=True)
    cands = compile_candidates(graph, op, configs, compile_options, work, options.jobs)
    build = work / "server"
    elf = build_server(server_sources(cands, options.board, build), options.board, build)
    for device in options.devices:
        _flash(options.flash, elf, build, device)
    inputs = kernel_inputs(graph, op, options.seed)
    built = [c for c in cands if c.mlf is not None]
    shares = [built[i::len(options.devices)] for i in range(len(options.devices))]
    with ThreadPoolExecutor(max_workers=len(options.devices)) as pool:
        list(pool.map(_measure_share, options.devices, shares, [inputs] * len(shares),
                      [options.board] * len(shares)))
    for c in built:
        if c.instructions is None and not c.error:
            c.error = "not measured"
    return cands
