"""Cortex-M boards that QEMU emulates and that the bare-metal runner builds for.

Each entry records what the compiler, the linker and QEMU need to know about one board:
the CPU flags for ``arm-none-eabi-gcc``, where QEMU puts the memory that the firmware is
linked into, and where the free-running FPGAIO counter lives and how many instructions one
of its ticks stands for under ``qemu -icount shift=0`` (one instruction per virtual ns).

Memory layout per machine (QEMU ``hw/arm/mps2.c`` and ``hw/arm/mps2-tz.c``):

- ``mps2-an385`` / ``mps2-an386`` / ``mps2-an500``: ZBT SSRAM1, 4 MiB at 0x00000000 (used
  as flash: the vector table must be at 0), ZBT SSRAM2/3, 4 MiB at 0x20000000 (RAM).
  FPGAIO at 0x40028000, prescaler clock 25 MHz; COUNTER is at offset 0x18.
- ``mps3-an547``: ITCM, 512 KiB at 0x00000000 (secure alias 0x10000000), DTCM, 512 KiB at
  0x20000000 (secure alias 0x30000000). The core starts in Secure state, so the firmware is
  linked at the secure aliases, as Zephyr's board does. FPGAIO at 0x49302000, prescaler
  clock 20 MHz (QEMU's default for the device).

Zephyr names follow Zephyr 3.7+ (hardware model v2): ``mps2/an385``, ``mps2/an386``,
``mps2/an500``, ``mps3/corstone300/an547``.
"""

from __future__ import annotations

from dataclasses import dataclass

from utvm.errors import UtvmError

#: QEMU's virtual clock advances this many ns per instruction with ``-icount shift=0``.
NS_PER_INSTRUCTION = 1


@dataclass(frozen=True)
class MemoryRegion:
    """A contiguous address range ``[origin, origin + size)``."""

    origin: int
    size: int

    @property
    def end(self) -> int:
        return self.origin + self.size

    def contains(self, address: int, size: int = 0) -> bool:
        """True when ``[address, address + size)`` lies inside the region."""
        return self.origin <= address and address + size <= self.end


@dataclass(frozen=True)
class BoardSpec:
    """One emulated Cortex-M board."""

    #: Key in :data:`BOARDS`, e.g. ``"mps2/an385"``.
    name: str
    #: Board name as Zephyr's ``west build -b`` spells it.
    zephyr_name: str
    #: ``qemu-system-arm -M`` machine.
    qemu_machine: str
    #: ``qemu-system-arm -cpu`` type (the machine's only supported CPU).
    cpu: str
    #: Code generation flags: CPU and instruction set.
    cpu_flags: tuple[str, ...]
    #: Floating-point ABI flags (empty for a CPU without an FPU).
    float_flags: tuple[str, ...]
    #: Where the firmware's code and constants go (QEMU models it as RAM, reset vector at 0).
    flash: MemoryRegion
    #: Where data, bss, the workspace pool and the stack go.
    ram: MemoryRegion
    #: Address of the FPGAIO COUNTER register.
    counter_addr: int
    #: Frequency of the FPGAIO counter in Hz.
    counter_hz: int

    @property
    def flash_origin(self) -> int:
        return self.flash.origin

    @property
    def flash_size(self) -> int:
        return self.flash.size

    @property
    def ram_origin(self) -> int:
        return self.ram.origin

    @property
    def ram_size(self) -> int:
        return self.ram.size

    @property
    def gcc_flags(self) -> list[str]:
        """All target flags for ``arm-none-eabi-gcc`` (compile and link)."""
        return [*self.cpu_flags, *self.float_flags]

    @property
    def instructions_per_tick(self) -> int:
        """Instructions executed per counter tick under ``-icount shift=0``."""
        ns_per_tick = 1_000_000_000 // self.counter_hz
        return ns_per_tick // NS_PER_INSTRUCTION

    def ticks_to_instructions(self, ticks: int) -> int:
        return ticks * self.instructions_per_tick

    @property
    def defines(self) -> dict[str, str]:
        """Preprocessor defines the bare-metal platform port needs for this board."""
        return {"UTVM_FPGAIO_COUNTER_ADDR": f"0x{self.counter_addr:08x}u"}


_MPS2_FLASH = MemoryRegion(origin=0x0000_0000, size=4 * 1024 * 1024)
_MPS2_RAM = MemoryRegion(origin=0x2000_0000, size=4 * 1024 * 1024)
_MPS2_COUNTER = 0x4002_8018
_MPS2_COUNTER_HZ = 25_000_000

BOARDS: dict[str, BoardSpec] = {
    "mps2/an385": BoardSpec(
        name="mps2/an385",
        zephyr_name="mps2/an385",
        qemu_machine="mps2-an385",
        cpu="cortex-m3",
        cpu_flags=("-mcpu=cortex-m3", "-mthumb"),
        float_flags=("-mfloat-abi=soft",),
        flash=_MPS2_FLASH,
        ram=_MPS2_RAM,
        counter_addr=_MPS2_COUNTER,
        counter_hz=_MPS2_COUNTER_HZ,
    ),
    "mps2/an386": BoardSpec(
        name="mps2/an386",
        zephyr_name="mps2/an386",
        qemu_machine="mps2-an386",
        cpu="cortex-m4",
        cpu_flags=("-mcpu=cortex-m4", "-mthumb"),
        float_flags=("-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"),
        flash=_MPS2_FLASH,
        ram=_MPS2_RAM,
        counter_addr=_MPS2_COUNTER,
        counter_hz=_MPS2_COUNTER_HZ,
    ),
    "mps2/an500": BoardSpec(
        name="mps2/an500",
        zephyr_name="mps2/an500",
        qemu_machine="mps2-an500",
        cpu="cortex-m7",
        cpu_flags=("-mcpu=cortex-m7", "-mthumb"),
        float_flags=("-mfloat-abi=hard", "-mfpu=fpv5-d16"),
        flash=_MPS2_FLASH,
        ram=_MPS2_RAM,
        counter_addr=_MPS2_COUNTER,
        counter_hz=_MPS2_COUNTER_HZ,
    ),
    "mps3/an547": BoardSpec(
        name="mps3/an547",
        zephyr_name="mps3/corstone300/an547",
        qemu_machine="mps3-an547",
        cpu="cortex-m55",
        # -mcpu=cortex-m55 enables MVE (Helium, integer and float) and the FPU.
        cpu_flags=("-mcpu=cortex-m55", "-mthumb"),
        float_flags=("-mfloat-abi=hard", "-mfpu=auto"),
        flash=MemoryRegion(origin=0x1000_0000, size=512 * 1024),
        ram=MemoryRegion(origin=0x3000_0000, size=512 * 1024),
        counter_addr=0x4930_2018,
        counter_hz=20_000_000,
    ),
}


def get_board(name: str) -> BoardSpec:
    """Look a board up by its key, its Zephyr name or its QEMU machine name."""
    wanted = name.strip()
    if wanted in BOARDS:
        return BOARDS[wanted]
    for board in BOARDS.values():
        if wanted in (board.zephyr_name, board.qemu_machine):
            return board
    valid = ", ".join(sorted(BOARDS))
    raise UtvmError(f"unknown board {name!r}; valid boards: {valid}")
