"""Tuning logs that pick a Helium kernel plan the default would not (shared by the Helium and
in-place depthwise tests)."""

from __future__ import annotations

from pathlib import Path

from utvm.ops.depthwise_conv2d import helium_plans


def tiny_plan_log(tmp_path: Path, path: Path) -> Path:
    """A tuning log giving the model's depthwise layers utvm_mve_dwt_s8 (plan "tiny": the tuner's
    pick on tiny maps, not the default where another plan applies, for its flash), after checking
    that the compiler takes it from the log."""
    from op_check import tuning_log
    from utvm.compiler import CompileOptions, compile_model

    log = tuning_log(tmp_path / "tiny.json", path, "cortex-m55",
                     lambda g, op: {"variant": "helium", "plan": "tiny"} if op.kind == "depthwise_conv2d" else None)
    result = compile_model(path, tmp_path / "tiny_mlf", CompileOptions(cpu="cortex-m55", tuning_log=log))
    for call in result.lowered.calls:
        op = result.graph.ops[call.op_index]
        if op.kind == "depthwise_conv2d":
            assert call.variant == "helium" and result.configs[call.op_index]["plan"] == "tiny"
            assert "tiny" in helium_plans(result.graph, op)
    return log
