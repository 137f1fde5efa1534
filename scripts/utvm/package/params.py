"""parameters/<name>.params: the model's constants in TVM's parameter-dictionary format.

The layout (little endian) is the one TVM's SaveParams / load_param_dict use, in TVM 0.18 as in
0.27: the list magic, a reserved word, the names (count, then length and bytes each), and the
arrays (count, then each as TVM serialises an NDArray: its magic, a reserved word, the device
(CPU, 0), ndim, the DLPack type (code, bits, lanes), the shape, the byte count and the bytes).
"""

from __future__ import annotations

import struct

import numpy as np

LIST_MAGIC = 0xF7E58D4F05049CB7
ARRAY_MAGIC = 0xDD5E40F096B4A13F
#: numpy kind -> DLPack type code
_CODES = {"i": 0, "u": 1, "f": 2, "b": 1}
_CPU = 1


def _array(arr: np.ndarray) -> bytes:
    a = np.ascontiguousarray(arr)
    code = _CODES[a.dtype.kind]
    bits = 8 if a.dtype == np.bool_ else a.dtype.itemsize * 8
    data = a.astype(a.dtype.newbyteorder("<")).tobytes()
    head = struct.pack("<QQiiiBBH", ARRAY_MAGIC, 0, _CPU, 0, a.ndim, code, bits, 1)
    return head + struct.pack(f"<{a.ndim}q", *a.shape) + struct.pack("<q", len(data)) + data


def param_dict_bytes(params: dict[str, np.ndarray]) -> bytes:
    """The bytes of a parameter dictionary, names in the given order."""
    out = [struct.pack("<QQQ", LIST_MAGIC, 0, len(params))]
    for name in params:
        raw = name.encode()
        out.append(struct.pack("<Q", len(raw)) + raw)
    out.append(struct.pack("<Q", len(params)))
    out += [_array(a) for a in params.values()]
    return b"".join(out)
