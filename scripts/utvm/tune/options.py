"""What a tuning run is asked to do: the board or devices, the trials, the budgets."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass
class TuneOptions:
    board: str
    trials: int = 16
    jobs: int = 1
    max_ram: int | None = None
    #: reject configurations pushing the model's constants (flash) above this many bytes
    max_flash: int | None = None
    seed: int = 0
    #: RPC servers to measure on (serial ports, ptys, socket://host:port); empty: QEMU directly
    devices: tuple[str, ...] = ()
    #: command that puts a built firmware on the device; {elf}, {build} and {device} are replaced
    flash: str | None = None
    #: the CPU, for a device whose board utvm does not know (else the board's)
    cpu: str | None = None
    work_dir: Path | None = None
