"""Tiny int8 fully connected layers on DSP CPUs: straight-line code generated per layer.

A layer with few multiply-accumulates (the ``dsp_tiny`` variant of ``ops/fully_connected.py``)
spends more instructions on a general kernel's setup than on its products. Here everything is
known at compile time, so the layer becomes one naked assembly function emitted into the
model's C source (``KernelDef.source``), called with three pointers (output, input, stream):

- a batch row of K inputs is widened once into P registers of int16 pairs: per whole quad of
  four inputs (one LDR) the pairs (x0, x2), (x1, x3) (two SXTB16), the last one to three
  inputs read by LDRSB (x0 alone; (x0, x1) by PKHBT; (x0, x1) and x2);
- per output channel the stream holds 2 * (bias - zx * sum(w)), the P weight words in the
  pairs' order (doubled int16, so that the accumulator is twice TFLite's), the multiplier m and
  the constant c = 2**(e-1) + (zy - base) * 2**e (base: the lower clamp when there is one, else
  0); the words are read in order by LDM into whatever registers are free (ascending), several
  channels per LDM when registers allow;
- per output: one SMLAD per pair (the first one accumulates onto the bias), SMMLAR, ADD of the
  accumulator's sign, SSAT (or USAT and the clamp) with the channel's right shift e as an
  immediate, STRB: the requantization of ``kernels/dsp.py`` (derivation in kernels_dsp.h), exact
  under the same conditions (:func:`utvm.kernels.dsp.gemm_requant`).

On Helium (``helium_tiny``, :class:`TinyMve`) the channels go by groups of four: depths up to
MVE_LANES in the lanes of one accumulator vector (VLDRB.S32 of the four weights of an input, VMLA
by the input byte), deeper rows one VMLADAVA per channel of a predicated vector load of the row;
then one vector requantization per group (VQRDMULH, sign fix-up, VRSHL, zero point, saturation).

Without the DSP extension in Thumb-2 or MVE (host builds) the same function calls
utvm_dsp_tiny_fc of kernels_dsp.h (utvm_mve_tiny_fc of kernels_mve.h), plain C over the same
stream.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from .dsp import GemmRequant

#: registers the code may use besides r0 (output) and r2 (stream); r1 (input) too after the last
#: row is widened (r7 too: a naked function saves it like the others, frame pointer or not)
POOL = ("r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "r12", "lr")
#: at least this many registers for the words of a channel (accumulator, m, c and one weight)
MIN_FREE = 4
#: DSP layers of at most this many multiply-accumulates per batch row. The code is unrolled per
#: row and output (the shifts are immediates): about 4.5 bytes of code per product on the
#: Cortex-M4 (1,024 products of depth 8 would be 4.6 KB, for 280 instructions fewer than
#: dsp_gemm's), so only the layers where a general kernel's setup outweighs the products
MAX_MACS = 256
#: Helium layers: their code depends on the shape, zero point and clamp only (identical layers
#: share one function), so larger ones pay off
MVE_MAX_MACS = 1024


def pair_words(depth: int) -> int:
    """Input pairs (registers) of a row of ``depth`` inputs."""
    return 2 * (depth // 4) + (0, 1, 1, 2)[depth % 4]


def free_registers(depth: int, batch: int) -> int:
    """Registers left for the stream's words once a row's pairs are in registers."""
    return len(POOL) - pair_words(depth) + (1 if batch == 1 else 0)


#: the deepest rows (widened onto the stack when their pairs do not fit in registers)
MAX_DEPTH = 40


def resident(depth: int, batch: int) -> bool:
    """The row's pairs stay in registers, with enough left for a channel's words."""
    return free_registers(depth, batch) >= MIN_FREE


def applies(depth: int, units: int, batch: int) -> bool:
    """A small layer whose rows are short (in registers, or up to MAX_DEPTH on the stack)."""
    return depth * units <= MAX_MACS and (resident(depth, batch) or depth <= MAX_DEPTH)


def _pairs(row: np.ndarray) -> list[tuple[int, int]]:
    """The (low, high) int16 halves that a row's pair registers hold, by input index (-1: none)."""
    depth = row.size
    out = []
    for q in range(depth // 4):
        out += [(4 * q, 4 * q + 2), (4 * q + 1, 4 * q + 3)]
    t = 4 * (depth // 4)
    out += {0: [], 1: [(t, -1)], 2: [(t, t + 1)], 3: [(t, t + 1), (t + 2, -1)]}[depth % 4]
    return out


def stream(w: np.ndarray, rq: GemmRequant, zy: int, lo: int) -> np.ndarray:
    """The int32 stream of weights ``w`` (units x depth): per channel 2 * folded bias, the
    doubled weight pairs, m, c."""
    units, depth = w.shape
    base = lo if lo > -128 else 0
    words = []
    for o in range(units):
        pairs = [(2 * int(w[o, a]) if a >= 0 else 0, 2 * int(w[o, b]) if b >= 0 else 0)
                 for a, b in _pairs(w[o])]
        e = int(rq.rights[o])
        c = (1 << (e - 1)) + (zy - base) * (1 << e)
        words += [2 * int(rq.folded[o])] + [(lo16 & 0xFFFF) | ((hi16 & 0xFFFF) << 16) for lo16, hi16 in pairs]
        words += [int(rq.mults[o]), c]
    return np.array(words, np.int64).astype(np.uint32).view(np.int32) if words else np.zeros(0, np.int32)


@dataclass(frozen=True)
class TinyFc:
    """One layer: ``batch`` rows of ``depth`` inputs, ``units`` outputs each, right shifts
    ``rights`` per channel, activation clamp [lo, hi]."""

    batch: int
    depth: int
    units: int
    rights: tuple[int, ...]
    lo: int
    hi: int

    def _widen(self, regs: list[str], row: int, tmp: str) -> list[str]:
        """Load row ``row``'s inputs (r1 points at the first row) as pairs into ``regs`` (``tmp``: a
        free register)."""
        return self._widen_pairs(row, list(range(len(regs))), regs, tmp)

    def _clamp(self, v: str, e: int) -> list[str]:
        """v: the requantized value before the right shift e (the base subtracted): shift,
        clamp to [lo, hi], the base added back."""
        lo, hi = self.lo, self.hi
        if lo == -128:
            return [f"ssat {v}, #8, {v}, asr #{e}"] + ([] if hi == 127 else
                                                        [f"cmp {v}, #{hi}", "it gt", f"movgt {v}, #{hi}"])
        span = hi - lo
        bits = max(1, span.bit_length())
        code = [f"usat {v}, #{bits}, {v}, asr #{e}"]
        if span != (1 << bits) - 1:
            code += [f"cmp {v}, #{span}", "it gt", f"movgt {v}, #{span}"]
        if lo:
            code.append(f"add {v}, {v}, #{lo}" if lo > 0 else f"sub {v}, {v}, #{-lo}")
        return code

    def _bytes(self) -> bool:
        """The outputs clamped four at a time as bytes (see :meth:`_pack`); not here."""
        return False

    def _pack(self, pack: str, reg: str, o: int, at: int, temps: list[str]) -> list[str]:
        """Byte clamping: output o's value before the shift (the base lo subtracted) in ``reg``,
        saturated to [0, 255] into byte o % 4 of ``pack`` (USAT, BFI); after the fourth (or the
        row's last) output the bytes min(u, hi - lo) (USUB8, SEL) + lo (UADD8), stored at ``at``
        (the first output's offset; STR, or STRH / STRB for a row's last one to three)."""
        k = o % 4
        code = [f"usat {pack if k == 0 else reg}, #8, {reg}, asr #{self.rights[o]}"]
        if k:
            code.append(f"bfi {pack}, {reg}, #{8 * k}, #8")
        n = k + 1
        if n < 4 and o != self.units - 1:
            return code
        t, u = temps[:2]
        code += [f"mov {t}, #{(self.hi - self.lo) * 0x01010101}", f"usub8 {u}, {pack}, {t}", f"sel {pack}, {t}, {pack}",
                 f"mov {t}, #{(self.lo & 0xFF) * 0x01010101}", f"uadd8 {pack}, {pack}, {t}"]
        if n == 4:
            return code + [f"str {pack}, [r0, #{at}]"]
        if n == 1:
            return code + [f"strb {pack}, [r0, #{at}]"]
        code.append(f"strh {pack}, [r0, #{at}]")
        return code + ([f"lsr {pack}, {pack}, #16", f"strb {pack}, [r0, #{at + 2}]"] if n == 3 else [])

    def _row(self, row: int, pairs: list[str], free: list[str]) -> list[str]:
        """The outputs of one row: the stream's words by LDM into the free registers (with
        :meth:`_bytes` one of them the four outputs' bytes)."""
        p = len(pairs)
        words = [(o, i) for o in range(self.units) for i in range(p + 3)]  # i: 0 bias, 1..p pairs, p+1 m, p+2 c
        code: list[str] = []
        live: dict[str, str] = {}  # role -> register (acc, m, pack)
        if self._bytes():
            live["pack"] = free[-1]
        pos = 0
        while pos < len(words):
            regs = [r for r in free if r not in live.values()]
            chunk = words[pos: pos + len(regs)]
            regs = sorted(regs[: len(chunk)], key=_number)
            code.append(f"ldr {regs[0]}, [r2], #4" if len(regs) == 1 else f"ldm r2!, {{{', '.join(regs)}}}")
            for (o, i), reg in zip(chunk, regs, strict=True):
                if i == 0:
                    live["acc"] = reg
                elif i <= p:
                    acc = live["acc"]
                    code.append(f"smlad {acc}, {pairs[i - 1]}, {reg}, {acc}")
                elif i == p + 1:
                    live["m"] = reg
                else:
                    acc, m = live.pop("acc"), live.pop("m")
                    code += [f"smmlar {reg}, {acc}, {m}, {reg}", f"add {reg}, {reg}, {acc}, asr #31"]
                    if "pack" in live:
                        code += self._pack(live["pack"], reg, o, row * self.units + o - o % 4, [acc, m])
                        continue
                    code += self._clamp(reg, self.rights[o])
                    code.append(f"strb {reg}, [r0, #{row * self.units + o}]")
            pos += len(chunk)
        return code

    def _output(self, row: int, o: int, p: int, free: list[str]) -> list[str]:
        """Output o of a row whose p pairs are on the stack (at sp): per chunk the pairs by LDM
        from the stack and the weights by LDM from the stream, then m and c."""
        size = (len(free) - 1) // 2
        acc, xs, ws = free[0], free[1:1 + size], free[1 + size:1 + 2 * size]
        code = ["mov r3, sp"]
        for start in range(0, p, size):
            n = min(size, p - start)
            code += [_load("r3", xs[:n]), _load("r2", ([acc] if start == 0 else []) + ws[:n])]
            code += [f"smlad {acc}, {x}, {w}, {acc}" for x, w in zip(xs[:n], ws[:n], strict=True)]
        m, c = xs[0], xs[1]
        code += [_load("r2", [m, c]), f"smmlar {c}, {acc}, {m}, {c}", f"add {c}, {c}, {acc}, asr #31"]
        return code + self._clamp(c, self.rights[o]) + [f"strb {c}, [r0, #{row * self.units + o}]"]

    def _spill(self, row: int, regs: list[str]) -> list[str]:
        """Row ``row``'s pairs widened onto the stack (r3 at sp), at most len(regs) - 2 at a time."""
        code = ["mov r3, sp"]
        quads, rest = self.depth // 4, self.depth % 4
        groups = [[2 * q, 2 * q + 1] for q in range(quads)] + ([list(range(2 * quads, pair_words(self.depth)))]
                                                                 if rest else [])
        chunk: list[int] = []
        for group in [*groups, []]:
            if chunk and (not group or len(chunk) + len(group) > len(regs) - 2):
                code += self._widen_pairs(row, chunk, regs[:len(chunk)], regs[-1]) + [_store("r3", regs[:len(chunk)])]
                chunk = []
            chunk += group
        return code

    def _widen_pairs(self, row: int, indices: list[int], regs: list[str], tmp: str) -> list[str]:
        """The pairs ``indices`` (whole quads, or the last one to three inputs) into ``regs``."""
        base, code = row * self.depth, []
        quads = self.depth // 4
        for k in range(0, len(indices), 2):
            j = indices[k]
            if j < 2 * quads:
                even, odd = regs[k], regs[k + 1]
                code += [f"ldr {even}, [r1, #{base + 2 * j}]", f"sxtb16 {odd}, {even}, ror #8",
                         f"sxtb16 {even}, {even}"]
        if indices and indices[-1] >= 2 * quads:  # the last one to three inputs
            t, tail = base + 4 * quads, regs[indices.index(2 * quads):]
            if self.depth % 4 >= 2:
                code += [f"ldrsb {tail[0]}, [r1, #{t}]", f"ldrsb {tmp}, [r1, #{t + 1}]",
                         f"pkhbt {tail[0]}, {tail[0]}, {tmp}, lsl #16"]
            if self.depth % 4 in (1, 3):
                code.append(f"ldrsb {tail[-1]}, [r1, #{t + self.depth % 4 - 1}]")
        return code

    def assembly(self) -> list[str]:
        p = pair_words(self.depth)
        code = ["push {r4, r5, r6, r7, r8, r9, r10, r11, lr}"]
        end = ["pop {r4, r5, r6, r7, r8, r9, r10, r11, pc}"]
        size = 4 * self.units * (p + 3)
        stacked = not resident(self.depth, self.batch)
        if stacked:
            frame = -(-4 * p // 8) * 8
            code.append(f"sub sp, sp, #{frame}")
            end.insert(0, f"add sp, sp, #{frame}")
        for row in range(self.batch):
            last = row == self.batch - 1
            code += _rewind(size) if row else []
            if stacked:
                regs = [r for r in POOL if r != "r3"]
                free = sorted(regs + (["r1"] if last else []), key=_number)
                code += self._spill(row, regs)
                for o in range(self.units):
                    code += self._output(row, o, p, free)
                continue
            pairs = sorted(POOL[:p], key=_number)
            free = sorted([r for r in POOL if r not in pairs] + (["r1"] if last else []), key=_number)
            code += self._widen(pairs, row, free[-1]) + self._row(row, pairs, free)
        return code + end


def _load(base: str, regs: list[str]) -> str:
    return f"ldr {regs[0]}, [{base}], #4" if len(regs) == 1 else f"ldm {base}!, {{{', '.join(regs)}}}"


def _store(base: str, regs: list[str]) -> str:
    return f"str {regs[0]}, [{base}], #4" if len(regs) == 1 else f"stm {base}!, {{{', '.join(regs)}}}"


def _rewind(size: int) -> list[str]:
    """r2 back to the stream's start."""
    if size < 4096:
        return [f"subw r2, r2, #{size}"]
    return [f"movw r3, #{size & 0xFFFF}", f"movt r3, #{size >> 16}", "sub r2, r2, r3"]


def _number(reg: str) -> int:
    return {"ip": 12, "lr": 14}.get(reg, 0) or int(reg[1:])


def source(lines: list[str], name: str, guard: str, fallback: str) -> str:
    """The C definition of a layer's function ``name``(y, x, stream): the naked assembly ``lines``
    where ``guard`` is defined, else a call ``fallback`` of the plain-C kernel."""
    body = "\n".join(f'      "{line}\\n"' for line in lines)
    unused = "__attribute__((unused))"
    return (f"#ifdef {guard}\n"
            f"__attribute__((naked, noinline)) static int32_t {name}({unused} void* y, {unused} void* x, "
            f"{unused} void* w) {{\n"
            f"  __asm__ volatile(\n{body});\n}}\n"
            f"#else\n"
            f"static int32_t {name}(void* y, void* x, void* w) {{\n"
            f"  {fallback};\n"
            f"  return 0;\n}}\n"
            f"#endif\n")


def dsp_source(layer: TinyFc, name: str) -> str:
    return source(layer.assembly(), name, "UTVM_DSP_ASM",
                  f"utvm_dsp_tiny_fc((int8_t*)y, (const int8_t*)x, (const int32_t*)w, {layer.batch}, {layer.depth}, "
                  f"{layer.units}, {layer.lo}, {layer.hi})")


# ---------------------------------------------------------------------------------------------
# Helium (Cortex-M55): per group of four channels one VMLADAVA per channel onto its bias, the
# four sums moved into a vector and requantized together

#: the largest depth: one 16-byte vector of inputs per row
MVE_DEPTH = 32
#: the vector registers of a row's steps of 16 inputs (q6 saved and restored: callee-saved)
XVECS = ("q0", "q6")
#: depths up to this: the four channels of a group in the lanes of one accumulator vector (per
#: input VLDRB.S32 of their weights, VMLA by the input; kernels_mve.h UTVM_MVE_TINY_LANES)
MVE_LANES = 5


def mve_applies(depth: int, units: int) -> bool:
    return depth <= MVE_DEPTH and depth * units <= MVE_MAX_MACS


#: a block of 16 channels (depths up to MVE_LANES): group k's lane i is channel 4 i + BLOCK_ORDER[k].
#: The four groups' results narrow into the int16 lanes of two vectors (A and B into the low and
#: high halves of one, C and D of the other), those into the even and odd bytes of one: the 16
#: outputs in order, one store (kernels_mve.h utvm_mve_tiny_fc reads the stream in the same order)
BLOCK_ORDER = (0, 2, 1, 3)


def mve_blocks(depth: int, units: int) -> int:
    """Whole blocks of 16 channels (the first 4 * blocks groups)."""
    return units // 16 if depth <= MVE_LANES else 0


def group_channels(g: int, units: int, depth: int) -> list[int]:
    """The channels of group g, lane by lane."""
    if g < 4 * mve_blocks(depth, units):
        return [16 * (g // 4) + 4 * i + BLOCK_ORDER[g % 4] for i in range(4)]
    return list(range(4 * g, min(4 * g + 4, units)))


def mve_stream(w: np.ndarray, rq: GemmRequant, per_tensor: bool) -> np.ndarray:
    """Per group of four channels: the four folded biases, the weights (per channel of the group
    its 16-byte vector; depths up to MVE_LANES: per input the four channels' weights, zeros for
    missing channels), the four multipliers, the four shifts (-e); the constants of the last
    group padded with its last channel's. ``per_tensor``: the multiplier and the shift once, first,
    none in the groups."""
    units, depth = w.shape

    def words(values: list[int]) -> np.ndarray:
        return np.array(values, np.int64).astype(np.int32).view(np.uint8)

    out = [words([int(rq.mults[0]), -int(rq.rights[0])])] if per_tensor else []
    for g in range(-(-units // 4)):
        chans = group_channels(g, units, depth)
        pad = chans + [chans[-1]] * (4 - len(chans))
        if depth <= MVE_LANES:
            vecs = np.zeros((depth, 4), np.int8)
            vecs[:, :len(chans)] = w[chans].T
        else:
            vecs = np.zeros((len(chans), -(-depth // 16) * 16), np.int8)
            vecs[:, :depth] = w[chans]
        out += [words([rq.folded[c] for c in pad]), vecs.view(np.uint8).reshape(-1)]
        if not per_tensor:
            out += [words([rq.mults[c] for c in pad]), words([-rq.rights[c] for c in pad])]
    return np.concatenate(out).view(np.int32)


#: registers of a row's inputs (depths up to MVE_LANES)
XREGS = ("r4", "r5", "r6", "r7", "r8")


def _mov_imm(reg: str, v: int) -> str:
    return f"mov {reg}, #{v}" if v >= 0 else f"mvn {reg}, #{-v - 1}"


@dataclass(frozen=True)
class TinyMve:
    """One layer on Helium: ``batch`` rows of ``depth`` (<= MVE_DEPTH) inputs, ``units`` outputs, output
    zero point ``zy``, clamp [lo, hi]."""

    batch: int
    depth: int
    units: int
    zy: int
    lo: int
    hi: int
    #: one multiplier and shift for all channels (first in the stream)
    per_tensor: bool = False

    @property
    def clamped(self) -> bool:
        return self.lo > -128 or self.hi < 127

    @property
    def lanes(self) -> bool:
        return self.depth <= MVE_LANES

    @property
    def steps(self) -> int:
        """Vectors of 16 inputs per row."""
        return -(-self.depth // 16)

    def _sums(self, n: int, q: str) -> list[str]:
        """q: the n (<= 4) channels' sums with their biases (r2 at the group's biases, the row in
        q0, or its inputs in XREGS); the weights pass through the other one of q2, q3 (q1 stays free
        for a block's results)."""
        wq = "q3" if q == "q2" else "q2"
        if self.lanes:
            code = [f"vldrw.32 {q}, [r2], #16"]
            for j in range(self.depth):
                code += [f"vldrb.s32 {wq}, [r2], #4", f"vmla.s32 {q}, {wq}, {XREGS[j]}"]
            return code
        accs = ("r4", "r6", "r8", "r10")
        code = ["ldm r2!, {r4, r6, r8, r10}"]
        for u in range(n):
            for x in XVECS[:self.steps]:
                code += [f"vldrb.8 {wq}, [r2], #16", f"vmladava.s8 {accs[u]}, {x}, {wq}"]
        return code + ["stm sp, {r4, r6, r8, r10}", f"vldrw.32 {q}, [sp]"]  # the sums into a vector

    @property
    def blocks(self) -> int:
        return mve_blocks(self.depth, self.units)

    def _requant(self, n: int) -> list[str]:
        """The n (<= 4) channels of a group requantized into q2 (before the zero point)."""
        if self.per_tensor:  # the multiplier (r9) onto the sign, the rounding shift by r11
            return self._sums(n, "q3") + ["vshr.s32 q2, q3, #31", "vqrdmlah.s32 q2, q3, r9", "vrshl.s32 q2, r11"]
        return self._sums(n, "q2") + ["vldrw.32 q3, [r2], #16", "vqrdmulh.s32 q2, q2, q3", "vshr.s32 q3, q2, #31",
                                      "vadd.i32 q2, q2, q3", "vldrw.32 q3, [r2], #16", "vrshl.s32 q2, q2, q3"]

    def _group(self, n: int) -> list[str]:
        """The n (<= 4) channels of a group, stored at r0."""
        code = self._requant(n) + ["vadd.i32 q2, q2, r12"]
        if self.clamped and not self.blocks:
            code += ["vmax.s32 q2, q2, q4", "vmin.s32 q2, q2, q5"]
        else:  # saturate to int16, then to int8 in the low byte of each lane (the clamp there: bytes)
            code += ["vqmovnb.s32 q2, q2", "vqmovnb.s16 q2, q2"]
            code += ["vmax.s8 q2, q2, q4", "vmin.s8 q2, q2, q5"] if self.clamped else []
        if n == 4:
            return code + ["vstrb.32 q2, [r0], #4"]
        return code + [f"mov r3, #{n}", "vctp.32 r3", "vpst", "vstrbt.32 q2, [r0]", f"adds r0, r0, #{n}"]

    def _block(self) -> list[str]:
        """16 channels: groups A, B narrowed into q0 (int16), C, D into q1, the zero point added
        (saturating), both narrowed into the bytes of q0, clamped there, one store."""
        code: list[str] = []
        for k in range(4):
            half = "b" if k % 2 == 0 else "t"
            code += self._requant(4) + [f"vqmovn{half}.s32 {('q0', 'q1')[k // 2]}, q2"]
        code += ["vqadd.s16 q0, q0, r12", "vqadd.s16 q1, q1, r12", "vqmovnb.s16 q0, q0", "vqmovnt.s16 q0, q1"]
        code += ["vmax.s8 q0, q0, q4", "vmin.s8 q0, q0, q5"] if self.clamped else []
        return code + ["vstrb.8 q0, [r0], #16"]

    def _row(self, row: int) -> list[str]:
        """Load row ``row``'s inputs: bytes into XREGS, or vectors (XVECS, zeros past the depth)."""
        at = row * self.depth
        if self.lanes:
            return [f"ldrsb {XREGS[j]}, [r1, #{at + j}]" for j in range(self.depth)]
        code = [f"add lr, r1, #{at}"] if at else []
        base = "lr" if at else "r1"
        for s, x in enumerate(XVECS[:self.steps]):
            rest = self.depth - 16 * s
            code += ([f"vldrb.8 {x}, [{base}, #{16 * s}]"] if rest >= 16 else
                     [f"mov r3, #{rest}", "vctp.8 r3", "vpst", f"vldrbt.8 {x}, [{base}, #{16 * s}]"])
        return code

    def assembly(self) -> list[str]:
        code = ["push {r4, r5, r6, r7, r8, r9, r10, r11, lr}", _mov_imm("r12", self.zy)]
        end = ["pop {r4, r5, r6, r7, r8, r9, r10, r11, pc}"]
        if self.clamped:  # the clamp in words, or in bytes when there are blocks
            size = 8 if self.blocks else 32
            code += ["vpush {d8-d11}", _mov_imm("r3", self.lo), f"vdup.{size} q4, r3", _mov_imm("r3", self.hi),
                     f"vdup.{size} q5, r3"]
            end.insert(0, "vpop {d8-d11}")
        if self.steps > 1:
            code.append("vpush {d12-d13}")
            end.insert(0, "vpop {d12-d13}")
        if self.per_tensor:
            code.append("ldrd r9, r11, [r2], #8")
        if not self.lanes:  # four words where the sums pass into a vector (the stack 8-byte aligned)
            code.append("sub sp, sp, #20")
            end.insert(0, "add sp, sp, #20")
        groups = [min(4, self.units - g) for g in range(0, self.units, 4)]
        size = sum((16 if self.per_tensor else 48) + (4 * self.depth if self.lanes else 16 * n * self.steps)
                   for n in groups)
        for row in range(self.batch):
            code += (_rewind(size) if row else []) + self._row(row)
            code += self._block() * self.blocks
            for n in groups[4 * self.blocks:]:
                code += self._group(n)
        return code + end


def mve_source(layer: TinyMve, name: str) -> str:
    return source(layer.assembly(), name, "UTVM_MVE_VECTOR",
                  f"utvm_mve_tiny_fc((int8_t*)y, (const int8_t*)x, (const int32_t*)w, {layer.batch}, {layer.depth}, "
                  f"{layer.units}, {layer.zy}, {layer.lo}, {layer.hi}, {int(layer.per_tensor)})")


def function_name(prefix: str, lines: list[str]) -> str:
    """A name unique to the code (two models with the same layer define the same static function)."""
    return f"{prefix}_tiny_" + hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]
