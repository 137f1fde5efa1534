"""What ``utvm run --rpc`` and ``utvm profile`` do: build (or reach) an RPC server for a
compiled model, write its inputs, run it, read its outputs and per-operator cycles."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from utvm.rpc import protocol as p
from utvm.rpc.client import RpcClient, RpcError
from utvm.rpc.server import build_server, connect, mlf_model_name, mlf_server_sources


@dataclass(frozen=True)
class TensorValue:
    name: str
    array: np.ndarray

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "dtype": str(self.array.dtype),
            "shape": list(self.array.shape),
            "data": self.array.reshape(-1).tolist(),
        }


@dataclass(frozen=True)
class RpcRunResult:
    """Outputs and timing of one model run through the RPC server."""

    model: str
    board: str
    inputs: list[TensorValue]
    outputs: list[TensorValue]
    cycles: int

    def to_json(self) -> dict[str, object]:
        return {
            "model": self.model,
            "board": self.board,
            "cycles": self.cycles,
            "inputs": [i.to_json() for i in self.inputs],
            "outputs": [o.to_json() for o in self.outputs],
        }


@dataclass(frozen=True)
class OperatorCycles:
    name: str
    cycles: int
    #: cycles / total_cycles of the run (the rest is executor overhead).
    share: float


@dataclass(frozen=True)
class ProfileResult:
    """Per-operator cycles of one run: the JSON of ``utvm profile --json``."""

    total_cycles: int
    operators: list[OperatorCycles]

    def to_json(self) -> dict[str, object]:
        return {
            "total_cycles": self.total_cycles,
            "operators": [
                {"name": o.name, "cycles": o.cycles, "share": o.share}
                for o in self.operators
            ],
        }

    def format_table(self) -> str:
        width = max([len(o.name) for o in self.operators] + [8])
        lines = [f"{'operator':<{width}}  {'cycles':>12}  {'share':>7}"]
        for o in self.operators:
            lines.append(f"{o.name:<{width}}  {o.cycles:>12}  {100 * o.share:>6.2f}%")
        op_sum = sum(o.cycles for o in self.operators)
        lines.append(f"{'(sum of operators)':<{width}}  {op_sum:>12}")
        lines.append(f"{'(whole run)':<{width}}  {self.total_cycles:>12}")
        return "\n".join(lines)


def default_inputs(info: p.ModelInfo, seed: int = 0) -> list[np.ndarray]:
    """Deterministic random inputs covering each dtype's range."""
    rng = np.random.default_rng(seed)
    arrays = []
    for t in info.inputs:
        dtype = np.dtype(t.dtype)
        if dtype.kind in "iu":
            limits = np.iinfo(dtype)
            arr = rng.integers(
                limits.min, limits.max, size=t.shape, endpoint=True, dtype=dtype
            )
        else:
            arr = rng.uniform(-1.0, 1.0, size=t.shape).astype(dtype)
        arrays.append(arr)
    return arrays


def profile_from_client(client: RpcClient, model: int) -> ProfileResult:
    """Per-operator cycles of the last run of ``model`` on a connected server."""
    names = client.op_names(model)
    reply = client.profile(model)
    total = reply.total_cycles
    ops = [
        OperatorCycles(
            name=names[i] if i < len(names) else f"op{i}",
            cycles=c,
            share=(c / total) if total else 0.0,
        )
        for i, c in enumerate(reply.op_cycles)
    ]
    return ProfileResult(total_cycles=total, operators=ops)


def _session(
    mlf_dir: Path | None,
    board: str,
    device: str | None,
    work_dir: Path | None,
    profile: bool,
) -> tuple[Path | None, str | None, Path]:
    """Build the server when no device is given; returns (binary, model name, work dir)."""
    work = (
        Path(work_dir)
        if work_dir is not None
        else Path(tempfile.mkdtemp(prefix="utvm-rpc-"))
    )
    name = mlf_model_name(Path(mlf_dir)) if mlf_dir is not None else None
    if device is not None:
        return None, name, work
    if mlf_dir is None:
        raise RpcError("a compiled model (MLF directory) or --device is needed")
    src = mlf_server_sources(Path(mlf_dir), board, work / "rpc_build", profile)
    return build_server(src, board, work / "rpc_build"), name, work


