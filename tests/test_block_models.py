"""MobileNetV3-Small/Large and EfficientNet-Lite0 style blocks (tests/models, made by
tests/models/make_models.py with Keras and TensorFlow's converter, seeded random weights),
float32 and int8, against TFLite Micro: on the host, and on the Cortex-M4 (mps2/an386) and
Cortex-M55 (mps3/an547) (slow). Issue 23: the hard-swish after a depthwise convolution run in
place (its input shifted into its output) was reported as an invalid memory plan."""

from __future__ import annotations

from pathlib import Path

import pytest

import op_check
from op_check import check_model

MODELS = sorted((Path(__file__).resolve().parent / "models").glob("*_blocks_*.tflite"))


def test_models_are_there() -> None:
    assert {p.stem.rsplit("_", 1)[1] for p in MODELS} == {"float32", "int8"} and len(MODELS) == 6
    assert all(p.stat().st_size < 1 << 20 for p in MODELS)


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_block_model_on_host(path: Path, tmp_path: Path) -> None:
    check_model(path, tmp_path)


@op_check.on_boards
@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_block_model_on_board(path: Path, tmp_path: Path, board: str) -> None:
    report = check_model(path, tmp_path, board)
    print(f"{path.stem} on {board}: {report.instructions} instructions per inference")


@pytest.mark.parametrize("path", [p for p in MODELS if "float32" in p.stem], ids=lambda p: p.stem)
def test_shifted_plan_is_valid(path: Path) -> None:
    """The plan with every depthwise convolution that can run in place shifted (plan_memory may
    keep the other one) checks clean: a hard-swish in place over the shifted output lives in that
    buffer after the convolution (was "... is still used at step N" on MobileNetV3)."""
    from utvm.importer import load_model
    from utvm.lower.lowering import lower_graph
    from utvm.plan.memory import _plan

    lowered = lower_graph(load_model(path), "tvmgen_m")
    plan = _plan(lowered, False, (), (), True)
    shifted = [t for t in plan.tenants if t.how == "shifted"]
    after = [t for t in plan.tenants if t.how == "inplace" and any(t.target == s.target for s in shifted)]
    assert shifted and (after or "mnv3" not in path.stem)  # EfficientNet-Lite fuses its ReLU6
    assert plan.check() == []
