"""The CPU a model is compiled for, as the kernel builders see it."""

from __future__ import annotations

from dataclasses import dataclass

#: CPUs without the DSP extension, where utvm_dot4_s8 is slower than one byte at a time
NO_DSP_CPUS = ("cortex-m0", "cortex-m0plus", "cortex-m1", "cortex-m3", "cortex-m23")

#: CPUs with Helium (MVE): 16 int8 lanes per vector multiply-accumulate (utvm_dot16_acc_s8)
MVE_CPUS = ("cortex-m52", "cortex-m55", "cortex-m85")

#: int8 lanes of one Helium vector
VECTOR_LANES = 16


def packed_lanes(cpu: str | None) -> int:
    """int8 lanes the kernels work on for ``cpu`` (None: any CPU with 32-bit words):
    0 bytes one at a time, 4 lanes per int32 word, 16 lanes per Helium vector."""
    name = (cpu or "").lower()
    if name in NO_DSP_CPUS:
        return 0
    return VECTOR_LANES if name in MVE_CPUS else 4


@dataclass(frozen=True)
class Target:
    """What a kernel variant may assume about the CPU."""

    cpu: str | None = None
    #: see :func:`packed_lanes`
    lanes: int = 4

    @classmethod
    def for_cpu(cls, cpu: str | None) -> Target:
        return cls(cpu, packed_lanes(cpu))

    @property
    def packed(self) -> bool:
        """Four int8 lanes per int32 word at least (the DSP extension, or Helium)."""
        return self.lanes >= 4

    @property
    def dsp(self) -> bool:
        """The 4-lane DSP kernels (SMLAD), not Helium."""
        return self.lanes == 4

    @property
    def helium(self) -> bool:
        return self.lanes >= VECTOR_LANES
