"""The TIR pass pipeline utvm compiles kernels with, registered with TVM as ``"utvm"``.

It is TVM 0.27's default CPU lowering without the GPU-only passes and without
``NarrowDataType``: our kernels already index in int32, and that pass's bound analysis
rejects the shared ``Let`` bindings of the fixed-point requantization expressions; after
``MakePackedAPI``, :func:`dltensor_args` (the AOT executor passes DLTensor pointers only).
"""

from __future__ import annotations

import tvm
import tvm_ffi
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
        dltensor_args,
    ]


#: TVM FFI's type index of a managed Tensor object (kTVMFFITensor), whose DLTensor lies
#: TENSOR_HEADER bytes after the object's address
TENSOR_INDEX = 70
TENSOR_HEADER = 24
#: tvm_struct_get's field of a TVMFFIAny: the value's pointer (kTVMFFIAnyUnionValue)
ANY_VALUE = 15


def _dltensor_pointer(value: tvm.ir.PrimExpr) -> tvm.ir.PrimExpr | None:
    """The DLTensor-pointer branch of MakePackedAPI's unpacking of a tensor argument,
    ``if_then_else(type_index == 70, handle_add_byte_offset(v_ptr, 24), v_ptr)``; None for anything else."""
    if not (isinstance(value, tvm.ir.Call) and value.op.name == "prim.if_then_else"):
        return None
    cond, managed, pointer = value.args
    if not (isinstance(cond, tirx.EQ) and isinstance(cond.b, tirx.IntImm) and cond.b.value == TENSOR_INDEX):
        return None
    if not (isinstance(pointer, tvm.ir.Call) and pointer.op.name == "tirx.tvm_struct_get"
            and int(pointer.args[2]) == ANY_VALUE):
        return None
    if not (isinstance(managed, tvm.ir.Call) and managed.op.name == "tirx.handle_add_byte_offset"
            and int(managed.args[1]) == TENSOR_HEADER and tvm_ffi.structural_equal(managed.args[0], pointer)):
        return None
    return pointer


@tirx.transform.prim_func_pass(opt_level=0, name="utvm.DLTensorArgs")
def dltensor_args(func: tirx.PrimFunc, _mod: tvm.ir.IRModule, _ctx: tvm.transform.PassContext) -> tirx.PrimFunc:
    """Tensor arguments taken as DLTensor pointers: the AOT executor (``emit/aot.py``, utvm_bind),
    the only caller of the kernels, passes every tensor as kTVMFFIDLTensorPtr, so the test for a
    managed Tensor object (a compare and a conditional add per argument, on every call) goes.
    The unpacking is the top-level ``Bind`` of each ``<arg>_handle`` in the packed function."""
    body = func.body
    if int(func.attrs.get("calling_conv", 0)) != 1 or not isinstance(body, tirx.SeqStmt):  # kCPackedFunc
        return func
    seq = []
    for stmt in body.seq:
        pointer = _dltensor_pointer(stmt.value) if isinstance(stmt, tirx.Bind) else None
        seq.append(stmt if pointer is None else tirx.Bind(stmt.var, pointer, stmt.span))
    return func.with_body(tirx.SeqStmt(seq, body.span))


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
