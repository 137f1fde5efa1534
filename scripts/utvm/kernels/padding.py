"""TFLite's window padding (SAME, VALID) in rows and columns, as the operators' importers
read it."""

from __future__ import annotations


def same_padding(in_size: int, k: int, stride: int, dilation: int) -> tuple[int, int, int]:
    """TFLite SAME arithmetic: output size and the padding before and after."""
    eff = (k - 1) * dilation + 1
    out = (in_size + stride - 1) // stride
    total = max((out - 1) * stride + eff - in_size, 0)
    return out, total // 2, total - total // 2


def padding(kind_code: int, h: int, w: int, kh: int, kw: int, sh: int, sw: int,
            dh: int, dw: int) -> tuple[int, int, int, int]:
    """(top, left, bottom, right) of TFLite's Padding enum (0 SAME, 1 VALID). Strides or
    dilations below 1 give no padding: the operator's check (``check_window``) refuses them."""
    if kind_code == 0 and min(sh, sw, dh, dw) >= 1:  # SAME
        _, top, bottom = same_padding(h, kh, sh, dh)
        _, left, right = same_padding(w, kw, sw, dw)
        return top, left, bottom, right
    return 0, 0, 0, 0
