"""Command line: ``python -m utvm compile|run|profile|tune|ops|info`` (``west tvm`` calls the
same functions). One module per command; :mod:`.main` wires them."""

from .compile import add_compile_arguments, cmd_compile
from .info import version_text
from .main import MAX_ERROR_CHARS, build_parser, error_line, main
from .run import add_run_arguments, cmd_run

__all__ = ["MAX_ERROR_CHARS", "add_compile_arguments", "add_run_arguments", "build_parser", "cmd_compile",
           "cmd_run", "error_line", "main", "version_text"]
