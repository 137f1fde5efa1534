"""The static memory plan: live tensors never share bytes, everything fits the pool."""

from __future__ import annotations

from pathlib import Path

import numpy as np
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


# -- shared buffers: concatenation slots, slices read in place, in-place elementwise operators ----

def _movement_model(path: Path) -> Path:
    """input [1,6,6,4] -> two PADs and a TRANSPOSE -> CONCATENATION along channels (a strided
    slot each) -> PAD -> SPLIT along H (outermost non-1 axis: views) -> two outputs; and a
    CONCATENATION along H of two PADs (contiguous slots) -> RELU -> PAD -> output."""
    from tflite_builder import ModelBuilder

    m = ModelBuilder()
    q = {"scale": 0.05, "zero_point": -3}
    x = m.add_tensor("x", [1, 6, 6, 4], "int8", **q)

    def pads(values: list[list[int]]) -> int:
        return m.add_tensor(f"p{len(m._tensors)}", [4, 2], "int32", data=np.array(values, np.int32))

    def tensor(name: str, shape: list[int]) -> int:
        return m.add_tensor(name, shape, "int8", **q)

    a, b, c = tensor("a", [1, 6, 6, 4]), tensor("b", [1, 6, 6, 2]), tensor("c", [1, 6, 6, 4])
    xs = tensor("xs", [1, 6, 6, 2])
    m.add_operator("PAD", [x, pads([[0, 0], [0, 0], [0, 0], [0, 0]])], [a])
    m.add_operator("SLICE", [x, m.add_tensor("sb", [4], "int32", data=np.array([0, 0, 0, 1], np.int32)),
                             m.add_tensor("ss", [4], "int32", data=np.array([1, 6, 6, 2], np.int32))], [xs])
    m.add_operator("PAD", [xs, pads([[0, 0], [0, 0], [0, 0], [0, 0]])], [b])
    m.add_operator("TRANSPOSE", [x, m.add_tensor("perm", [4], "int32", data=np.array([0, 2, 1, 3], np.int32))], [c])
    cat = tensor("cat", [1, 6, 6, 10])
    m.add_operator("CONCATENATION", [a, b, c], [cat], {"axis": 3})
    padded = tensor("padded", [1, 8, 6, 10])
    m.add_operator("PAD", [cat, pads([[0, 0], [1, 1], [0, 0], [0, 0]])], [padded])
    top, bottom = tensor("top", [1, 4, 6, 10]), tensor("bottom", [1, 4, 6, 10])
    m.add_operator("SPLIT", [m.add_tensor("axis", [], "int32", data=np.array(1, np.int32)), padded], [top, bottom],
                   {"num_splits": 2})
    o1, o2 = tensor("o1", [1, 4, 6, 10]), tensor("o2", [1, 4, 6, 10])
    m.add_operator("PAD", [top, pads([[0, 0], [0, 0], [0, 0], [0, 0]])], [o1])
    m.add_operator("PAD", [bottom, pads([[0, 0], [0, 0], [0, 0], [0, 0]])], [o2])
    h1, h2 = tensor("h1", [1, 7, 6, 4]), tensor("h2", [1, 7, 6, 4])
    m.add_operator("PAD", [x, pads([[0, 0], [1, 0], [0, 0], [0, 0]])], [h1])
    m.add_operator("PAD", [x, pads([[0, 0], [0, 1], [0, 0], [0, 0]])], [h2])
    hcat, relu = tensor("hcat", [1, 14, 6, 4]), tensor("relu", [1, 14, 6, 4])
    m.add_operator("CONCATENATION", [h1, h2], [hcat], {"axis": 1})
    m.add_operator("RELU", [hcat], [relu])
    o3 = tensor("o3", [1, 14, 7, 4])
    m.add_operator("PAD", [relu, pads([[0, 0], [0, 0], [0, 1], [0, 0]])], [o3])
    path.write_bytes(m.finish([x], [o1, o2, o3]))
    return path


def _relu_inplace(monkeypatch: pytest.MonkeyPatch) -> None:
    """Declare RELU elementwise-in-place (its kernel reads x[i] then writes y[i])."""
    import dataclasses

    from utvm.ops import all_ops

    monkeypatch.setitem(all_ops(), "relu", dataclasses.replace(all_ops()["relu"], inplace=True))


