"""The ``--flash`` command of ``utvm tune --device`` for this sample: rebuild it with the
candidates of one tuning step and put it on the device, QEMU or a board.

    python3 reflash.py --models {build} -d BUILD_DIR -b BOARD [--qemu] [-- CMAKE_ARGS]
                                                          rebuild, (re)start
    python3 reflash.py --stop -d BUILD_DIR                                stop the QEMU it started

``{build}`` is the directory where ``utvm tune`` compiled the candidates (its
``zephyr_models.cmake`` lists them; CMakeLists.txt reads it with ``-DUTVM_RPC_MODELS``).
The sample is configured and built with CMake and Ninja, as ``west build`` does (no west
workspace needed: Zephyr finds its modules from ZEPHYR_BASE). With ``--qemu`` the previous
QEMU is stopped, the sample rebuilt, and its ``run`` target (``west build -t run``) started in
a session of its own (its pid in BUILD_DIR/utvm_run.pid, console in BUILD_DIR/utvm_run.log);
the command returns once the server printed its ready line, so that the RPC port (UART1 on
TCP port 4321) is listening. Without ``--qemu`` the ``flash`` target (``west flash``) puts
the image on the board.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

SAMPLE = Path(__file__).resolve().parent
READY = "utvm_rpc_server: ready"


def stop(build_dir: Path) -> None:
    """Ends the QEMU session this script started in build_dir, if any."""
    pidfile = build_dir / "utvm_run.pid"
    if not pidfile.is_file():
        return
    try:
        os.killpg(int(pidfile.read_text()), signal.SIGTERM)
        time.sleep(0.5)
        os.killpg(int(pidfile.read_text()), signal.SIGKILL)
    except (ProcessLookupError, ValueError):
        pass
    pidfile.unlink()


def run(argv: list[str], what: str) -> None:
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "error" in ln.lower()]
        last = (lines or (proc.stdout + proc.stderr).splitlines() or [""])[-1]
        raise SystemExit(f"error: {what} failed (exit {proc.returncode}): {last.strip()[:300]}")


def start_qemu(build_dir: Path, timeout_s: float) -> None:
    log = build_dir / "utvm_run.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(["ninja", "-C", str(build_dir), "run"],
                                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    (build_dir / "utvm_run.pid").write_text(str(proc.pid))
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if READY in log.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            raise SystemExit(f"error: QEMU ended (exit {proc.returncode}) before the ready line; see {log}")
        time.sleep(0.2)
    stop(build_dir)
    raise SystemExit(f"error: no ready line from the server within {timeout_s:.0f} s; see {log}")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-d", "--build-dir", required=True, type=Path, help="Zephyr build directory")
    ap.add_argument("-b", "--board", help="Zephyr board (west build -b); fixed once BUILD_DIR is configured")
    ap.add_argument("--models", type=Path, help="utvm tune's {build} directory")
    ap.add_argument("--qemu", action="store_true", help="(re)start QEMU with west build -t run")
    ap.add_argument("--stop", action="store_true", help="stop the QEMU started before, then exit")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for the ready line")
    ap.add_argument("cmake_args", nargs="*", help="after --: more CMake arguments (-DUTVM_RPC_QEMU_PORT=...)")
    args = ap.parse_args(argv)
    build_dir = args.build_dir.resolve()
    stop(build_dir)
    if args.stop:
        return 0
    if args.models is None or args.board is None:
        ap.error("--models and -b are needed unless --stop")
    if not (args.models / "zephyr_models.cmake").is_file():
        raise SystemExit(f"error: {args.models}: no zephyr_models.cmake (utvm tune --device's {{build}})")
    run(["cmake", "-S", str(SAMPLE), "-B", str(build_dir), "-GNinja", f"-DBOARD={args.board}",
         f"-DPython3_EXECUTABLE={sys.executable}", f"-DUTVM_RPC_MODELS={args.models.resolve()}",
         *args.cmake_args], "configuring the sample")
    run(["cmake", "--build", str(build_dir)], "building the sample")
    if args.qemu:
        start_qemu(build_dir, args.timeout)
    else:
        run(["ninja", "-C", str(build_dir), "flash"], "flashing (west flash)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
