"""Consecutive RPC requests against a running server, and what it took to get them through.

    python3 benchmarks/bench_rpc_soak.py socket://127.0.0.1:4321 [--requests 1000] [--json]

Repeats MODEL_INFO, set inputs (WRITE_INPUT), RUN, get outputs (READ_OUTPUT) and PROFILE on
model 0 of the server at the URL (a serial port, a pty, ``socket://host:port``: e.g.
samples/utvm_rpc_server under ``west build -t run``) and prints the requests made, the
client's resends, the attempts that timed out, the frame errors the server sent back, the
outputs that differed from the first of the same input, and the distinct cycle counts of the
runs. Not a test: figures only. Exit status 1 when any request needed a resend.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from utvm.rpc.client import RpcClient, RpcError  # noqa: E402
from utvm.rpc.runner import soak  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("url")
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    t0 = time.monotonic()
    try:
        with RpcClient.over_url(args.url) as client:
            client.sync()
            result = soak(client, 0, args.requests)
    except RpcError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    figures = result.to_json()
    figures["seconds"] = round(time.monotonic() - t0, 1)
    if args.json:
        print(json.dumps(figures))
    else:
        for key, value in figures.items():
            print(f"{key:18} {value}")
    return 1 if result.resends or result.timeouts or result.frame_errors or result.mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
