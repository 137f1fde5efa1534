"""``west tvm``: compile ML models with utvm, build and run them on Zephyr, measure them.

A thin west extension: the logic lives in the importable package ``utvm``
(``utvm.cli`` for compile/run, ``utvm.zephyr`` for build and report). West loads this file
by path, so the repository's scripts/ directory is put on sys.path here.

SPDX-License-Identifier: Apache-2.0
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

_SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
if str(_SCRIPTS) not in sys.path:
    sys.path.insert(0, str(_SCRIPTS))

from west.commands import WestCommand

from utvm.errors import UtvmError
from utvm.zephyr import build as zbuild

_DESCRIPTION = """\
Compile ML models (.tflite, .onnx) into plain C with utvm (Apache TVM), build them into a
Zephyr application, run them and measure them.

  west tvm compile MODEL --name NAME -o DIR   Model Library Format (as python -m utvm compile)
  west tvm build -b BOARD [--model MODEL]     west build of samples/utvm_inference (or --app)
                                              with the model; the model is compiled in the
                                              build by tvm_add_model(); more arguments go to
                                              west build (after --: to CMake)
  west tvm run --board BOARD MODEL ...        host and bare-metal QEMU boards: python -m utvm
                                              run; Zephyr boards (ZEPHYR_BASE set): build the
                                              sample and `west build -t run`, except boards
                                              Zephyr emulates with Arm FVP only (mps2/an386,
                                              mps2/an500): utvm's QEMU runner
  west tvm report [-d BUILD_DIR] [--json]     flash and RAM of the models in a built image

Build directories follow west build: -d, else build.dir-fmt (default build); sysbuild
builds are read in their default domain. After west tvm build, `west flash` flashes it.
"""


class Tvm(WestCommand):
    def __init__(self) -> None:
        super().__init__(
            "tvm",
            "compile ML models with utvm (TVM), build, run and measure them on Zephyr",
            _DESCRIPTION,
            accepts_unknown_args=True,
        )

    def do_add_parser(self, parser_adder: Any) -> argparse.ArgumentParser:
        parser = parser_adder.add_parser(
            self.name, help=self.help, description=self.description,
            formatter_class=argparse.RawDescriptionHelpFormatter)
        cli = _cli_or_none()
        if cli is not None:
            parser.add_argument("--version", action="version", version=cli.version_text())
        sub = parser.add_subparsers(dest="tvm_command", metavar="COMMAND")
        sub.required = True

        p = sub.add_parser("compile", help="compile a model into a Model Library Format directory")
        if cli is not None:
            cli.add_compile_arguments(p)

        p = sub.add_parser(
            "build", allow_abbrev=False,
            help="build a Zephyr application with a model (default: samples/utvm_inference)",
            description="Build a Zephyr application that uses tvm_add_model() with west build. "
            "Arguments not listed here go to west build; those after -- go to CMake.")
        _add_build_arguments(p)

        p = sub.add_parser(
            "run", help="run a model: on the host or bare-metal QEMU (utvm run), or on a "
            "Zephyr board (build the sample, west build -t run)")
        if cli is not None:
            cli.add_run_arguments(p)
        _add_free(p, ["--baremetal"], action="store_true",
                  help="use utvm's bare-metal runner even when ZEPHYR_BASE is set")
        _add_free(p, ["--zephyr-build-dir"], dest="zephyr_build_dir", type=Path, default=None,
                  help="Zephyr build directory (Zephyr boards only; default: west build's)")

        p = sub.add_parser("report", help="flash and RAM taken by the models in a built image")
        p.add_argument("-d", "--build-dir", type=Path, default=None,
                       help="Zephyr build directory (default: west's build.dir-fmt, else build); "
                       "reads zephyr/zephyr.elf, or the default domain's with sysbuild")
        p.add_argument("--elf", type=Path, help="read this ELF file instead")
        p.add_argument("--name", action="append", default=None,
                       help="model name (repeatable; default: every model in the image)")
        p.add_argument("--json", action="store_true", help="print JSON instead of a table")
        return parser

    def do_run(self, args: argparse.Namespace, unknown_args: list[str]) -> None:
        if args.tvm_command != "build" and unknown_args:
            self.die(f"west tvm {args.tvm_command}: unrecognized arguments: "
                     + " ".join(unknown_args))
        try:
            if args.tvm_command == "compile":
                self._exit(_cli().cmd_compile(args))
            elif args.tvm_command == "build":
                self._build(args, unknown_args)
            elif args.tvm_command == "run":
                self._run(args)
            elif args.tvm_command == "report":
                self._report(args)
        except UtvmError as e:
            self.die(str(e))

    # -- sub-commands -------------------------------------------------------------------

    def _build(self, args: argparse.Namespace, unknown: list[str]) -> None:
        west_args, cmake_args = zbuild.split_passthrough(unknown)
        if args.pristine:
            west_args = ["-p", args.pristine, *west_args]
        req = zbuild.BuildRequest(
            board=args.board, app=args.app, build_dir=args.build_dir, model=args.model,
            name=args.name, target=args.target, west_args=west_args, cmake_args=cmake_args)
        self._zephyr_build(req, "build")

    def _run(self, args: argparse.Namespace) -> None:
        board = getattr(args, "board", None) or "host"
        base = self._zephyr_base()
        if not zbuild.uses_zephyr(board, base, bool(getattr(args, "baremetal", False))):
            if base is not None and board in zbuild.FVP_ONLY_BOARDS:
                self.inf(f"{board}: Zephyr emulates this board with Arm FVP only; running the "
                         "model with utvm's bare-metal QEMU runner instead")
            self._exit(_cli().cmd_run(args))
            return
        if getattr(args, "input", None):
            self.wrn("--input is not used on Zephyr boards: the sample runs the input it "
                     "embeds (and checks TFLite Micro's output for it)")
        model = getattr(args, "model", None)
        cmake_args = ["-DUTVM_OPTIONS=--io-in-pool"] if getattr(args, "io_in_pool", False) else []
        cmake_args += zbuild.offload_cmake_args(getattr(args, "offload", None) or [])
        if getattr(args, "cmsis_nn_dir", None):
            self.wrn("--cmsis-nn-dir is not used on Zephyr boards: Zephyr's cmsis-nn module is")
        req = zbuild.BuildRequest(
            board=board, build_dir=args.zephyr_build_dir,
            model=Path(model) if model else None, name=getattr(args, "name", None),
            target="run", cmake_args=cmake_args)
        self._zephyr_build(req, "run")

    def _report(self, args: argparse.Namespace) -> None:
        from utvm.zephyr import report

        build_dir = args.build_dir
        if args.elf is None:
            build_dir = zbuild.find_build_dir(args.build_dir, self._dir_fmt())
        rep = report.build_report(build_dir, elf=args.elf, names=args.name)
        if args.json:
            print(report.to_json(rep))
        else:
            for line in report.format_table(rep):
                self.inf(line)

    # -- helpers ------------------------------------------------------------------------

    def _workspace_zephyr(self) -> Path | None:
        """The zephyr project of this west workspace, if it has one (then `west build`
        exists)."""
        if not self.has_manifest:
            return None
        for project in self.manifest.projects:
            if project.name == "zephyr":
                return Path(project.abspath)
        return None

    def _dir_fmt(self) -> str | None:
        """west's build.dir-fmt setting, if any."""
        if not self.has_config:
            return None
        return self.config.get("build.dir-fmt")

    def _zephyr_base(self) -> Path | None:
        topdir = Path(self.topdir) if self.topdir else None
        config_base = self.config.get("zephyr.base") if self.has_config else None
        return zbuild.find_zephyr_base(os.environ, self._workspace_zephyr(), config_base,
                                       topdir)

    def _zephyr_build(self, req: zbuild.BuildRequest, cmd: str) -> None:
        base = self._zephyr_base()
        if base is None:
            self.die(zbuild.NO_ZEPHYR_MESSAGE.format(cmd=cmd))
        if self._workspace_zephyr() is not None:
            commands = [zbuild.west_build_command(req, [sys.executable, "-m", "west"])]
        else:
            commands = zbuild.cmake_commands(req, base, dir_fmt=self._dir_fmt())
        env = dict(os.environ, ZEPHYR_BASE=str(base))
        for i, command in enumerate(commands):
            self.inf("running: " + " ".join(command), colorize=True)
            if req.target == "run" and i == len(commands) - 1:
                # The emulator keeps running after main() returns: stop at the verdict.
                rc = zbuild.run_until_verdict(command, env, echo=self.inf)
                if rc != 0:
                    self.die(f"the run did not pass (exit code {rc})", exit_code=rc)
                return
            rc = subprocess.call(command, env=env)
            if rc != 0:
                self.die(f"{command[0]} exited with code {rc}", exit_code=rc)
        if cmd == "build" and req.target is None and self._workspace_zephyr() is not None:
            where = f" -d {req.build_dir}" if req.build_dir is not None else ""
            self.inf(f"built; flash it with: west flash{where}")

    def _exit(self, rc: int) -> None:
        if rc:
            sys.exit(rc)


