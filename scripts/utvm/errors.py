"""The exception types for user-facing errors, and the short lists their messages show."""

from __future__ import annotations

REPORT_HINT = "this is a bug in utvm: please report it with the model (--debug shows the traceback)"


class UtvmError(Exception):
    """A problem with the user's input or environment.

    The command line prints ``error: <message>`` on one line and exits with code 2;
    no traceback is shown for these.
    """


class InternalError(UtvmError):
    """An unexpected exception inside the compiler, turned into one line that names where it
    happened; the original exception is its ``__cause__`` (``--debug`` prints its traceback)."""

    def __init__(self, where: str, exc: BaseException) -> None:
        first = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else ""
        detail = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
        super().__init__(f"internal error while compiling {where} ({detail}); {REPORT_HINT}")
        self.__cause__ = exc


def internal(where: str, exc: BaseException) -> UtvmError:
    """An InternalError for ``exc`` (not a UtvmError) raised while compiling ``where``; a
    MemoryError becomes a plain error (the machine, not utvm)."""
    if isinstance(exc, MemoryError):
        return UtvmError(f"out of memory while compiling {where}")
    return InternalError(where, exc)


def short_list(values: object, limit: int = 8) -> str:
    """``[a, b, c, ... and N more]``: a list for an error message, at most ``limit`` items shown."""
    items = list(values)  # type: ignore[call-overload]
    shown = ", ".join(str(v) for v in items[:limit])
    return f"[{shown}, ... and {len(items) - limit} more]" if len(items) > limit else f"[{shown}]"
