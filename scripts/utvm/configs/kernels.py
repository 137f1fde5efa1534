"""The kernel configuration of each operator of a compile: one explicit map, passed to the
lowering, never written into the graph.

An operator without an entry takes its default (the rules of its variants and knobs). Entries
come from a tuning log (or the tuner's candidate) and from the compile's rounds (the planner's
choices: int8 weights for --max-flash, less scratch, rows in order); each says where it came from.
A round that is not kept simply drops the map it made.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

#: a kernel configuration: {"variant": name, <knob>: value, ...}, as a tuning log records it
Config = dict[str, Any]

#: where an operator without an entry gets its configuration
DEFAULT = "default"


@dataclass(frozen=True)
class KernelConfig:
    config: Config
    #: "tuning log", "tuner", or the name of the compile round that chose it
    source: str


@dataclass(frozen=True)
class KernelConfigs(Mapping[int, Config]):
    """Operator index (in the graph that is lowered) -> its configuration, with where it came from."""

    entries: Mapping[int, KernelConfig] = field(default_factory=dict)

    @classmethod
    def of(cls, configs: Mapping[int, Config], source: str) -> KernelConfigs:
        return cls().with_configs(configs, source)

    def __getitem__(self, index: int) -> Config:
        return self.entries[index].config

    def __iter__(self) -> Iterator[int]:
        return iter(sorted(self.entries))

    def __len__(self) -> int:
        return len(self.entries)

    def source(self, index: int) -> str:
        entry = self.entries.get(index)
        return entry.source if entry is not None else DEFAULT

    def with_configs(self, changes: Mapping[int, Config], source: str) -> KernelConfigs:
        """A new map: this one with ``changes`` (operator index -> configuration; an empty one is
        the default) from ``source``, over what this map has for those operators."""
        entries = dict(self.entries)
        for index, config in changes.items():
            if config:
                entries[index] = KernelConfig(config, source)
            else:
                entries.pop(index, None)
        return KernelConfigs(entries)