def _add_build_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("-b", "--board", required=True, help="Zephyr board, e.g. mps2/an385")
    p.add_argument("--model", type=Path,
                   help="model to build in (default: the application's own, KWS in the sample)")
    p.add_argument("--name", help="model name, a C identifier (default: the file's stem)")
    p.add_argument("--app", type=Path, default=zbuild.DEFAULT_APP,
                   help="application directory (default: samples/utvm_inference)")
    p.add_argument("-d", "--build-dir", type=Path, default=None,
                   help="build directory (default: west build's: build.dir-fmt, else build)")
    p.add_argument("-t", "--target", help="build target, e.g. run (QEMU boards)")
    p.add_argument("-p", "--pristine", choices=["auto", "always", "never"],
                   help="as west build --pristine")


def _add_free(p: argparse.ArgumentParser, flags: list[str], **kwargs: Any) -> None:
    """Adds an option unless utvm.cli's arguments already define one of its flags."""
    try:
        p.add_argument(*flags, **kwargs)
    except argparse.ArgumentError:
        p.set_defaults(**{kwargs.get("dest", flags[0].lstrip("-").replace("-", "_")):
                          kwargs.get("default", False)})


def _cli_or_none() -> Any:
    """utvm.cli, or None when it cannot be imported (west tvm --help works all the same)."""
    try:
        from utvm import cli
    except ImportError:
        return None
    return cli


def _cli() -> Any:
    try:
        from utvm import cli
    except ImportError as e:
        raise UtvmError(f"the utvm compiler cannot be imported ({e}): "
                        "pip install -r scripts/requirements.txt") from e
    return cli
