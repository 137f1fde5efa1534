"""Seeded random int8 DEPTHWISE_CONV_2D layers side by side, shared by the depthwise tests
(tests/test_depthwise.py: dsp_dwp and the multiplier variants; tests/test_depthwise_k.py: helium_k)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mac_cases import _out_size
from op_check import Cases, quant_params, side_by_side
from tflite_builder import ModelBuilder


class DwCases(Cases):
    """Depthwise layers side by side, one model input and output each."""

    def layer(self, seed: int, **fixed: object) -> None:
        """A random layer; ``fixed`` sets any of: shape (h, w, cin), mult, kernel, stride,
        dilation, same, batch, act, zy (output zero point), per_channel, last (a factor on the
        last channel's weight scale: channels of very different scales)."""

        def case(m: ModelBuilder) -> tuple[list[int], list[int]]:
            rng = np.random.default_rng(seed)
            p = f"dw{seed}_"
            kh, kw = fixed.get("kernel", (int(rng.integers(1, 6)), int(rng.integers(1, 6))))  # type: ignore[misc]
            sh, sw = fixed.get("stride", (int(rng.integers(1, 4)), int(rng.integers(1, 4))))  # type: ignore[misc]
            dilation = (1, int(rng.integers(2, 4))) if rng.random() < 0.5 else (int(rng.integers(2, 4)), 1)
            dh, dw = fixed.get("dilation", dilation if rng.random() < 0.15 else (1, 1))  # type: ignore[misc]
            same = bool(fixed.get("same", rng.random() < 0.6))
            h0, w0 = (kh - 1) * dh + 1, (kw - 1) * dw + 1
            h, w, cin = fixed.get("shape", (int(rng.integers(h0, h0 + 10)), int(rng.integers(w0, w0 + 12)),  # type: ignore[misc]
                                             int(rng.integers(1, 14))))
            mult = int(fixed.get("mult", int(rng.integers(1, 5)) if rng.random() < 0.3 else 1))  # type: ignore[call-overload]
            batch = int(fixed.get("batch", 2 if rng.random() < 0.1 else 1))  # type: ignore[call-overload]
            act = str(fixed.get("act", rng.choice(["NONE", "RELU", "RELU6", "RELU_N1_TO_1"], p=[0.4, 0.35, 0.2, 0.05])))
            cout = cin * mult
            sx, zx = quant_params(rng, -3.0, 3.0)
            x = m.add_tensor(p + "x", (batch, h, w, cin), "int8", scale=sx, zero_point=zx)
            per_channel = bool(fixed.get("per_channel", rng.random() < 0.8))
            ws = rng.uniform(0.004, 0.03, cout if per_channel else 1)
            if rng.random() < 0.1:
                ws = ws * 40  # effective scales near or above 1: left shifts, shift 0
            ws[-1] *= float(fixed.get("last", 1.0))  # type: ignore[arg-type]
            wdata = rng.integers(-127, 128, (1, kh, kw, cout))
            if cout > 1 and rng.random() < 0.2:
                wdata[..., 0] = 0  # a pruned channel
            wt = m.add_tensor(p + "w", (1, kh, kw, cout), "int8", wdata, scale=ws, zero_point=[0] * len(ws),
                              quantized_dimension=3)
            ins = [x, wt]
            if rng.random() < 0.85:
                sb = (sx * np.broadcast_to(ws, (cout,))).astype(np.float32)
                ins.append(m.add_tensor(p + "b", (cout,), "int32", rng.integers(-20000, 20000, cout), scale=sb,
                                        zero_point=[0] * cout))
            oh, ow = _out_size(h, kh, sh, dh, same), _out_size(w, kw, sw, dw, same)
            spread = np.sqrt(kh * kw) * sx * 127 * float(np.mean(ws)) * 127 * 0.5
            sy, zy = quant_params(rng, -spread, spread)
            zy = int(fixed.get("zy", zy))  # type: ignore[call-overload]
            y = m.add_tensor(p + "y", (batch, oh, ow, cout), "int8", scale=sy, zero_point=zy)
            m.add_operator("DEPTHWISE_CONV_2D", ins, [y], {
                "padding": "SAME" if same else "VALID", "stride_w": sw, "stride_h": sh, "dilation_w_factor": dw,
                "dilation_h_factor": dh, "depth_multiplier": mult, "fused_activation_function": act})
            self.inputs.append(rng.integers(-128, 128, (batch, h, w, cin)).astype(np.int8))
            return [x], [y]

        self.cases.append(case)


def cases_model(folder: Path, cases: DwCases, name: str) -> tuple[Path, DwCases]:
    """``cases`` side by side as one model ``<name>.tflite`` in ``folder`` (a module fixture's
    directory), with the cases that built it."""
    path = folder / f"{name}.tflite"
    path.write_bytes(side_by_side(cases.cases))
    return path, cases