def run_over_rpc(
    mlf_dir: Path | None,
    board: str,
    *,
    device: str | None = None,
    inputs: Sequence[np.ndarray] | None = None,
    work_dir: Path | None = None,
    seed: int = 0,
    baudrate: int = 115200,
    with_profile: bool = False,
) -> tuple[RpcRunResult, ProfileResult | None]:
    """Run the model of ``mlf_dir`` once through an RPC server.

    Without ``device`` the server is built for ``board`` (``host`` or a QEMU board) and
    started; with ``device`` (serial port, pty, ``socket://``) it must already be running
    and serve a model of the same name (or its first model when ``mlf_dir`` is None).
    ``inputs`` default to :func:`default_inputs`. Returns the result and, with
    ``with_profile``, the per-operator cycles of the same run.
    """
    binary, name, work = _session(mlf_dir, board, device, work_dir, with_profile)
    with connect(board, binary, device, baudrate, log_path=work / "qemu.log") as client:
        index = client.find_model(name)
        info = client.model_info(index)
        arrays = list(inputs) if inputs is not None else default_inputs(info, seed)
        client.set_inputs(index, arrays)
        run = client.run(index)
        outputs = [
            TensorValue(t.name, a)
            for t, a in zip(info.outputs, client.get_outputs(index))
        ]
        prof = None
        if with_profile:
            if not info.profiling:
                raise RpcError(f"model {info.name} was built without UTVM_PROFILE")
            prof = profile_from_client(client, index)
        staged = [
            TensorValue(t.name, np.asarray(a)) for t, a in zip(info.inputs, arrays)
        ]
        return RpcRunResult(info.name, board, staged, outputs, run.cycles), prof


def profile(
    mlf_dir: Path | None,
    board: str,
    *,
    device: str | None = None,
    inputs: Sequence[np.ndarray] | None = None,
    work_dir: Path | None = None,
    seed: int = 0,
    baudrate: int = 115200,
) -> ProfileResult:
    """Per-operator cycles of one run of the model (see :func:`run_over_rpc`)."""
    _, prof = run_over_rpc(
        mlf_dir,
        board,
        device=device,
        inputs=inputs,
        work_dir=work_dir,
        seed=seed,
        baudrate=baudrate,
        with_profile=True,
    )
    assert prof is not None
    return prof


@dataclass(frozen=True)
class SoakResult:
    """Figures of :func:`soak`: requests made and what the client had to do to get them through."""

    requests: int
    cycles_per_run: list[int]
    resends: int
    timeouts: int
    frame_errors: int
    mismatches: int

    def to_json(self) -> dict[str, object]:
        return {
            "requests": self.requests,
            "resends": self.resends,
            "timeouts": self.timeouts,
            "frame_errors": self.frame_errors,
            "output_mismatches": self.mismatches,
            "runs": len(self.cycles_per_run),
            "cycles_per_run": sorted(set(self.cycles_per_run)),
        }


def soak(client: RpcClient, model: int, requests: int, seeds: int = 4) -> SoakResult:
    """Repeat MODEL_INFO, set inputs, RUN, get outputs and PROFILE until ``requests`` requests
    have been made, cycling through ``seeds`` inputs; every output is compared with the first
    output of the same input (a lost or damaged frame that slipped through shows as a
    mismatch). The client's counters are read as differences, so a client that was used
    before is fine."""
    start = (client.requests, client.resends, client.timeouts, client.frame_errors)
    info = p.ModelInfo.parse(model, client.request(p.Cmd.MODEL_INFO, p.req_model(model)).payload)
    inputs = [default_inputs(info, seed) for seed in range(seeds)]
    first: dict[int, list[np.ndarray]] = {}
    cycles: list[int] = []
    mismatches = 0
    i = 0
    while client.requests - start[0] < requests:
        seed = i % seeds
        i += 1
        client.request(p.Cmd.MODEL_INFO, p.req_model(model))
        client.set_inputs(model, inputs[seed])
        cycles.append(client.run(model).cycles)
        outputs = client.get_outputs(model)
        client.profile(model)
        if seed not in first:
            first[seed] = outputs
        elif any(not np.array_equal(a, b) for a, b in zip(first[seed], outputs)):
            mismatches += 1
    return SoakResult(
        requests=client.requests - start[0],
        cycles_per_run=cycles,
        resends=client.resends - start[1],
        timeouts=client.timeouts - start[2],
        frame_errors=client.frame_errors - start[3],
        mismatches=mismatches,
    )
