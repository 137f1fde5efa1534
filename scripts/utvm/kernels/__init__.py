"""Kernel building: the helpers the operators' kernel variants are made of (TE computes and
schedules, requantization, fixed-point arithmetic, the DSP, Helium and 16x8 helpers, the
target CPU's features); the lowering stage (:mod:`utvm.lower`) builds each operator's kernel
with them."""
