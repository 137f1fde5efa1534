"""A TVM kernel built for the host and called through ctypes, to check kernels against their
references without a whole model (shared by the kernel tests)."""

from __future__ import annotations

import ctypes
import subprocess
from pathlib import Path
from typing import Any

import numpy.typing as npt
import tvm
from tvm import te

ROOT = Path(__file__).resolve().parents[1]
CRT = ROOT / "lib" / "crt"


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class TVMFFIAny(ctypes.Structure):
    _fields_ = [("type_index", ctypes.c_int32), ("pad", ctypes.c_uint32), ("v", ctypes.c_uint64)]


_DL_CODES = {"i": 0, "u": 1, "f": 2}


def kernel_c_source(tensors: list[te.Tensor], name: str) -> str:
    """TVM C source of a PrimFunc made from TE tensors (inputs first, output last)."""
    func = te.create_prim_func(tensors).with_attr("global_symbol", name)
    with tvm.transform.PassContext(config={"tirx.disable_assert": True}):
        lib = tvm.compile(tvm.IRModule({name: func}), target="c")
    source = str(lib.mod.inspect_source())
    if "utvm_" in source:  # helpers of utvm/kernels.h, as the compiler includes them
        source = source.replace("#include <math.h>\n", '#include <math.h>\n#include "utvm/kernels.h"\n', 1)
    return source


class HostKernel:
    """A TVM-generated C kernel built into a shared library with the runtime backend."""

    def __init__(self, source: str, name: str, workdir: Path) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        src = workdir / f"{name}.c"
        src.write_text(source)
        so = workdir / f"{name}.so"
        subprocess.run(
            [
                "gcc",
                "-shared",
                "-fPIC",
                "-O2",
                "-std=gnu99",
                f"-I{CRT / 'include'}",
                str(src),
                str(CRT / "src" / "backend.c"),
                str(CRT / "ports" / "host" / "platform_host.c"),
                "-o",
                str(so),
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        self.lib = ctypes.CDLL(str(so))
        self.fn = getattr(self.lib, f"__tvm_ffi_{name}")
        self.fn.restype = ctypes.c_int32
        self.fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p]
        self.scratch = ctypes.create_string_buffer(1 << 20)
        self.lib.utvm_scratch_set.argtypes = [ctypes.c_void_p, ctypes.c_size_t]

    def __call__(self, *arrays: npt.NDArray[Any]) -> None:
        """Call with numpy arrays (C-contiguous; the output array is written in place)."""
        keep: list[Any] = []
        args = (TVMFFIAny * len(arrays))()
        for k, arr in enumerate(arrays):
            assert arr.flags.c_contiguous
            shape = (ctypes.c_int64 * arr.ndim)(*arr.shape)
            dt = DLDataType(_DL_CODES[arr.dtype.kind], arr.dtype.itemsize * 8, 1)
            t = DLTensor(arr.ctypes.data, DLDevice(1, 0), arr.ndim, dt, shape, None, 0)
            keep += [shape, t]
            args[k] = TVMFFIAny(7, 0, ctypes.addressof(t))
        self.lib.utvm_scratch_set(ctypes.addressof(self.scratch), len(self.scratch))
        rc = self.fn(None, ctypes.addressof(args), len(arrays), None)
        assert rc == 0, f"kernel returned {rc}"
