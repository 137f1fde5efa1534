"""C identifiers for a model's tensors: unique, valid, derived from the graph's names."""

from __future__ import annotations

import re
from collections.abc import Callable


def c_field_names(names: list[str]) -> dict[str, str]:
    """Unique C identifiers for the model's input and output tensors."""
    return unique_idents(names, lambda n: re.sub(r"[^0-9A-Za-z_]", "_", n.split(":")[0]).strip("_").lower(), "t_")


def unique_idents(names: list[str], base_of: Callable[[str], str], digit_prefix: str) -> dict[str, str]:
    """A C identifier per name: ``base_of(name)`` (``digit_prefix`` before a leading digit),
    made unique with _2, _3, ..."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for name in names:
        base = base_of(name) or "tensor"
        if base[0].isdigit():
            base = digit_prefix + base
        ident, n = base, 1
        while ident in used:
            n += 1
            ident = f"{base}_{n}"
        used.add(ident)
        out[name] = ident
    return out
