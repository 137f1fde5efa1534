"""Write a seed corpus for fuzz_rpc_frame: valid request sequences for the fixture models.

PYTHONPATH=scripts python tests/fuzz/make_corpus.py CORPUS_DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

from utvm.rpc import protocol as p


def seeds() -> dict[str, bytes]:
    f = p.encode_frame
    return {
        "ping": f(p.Cmd.PING, 1, b"hello"),
        "info": f(p.Cmd.INFO, 2),
        "model_info": f(p.Cmd.MODEL_INFO, 3, p.req_model(0))
        + f(p.Cmd.MODEL_INFO, 4, b"\x01"),
        "op_names": f(p.Cmd.OP_NAMES, 5, p.req_op_names(0, 0)),
        "write_run_read": f(
            p.Cmd.WRITE_INPUT, 6, p.req_write_input(0, 0, 0, bytes(range(8)))
        )
        + f(p.Cmd.RUN, 7, p.req_model(0))
        + f(p.Cmd.READ_OUTPUT, 8, p.req_read(0, 0, 0, 8))
        + f(p.Cmd.PROFILE, 9, p.req_model(0)),
        "mul": f(p.Cmd.WRITE_INPUT, 10, p.req_write_input(1, 1, 4, bytes(20)))
        + f(p.Cmd.RUN, 11, p.req_model(1))
        + f(p.Cmd.READ_INPUT, 12, p.req_read(1, 1, 0, 24)),
        "reset": f(p.Cmd.RESET, 13),
    }


def write_corpus(directory: Path) -> list[Path]:
    """Each seed twice: plain, and behind a truncated copy with timeouts every 7 bytes."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, (name, data) in enumerate(seeds().items()):
        for suffix, body in (
            ("", bytes([i & 3, 0]) + data),
            ("_t", bytes([3, 7]) + data[:5] + data),
        ):
            path = directory / f"{name}{suffix}"
            path.write_bytes(body)
            paths.append(path)
    return paths


if __name__ == "__main__":
    write_corpus(Path(sys.argv[1]))
