"""The TIR pass pipeline utvm compiles kernels with, registered with TVM as ``"utvm"``.

It is TVM 0.27's default CPU lowering without the GPU-only passes and without
``NarrowDataType``: our kernels already index in int32, and that pass's bound analysis
rejects the shared ``Let`` bindings of the fixed-point requantization expressions.
"""

from __future__ import annotations

import tvm
from tvm import s_tir, tirx
from tvm.tirx import compilation_pipeline

PIPELINE_NAME = "utvm"


def _lowering_passes() -> list[tvm.transform.Pass]:
    return [
        s_tir.transform.CanonicalizeLoop(),
        s_tir.transform.LowerInitBlock(),
        s_tir.transform.PlanAndUpdateBufferAllocationLocation(),
        s_tir.transform.ConvertBlocksToOpaque(),
        s_tir.transform.CompactBufferAllocation(),
        s_tir.transform.LowerMatchBuffer(),
        s_tir.transform.StmtSimplify(),
        s_tir.transform.LowerOpaqueBlock(),
        tirx.transform.FlattenBuffer(),
        s_tir.transform.LoopPartition(),
        tirx.transform.VectorizeLoop(True),
        tirx.transform.StorageRewrite(),
        s_tir.transform.HoistIfThenElse(),
        tirx.transform.UnrollLoop(),
        s_tir.transform.RenormalizeSplitPattern(),
        tirx.transform.StmtSimplify(),
        tirx.transform.RemoveNoOp(),
        s_tir.transform.RewriteUnsafeSelect(),
        tirx.transform.CommonSubexprElim(),
        tirx.transform.VerifyMemory(),
        tirx.transform.AnnotateEntryFunc(),
        tirx.transform.SplitHostDevice(),
        tirx.transform.MakePackedAPI(),
    ]


def _factory():  # type: ignore[no-untyped-def]
    @tvm.transform.module_pass(opt_level=0)
    def _pipeline(mod: tvm.ir.IRModule, _ctx: tvm.transform.PassContext) -> tvm.ir.IRModule:
        return tvm.ir.transform.Sequential(_lowering_passes())(mod)

    def finalize_host() -> tvm.transform.Pass:
        return tvm.ir.transform.Sequential([tirx.transform.LowerTVMBuiltin(), tirx.transform.LowerIntrin()])

    def finalize_device() -> tvm.transform.Pass:
        return tvm.ir.transform.Sequential([tirx.transform.LowerIntrin()])

    return _pipeline, finalize_host, finalize_device


compilation_pipeline.register_tir_pipeline(PIPELINE_NAME, _factory)
