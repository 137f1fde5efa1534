"""Which C kernel headers a source needs: the headers of ``utvm/kernels/`` (one per operator
family and instruction set, ``<family>_<isa>.h``) that define the ``utvm_*`` / ``UTVM_*`` names
the source uses, read from the headers themselves, so that a kernel's header is wherever its C
is and a new header needs no list here.

Generated kernels include only these (:func:`includes_for`); the MLF ships only these and what
they include (:func:`closure`).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from ..paths import crt_dir

#: the old headers, now umbrellas of the split (their order: the order the pieces are included in)
UMBRELLAS = ("kernels.h", "kernels_mve.h", "kernels_dsp.h")

_DEFINES = (
    re.compile(r"^\s*#\s*define\s+(\w+)", re.M),
    re.compile(r"^(?:static|__attribute__|UTVM_\w+)\b[^;={]*?\b(?!__attribute__\b)(utvm_\w+)\s*\((?!\()", re.M),
    re.compile(r"^(?:typedef\b[^;]*?\b|\}\s*)(utvm_\w+)\s*;", re.M),
    re.compile(r"^static\s+const\b[^=(]*?\b(utvm_\w+)\s*\[", re.M),
)
#: names made by token pasting in a macro (utvm_dsp_conv_##name): a prefix
_PASTED_RE = re.compile(r"\b((?:utvm|UTVM)_\w+)##")
_INCLUDE_RE = re.compile(r'^#include "(?:utvm/kernels/)?([\w.]+\.h)"', re.M)
_NAME_RE = re.compile(r"\b(?:utvm|UTVM)_\w+\b")


def kernels_dir() -> Path:
    return crt_dir() / "include" / "utvm" / "kernels"


def _index() -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]], tuple[str, ...]]:
    return _index_at(kernels_dir())


@functools.cache
def _index_at(base: Path) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]], tuple[str, ...]]:
    """(name -> headers defining it, header -> headers it includes, headers in umbrella order)."""
    defined: dict[str, list[str]] = {}
    includes: dict[str, tuple[str, ...]] = {}
    for path in sorted(base.glob("*.h")):
        text = path.read_text()
        includes[path.name] = tuple(h for h in _INCLUDE_RE.findall(text) if (base / h).is_file())
        for regex in _DEFINES:
            for name in regex.findall(text):
                if not name.endswith("_H_"):
                    defined.setdefault(name, []).append(path.name)
        for prefix in _PASTED_RE.findall(text):
            defined.setdefault(prefix + "##", []).append(path.name)
    order: list[str] = []
    for umbrella in UMBRELLAS:
        for h in re.findall(r'^#include "(?:utvm/)?kernels/([\w.]+\.h)"', (base.parent / umbrella).read_text(), re.M):
            if h not in order:
                order.append(h)
    order += [h for h in sorted(includes) if h not in order]  # pieces no umbrella names yet
    return {k: tuple(dict.fromkeys(v)) for k, v in defined.items()}, includes, tuple(order)


def closure(headers: list[str] | tuple[str, ...]) -> set[str]:
    """``headers`` and every kernel header they include, transitively."""
    _, includes, _ = _index()
    seen: set[str] = set()
    todo = list(headers)
    while todo:
        h = todo.pop()
        if h not in seen:
            seen.add(h)
            todo.extend(includes.get(h, ()))
    return seen


def includes_for(source: str) -> list[str]:
    """The kernel headers (names in ``utvm/kernels/``) that define the names ``source`` uses,
    without those another of them already includes, in the umbrellas' order."""
    defined, includes, order = _index()
    needed: set[str] = set()
    prefixes = sorted((k[:-2] for k in defined if k.endswith("##")), key=len, reverse=True)
    for name in set(_NAME_RE.findall(source)):
        if name in defined:
            needed.update(defined[name])
        else:  # a name a macro makes: the header of the longest prefix
            for prefix in prefixes:
                if name.startswith(prefix):
                    needed.update(defined[prefix + "##"])
                    break
    inner = set().union(*(closure(includes[h]) for h in needed)) if needed else set()
    return [h for h in order if h in needed and h not in inner]
