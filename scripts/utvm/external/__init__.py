"""External modules: libraries that take over operators from TVM (``--offload NAME``).

The registry maps the names users give to ``--offload`` to module classes. A module is
registered with :func:`register`; utvm's own are ``plain-c`` (lib/ext/plain_c) and
``cmsis-nn``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import UtvmError
from ..lower.offload import ExternalArg, ExternalKernel, ExternalModule, LibraryFiles, OffloadOptions, Pattern
from .cmsis_nn import CmsisNN
from .plain_c import PlainC

_REGISTRY: dict[str, type[ExternalModule]] = {}


def register(cls: type[ExternalModule]) -> type[ExternalModule]:
    """Make ``cls`` available as ``--offload <cls.name>`` (usable as a class decorator)."""
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no name")
    _REGISTRY[cls.name] = cls
    return cls


def module_names() -> list[str]:
    return sorted(_REGISTRY)


def create_modules(names: Sequence[str], options: OffloadOptions) -> list[ExternalModule]:
    """The modules named, in the order given (earlier ones claim operators first)."""
    modules: list[ExternalModule] = []
    for name in dict.fromkeys(names):
        cls = _REGISTRY.get(name)
        if cls is None:
            raise UtvmError(f"unknown --offload module '{name}' (available: {', '.join(module_names())})")
        modules.append(cls(options))
    return modules


def _register_builtin() -> None:
    register(CmsisNN)
    register(PlainC)


_register_builtin()

__all__ = ["ExternalArg", "ExternalKernel", "ExternalModule", "LibraryFiles", "OffloadOptions", "Pattern",
           "create_modules", "module_names", "register"]
