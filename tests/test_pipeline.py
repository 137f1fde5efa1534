"""The TIR pipeline (lower/pipeline.py): kernels take their tensor arguments as DLTensor pointers,
the only kind the AOT executor passes (no test for a managed Tensor object per argument)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import tvm
from tvm import te, tirx

from utvm.compiler import CompileOptions, compile_model
from utvm.lower.lowering import finish_source
from utvm.lower.pipeline import PIPELINE_NAME, TENSOR_INDEX, _dltensor_pointer


def _source(n_args: int) -> str:
    """Our pipeline's C code of a kernel adding n_args - 1 int8 vectors."""
    ins = [te.placeholder((8,), "int8", name=f"x{k}") for k in range(n_args - 1)]
    y = te.compute((8,), lambda i: sum(x[i] for x in ins[1:]) + ins[0][i], name="y")  # type: ignore[misc]
    func = te.create_prim_func([*ins, y]).with_attr("global_symbol", "k")
    with tvm.transform.PassContext(opt_level=3, config={"tirx.disable_assert": True}):
        lib = tvm.compile(tvm.IRModule({"k": func}), target=tvm.target.Target("c"), tir_pipeline=PIPELINE_NAME)
    return finish_source(lib.mod.inspect_source())


@pytest.mark.parametrize("n_args", [2, 3, 5])
def test_tensor_arguments_are_dltensor_pointers(n_args: int) -> None:
    src = _source(n_args)
    body = src[src.index("int32_t __tvm_ffi_k(void* self_handle"):]
    assert "type_index" not in body and f"== {TENSOR_INDEX}" not in body, body
    # every argument read once, straight from the TVMFFIAny's pointer
    assert sorted(re.findall(r"\(\(TVMFFIAny\*\)args\)\[(\d+)\]\.v_ptr\)", body)) == [str(k) for k in range(n_args)]


def _select(cond: tvm.ir.PrimExpr, then: tvm.ir.PrimExpr, other: tvm.ir.PrimExpr) -> tvm.ir.Call:
    return tvm.ir.Call("prim.if_then_else", [cond, then, other], ret_ty="handle")


def test_other_selects_stay() -> None:
    """Only MakePackedAPI's exact unpacking is rewritten."""
    args = tirx.Var("args", "handle")
    index = tirx.Var("t", "int32")
    pointer = tirx.tvm_struct_get(args, 0, 15, "handle")
    managed = tirx.handle_add_byte_offset(pointer, 24)
    assert _dltensor_pointer(_select(index == TENSOR_INDEX, managed, pointer)).same_as(pointer)
    assert _dltensor_pointer(_select(index == TENSOR_INDEX + 1, managed, pointer)) is None
    assert _dltensor_pointer(_select(index == TENSOR_INDEX, tirx.handle_add_byte_offset(pointer, 16), pointer)) is None
    other = tirx.tvm_struct_get(args, 1, 15, "handle")
    assert _dltensor_pointer(_select(index == TENSOR_INDEX, managed, other)) is None


def test_model_kernels_read_dltensor_pointers(models_dir: Path, tmp_path: Path) -> None:
    path = models_dir / "corpus" / "squeeze_excite_int8.tflite"
    if not path.is_file():
        pytest.skip(f"{path} is missing")
    src = compile_model(path, tmp_path / "mlf", CompileOptions(cpu="cortex-m4")).lowered.c_source
    assert src.count("__tvm_ffi_") >= 4 and "_type_index" not in src and "condval" not in src
