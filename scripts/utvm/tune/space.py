"""The tuning space of one operator: every kernel variant that applies, crossed with its knobs."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from ..ir import Graph, Operator
from ..kernels.target import Target
from ..ops import get

Config = dict[str, Any]


def space(graph: Graph, op: Operator, target: Target) -> list[Config]:
    """Configurations in order, the default (what an untuned compile does) first: the variants in
    their order of preference, each knob's default value first."""
    opdef = get(op.kind)
    if opdef is None:
        return []
    out: list[Config] = []
    for variant in opdef.variants:
        if variant.build(graph, op, target) is None:
            continue
        knobs = variant.knobs(graph, op, target) if variant.knobs else {}
        names = list(knobs)
        for values in itertools.product(*(knobs[n] for n in names)):
            out.append({"variant": variant.name, **dict(zip(names, values))})
    return out


def sample(configs: list[Config], trials: int, seed: int) -> list[Config]:
    """All configurations when there are at most ``trials``, else the default and a seeded random
    choice of the others (the same seed gives the same choice)."""
    if len(configs) <= trials:
        return list(configs)
    rng = np.random.default_rng(seed)
    picked = sorted(rng.choice(np.arange(1, len(configs)), size=max(trials - 1, 0), replace=False).tolist())
    return [configs[0], *(configs[i] for i in picked)]