def test_slots_views_and_inplace_shrink_the_pool_and_stay_exact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from utvm.lower import lowering
    from utvm.run.runner import run_model

    model = _movement_model(tmp_path / "movement.tflite")
    plain = tmp_path / "plain"
    plain.mkdir()
    with monkeypatch.context() as mp:  # no sharing at all: every tensor in a buffer of its own
        mp.setattr(lowering, "plan_slots", lambda graph: {})
        mp.setattr(lowering, "read_view", lambda graph, index, roots=None: None)
        before = run_model(model, "host", workdir=plain)
    _relu_inplace(monkeypatch)
    shared = tmp_path / "shared"
    shared.mkdir()
    after = run_model(model, "host", workdir=shared)
    assert before.outputs_match_reference and after.outputs_match_reference
    assert after.max_abs_diff == 0
    result = compile_model(model, tmp_path / "mlf", CompileOptions())
    plan = result.plan
    assert plan.check() == []
    how = {t.name: t.how for t in plan.tenants}
    assert how["a"] == how["b"] == how["c"] == "slot"          # strided slots of 'cat'
    assert how["h1"] == how["h2"] == "slot"                      # contiguous slots of 'hcat'
    assert how["top"] == how["bottom"] == "view"                 # SPLIT along H: no kernel
    assert how["relu"] == "inplace"
    assert {t.buffer for t in plan.tenants if t.name in ("a", "b", "c")} == {"cat"}
    kinds = [c.symbol.split("_", 2)[-1] for c in result.lowered.calls]
    assert sum(k.startswith("strided_slice") for k in kinds) == 1, kinds  # the SLICE; the SPLIT has none
    assert not any(k.startswith("concatenation") for k in kinds), kinds
    assert after.workspace_bytes < before.workspace_bytes
    meta = result.metadata["modules"]["movement"]["memory_sharing"]
    assert {(t["name"], t["how"]) for t in meta} >= {("a", "slot"), ("top", "view"), ("relu", "inplace")}


def test_concat_of_model_inputs_copies_into_slots(tmp_path: Path) -> None:
    """Model inputs cannot be written into a slot by anyone: the concatenation copies them (one
    small kernel per input) and the result is still exact."""
    from tflite_builder import ModelBuilder
    from utvm.run.runner import run_model

    m = ModelBuilder()
    a = m.add_tensor("a", [2, 3, 5], "float32")
    b = m.add_tensor("b", [2, 3, 1], "float32")
    y = m.add_tensor("y", [2, 3, 6], "float32")
    m.add_operator("CONCATENATION", [a, b], [y], {"axis": -1})
    (tmp_path / "cat.tflite").write_bytes(m.finish([a, b], [y]))
    report = run_model(tmp_path / "cat.tflite", "host", workdir=tmp_path)
    assert report.outputs_match_reference and report.workspace_bytes == 0


def test_check_reports_an_inplace_output_over_data_still_needed() -> None:
    from utvm.plan.sharing import Tenant

    # 'r' is written over 'p' at step 1, but 'p' is read again at step 3
    r = Tenant("r", "p", 0, "inplace", "p", (1, 16), 1, None, 1, 2, 1)
    plan = MemoryPlan(16, [Buffer("p", 16, 0, 3, offset=0)], tenants=[r], buffer_bytes={"p": 16},
                      lifetimes={"p": (0, 3), "r": (1, 2)})
    assert any("still used at step 3" in p for p in plan.check())
    plan.lifetimes["p"] = (0, 1)
    assert plan.check() == []


def test_check_reports_overlapping_slots_and_slots_outside_their_buffer() -> None:
    from utvm.plan.sharing import Tenant

    a = Tenant("a", "cat", 0, "slot", "cat", (2, 3), 1, (6, 1), 0, 2)
    b = Tenant("b", "cat", 2, "slot", "cat", (2, 3), 1, (6, 1), 1, 2)   # columns 2..4 overlap a's 0..2
    c = Tenant("c", "cat", 3, "slot", "cat", (2, 3), 1, (6, 1), 1, 2)   # columns 3..5: fine
    buffers = [Buffer("cat", 16, 0, 3, offset=0)]
    plan = MemoryPlan(16, buffers, tenants=[a, b], buffer_bytes={"cat": 12}, lifetimes={})
    assert any("share bytes" in p for p in plan.check())
    plan.tenants = [a, c]
    assert plan.check() == []
    plan.tenants = [a, Tenant("d", "cat", 8, "slot", "cat", (2, 3), 1, (6, 1), 0, 1)]
    assert any("outside" in p for p in plan.check())
