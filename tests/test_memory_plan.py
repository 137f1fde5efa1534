"""The static memory plan: live tensors never share bytes, everything fits the pool."""

from __future__ import annotations

from pathlib import Path

import pytest

from utvm.compiler import CompileOptions, compile_model
from utvm.plan.memory import Buffer, MemoryPlan, _greedy_by_size


@pytest.mark.parametrize("io_in_pool", [False, True])
@pytest.mark.parametrize("name", ["kws_ref_model", "pretrainedResnet_quant"])
def test_plan_has_no_overlap_and_fits(models_dir: Path, tmp_path: Path, name: str, io_in_pool: bool) -> None:
    result = compile_model(models_dir / f"{name}.tflite", tmp_path / "mlf", CompileOptions(io_in_pool=io_in_pool))
    plan = result.plan
    assert plan.check() == []
    for i, a in enumerate(plan.buffers):
        assert 0 <= a.offset and a.offset + a.size <= plan.pool_size
        for b in plan.buffers[i + 1:]:
            if a.first <= b.last and b.first <= a.last:
                assert a.offset + a.size <= b.offset or b.offset + b.size <= a.offset, (a, b)
    # every non-I/O intermediate tensor a kernel touches is in the plan
    planned = {b.name for b in plan.buffers}
    kinds = {b.kind for b in plan.buffers}
    assert ("input" in kinds) == io_in_pool
    assert planned
    # tensors that are never live together do share bytes: the pool is smaller than their sum
    assert plan.pool_size < sum(b.size for b in plan.buffers)


def test_check_reports_overlap() -> None:
    a = Buffer("a", 32, 0, 2, offset=0)
    b = Buffer("b", 32, 1, 3, offset=16)
    plan = MemoryPlan(64, [a, b])
    assert any("overlap" in p for p in plan.check())


def test_greedy_reuses_dead_space() -> None:
    bufs = [Buffer("x", 112, 0, 1), Buffer("y", 112, 1, 2), Buffer("z", 112, 2, 3)]
    size = _greedy_by_size(bufs)
    # x and z are never live together: they share; y sits beside both
    assert size == 224
    assert bufs[0].offset == bufs[2].offset
