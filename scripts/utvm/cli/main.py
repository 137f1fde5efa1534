"""``utvm``'s entry point: the parser wired from the command modules, and one error line for
whatever goes wrong."""

from __future__ import annotations

import argparse
import sys
import traceback
import warnings

from ..errors import InternalError, UtvmError
from .compile import add_compile_parser
from .info import add_info_parser, version_text
from .ops import add_ops_parser
from .rpc import add_profile_parser
from .run import add_run_parser
from .tune import add_tune_parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="utvm", description="Compile ML models into C for microcontrollers with TVM.")
    parser.add_argument("--version", action="version", version=version_text())
    parser.add_argument("--debug", action="store_true", help="show the traceback of an internal error")
    sub = parser.add_subparsers(dest="command", required=True)
    add_compile_parser(sub)
    add_run_parser(sub)
    add_profile_parser(sub)
    add_tune_parser(sub)
    add_ops_parser(sub)
    add_info_parser(sub)
    return parser


#: the longest error line printed (a longer message is cut in the middle)
MAX_ERROR_CHARS = 400


def error_line(message: str) -> str:
    """``error: <message>`` on one line of at most MAX_ERROR_CHARS characters."""
    text = " ".join(str(message).split())
    limit = MAX_ERROR_CHARS - len("error: ")
    if len(text) > limit:
        keep = limit - 40
        text = f"{text[:keep]} ... ({len(text) - keep} more characters)"
    return f"error: {text}"


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    debug = bool(getattr(args, "debug", False))
    try:
        with warnings.catch_warnings():
            if not debug:  # stderr carries the one error line only (numpy on damaged constants)
                warnings.simplefilter("ignore")
            return args.func(args)
    except UtvmError as exc:
        if debug and exc.__cause__ is not None:
            traceback.print_exception(exc.__cause__)
        print(error_line(str(exc)), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except MemoryError:
        print(error_line(f"out of memory running utvm {args.command}"), file=sys.stderr)
        return 2
    except Exception as exc:  # the last line: one error, never a traceback (unless --debug)
        if debug:
            traceback.print_exc()
        print(error_line(str(InternalError(f"(utvm {args.command})", exc))), file=sys.stderr)
        return 2
