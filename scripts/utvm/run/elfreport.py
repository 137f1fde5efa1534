"""Flash and RAM use of a linked Cortex-M ELF (bare-metal firmware or Zephyr's zephyr.elf).

Where a section lives:

- with a :class:`~utvm.run.boards.BoardSpec`, by address: inside the board's flash region
  or its RAM region (anything else is listed as ``unplaced``);
- without one, from the ELF alone: a section without file contents (``NOBITS``: bss,
  noinit, stacks) is RAM; a section whose load address (LMA, from its ``PT_LOAD``
  segment's physical address) differs from its run address (VMA) is RAM with an
  initialisation image in flash (``.data``); any other section is flash when its segment
  is executable or read-only, RAM otherwise.

Code versus constants inside flash: a non-executable section is all constants. An
executable section may hold read-only data too (picolibc's linker script puts
``.rodata*`` into ``.text``); there the ARM mapping symbols (``$t``/``$a`` code, ``$d``
data) split it, data inside a function (literal pools) counting as code. Without mapping
symbols, ``STT_OBJECT`` symbols are the constants.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from elftools.elf.constants import P_FLAGS, SH_FLAGS
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

from utvm.errors import UtvmError
from utvm.run.boards import BoardSpec, MemoryRegion

#: Object symbols in RAM whose names match one of these are counted as workspace pool.
DEFAULT_POOL_PATTERNS: tuple[str, ...] = ("*_pool", "*_pool_*", "*_pool[0-9]*")
#: Object symbols in RAM whose names match one of these are counted as stack.
DEFAULT_STACK_PATTERNS: tuple[str, ...] = ("*_stack", "*_stacks", "*_stack_area")
#: Sections that are stack as a whole (picolibc's ``.stack``).
STACK_SECTIONS: tuple[str, ...] = (".stack", ".stack.*", ".heap_and_stack")

_MAPPING_SYMBOL = re.compile(r"^\$([atd])(\..*)?$")

FLASH = "flash"
RAM = "ram"
UNPLACED = "unplaced"


# --------------------------------------------------------------------------- ELF model


@dataclass(frozen=True)
class _Section:
    index: int
    name: str
    vma: int
    lma: int
    size: int
    nobits: bool
    writable: bool
    executable: bool
    #: True when the containing PT_LOAD segment is executable or read-only.
    in_rom_segment: bool


@dataclass(frozen=True)
class _Symbol:
    name: str
    address: int
    size: int
    kind: str  # "FUNC" | "OBJECT" | "NOTYPE" | ...
    section_index: int
    #: for a local (static) symbol, the base name of the source file it was compiled from
    #: (the STT_FILE symbol before it); empty for global symbols
    file: str = ""


@dataclass
class _Elf:
    path: Path
    is_arm: bool
    sections: list[_Section]
    symbols: list[_Symbol]
    by_index: dict[int, _Section] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_index = {s.index: s for s in self.sections}


def _load(elf_path: Path) -> _Elf:
    path = Path(elf_path)
    if not path.is_file():
        raise UtvmError(f"ELF file not found: {path}")
    try:
        with path.open("rb") as fh:
            elf = ELFFile(fh)
            is_arm = elf["e_machine"] == "EM_ARM"
            segments = [
                seg.header for seg in elf.iter_segments() if seg["p_type"] == "PT_LOAD"
            ]
            sections: list[_Section] = []
            symbols: list[_Symbol] = []
            for index, sec in enumerate(elf.iter_sections()):
                flags = sec["sh_flags"]
                if isinstance(sec, SymbolTableSection) and sec.name == ".symtab":
                    source = ""
                    for sym in sec.iter_symbols():
                        if sym["st_info"]["type"] == "STT_FILE":
                            source = sym.name.replace("\\", "/").rsplit("/", 1)[-1]
                            continue
                        shndx = sym["st_shndx"]
                        if not isinstance(shndx, int) or not sym.name:
                            continue
                        symbols.append(
                            _Symbol(
                                name=sym.name,
                                address=int(sym["st_value"]),
                                size=int(sym["st_size"]),
                                kind=str(sym["st_info"]["type"]).removeprefix("STT_"),
                                section_index=shndx,
                                file=source if sym["st_info"]["bind"] == "STB_LOCAL" else "",
                            )
                        )
                if not flags & SH_FLAGS.SHF_ALLOC or sec["sh_size"] == 0:
                    continue
                vma = int(sec["sh_addr"])
                nobits = sec["sh_type"] == "SHT_NOBITS"
                lma = vma
                rom_segment = False
                for seg in segments:
                    if seg["p_vaddr"] <= vma < seg["p_vaddr"] + max(seg["p_memsz"], 1):
                        if not nobits and seg["p_filesz"] == 0:
                            continue
                        lma = vma - seg["p_vaddr"] + seg["p_paddr"]
                        pflags = seg["p_flags"]
                        rom_segment = bool(pflags & P_FLAGS.PF_X) or not (
                            pflags & P_FLAGS.PF_W
                        )
                        break
                sections.append(
                    _Section(
                        index=index,
                        name=sec.name,
                        vma=vma,
                        lma=int(lma),
                        size=int(sec["sh_size"]),
                        nobits=nobits,
                        writable=bool(flags & SH_FLAGS.SHF_WRITE),
                        executable=bool(flags & SH_FLAGS.SHF_EXECINSTR),
                        in_rom_segment=rom_segment,
                    )
                )
    except UtvmError:
        raise
    except Exception as exc:  # noqa: BLE001 - pyelftools raises many types on bad input
        raise UtvmError(
            f"{path}: not a readable ELF file ({type(exc).__name__})"
        ) from None
    return _Elf(path=path, is_arm=is_arm, sections=sections, symbols=symbols)


def _placement(sec: _Section, board: BoardSpec | None) -> str:
    """FLASH, RAM or UNPLACED for the run address of ``sec``."""
    if board is not None:
        if board.flash.contains(sec.vma, sec.size):
            return FLASH
        if board.ram.contains(sec.vma, sec.size):
            return RAM
        return UNPLACED
    if sec.nobits or sec.lma != sec.vma:
        return RAM
    return FLASH if sec.in_rom_segment else RAM


def _has_load_copy(sec: _Section) -> bool:
    """True when start-up code copies this section from a flash image into RAM."""
    return not sec.nobits and sec.lma != sec.vma


def _matches(name: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def _is_stack_section(name: str) -> bool:
    return _matches(name, STACK_SECTIONS)


def _code_address(elf: _Elf, sym: _Symbol) -> int:
    # Thumb function symbols have bit 0 set.
    if elf.is_arm and sym.kind == "FUNC":
        return sym.address & ~1
    return sym.address


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return merged


def _overlap(lo: int, hi: int, ranges: list[tuple[int, int]]) -> int:
    total = 0
    for rlo, rhi in ranges:
        if rhi <= lo:
            continue
        if rlo >= hi:
            break
        total += min(hi, rhi) - max(lo, rlo)
    return total


def _constant_bytes_in_exec_section(elf: _Elf, sec: _Section) -> int:
    """Read-only data bytes inside an executable section (see the module docstring)."""
    in_sec = [s for s in elf.symbols if s.section_index == sec.index]
    mapping = sorted(
        (s.address, m.group(1))
        for s in in_sec
        if (m := _MAPPING_SYMBOL.match(s.name)) is not None
    )
    if not mapping:
        objects = _merge(
            [
                (s.address, s.address + s.size)
                for s in in_sec
                if s.kind == "OBJECT" and s.size
            ]
        )
        return _overlap(sec.vma, sec.vma + sec.size, objects)
    functions = _merge(
        [
            (_code_address(elf, s), _code_address(elf, s) + s.size)
            for s in in_sec
            if s.kind == "FUNC" and s.size
        ]
    )
    end = sec.vma + sec.size
    total = 0
    for i, (start, kind) in enumerate(mapping):
        if kind != "d":
            continue
        stop = mapping[i + 1][0] if i + 1 < len(mapping) else end
        lo, hi = max(start, sec.vma), min(stop, end)
        if hi > lo:
            total += (hi - lo) - _overlap(lo, hi, functions)
    return total


# --------------------------------------------------------------------------- reports


@dataclass(frozen=True)
class SectionUse:
    """One allocated section and where it was counted."""

    name: str
    address: int
    load_address: int
    size: int
    placement: str  # FLASH, RAM or UNPLACED


@dataclass(frozen=True)
class MemoryReport:
    """Bytes of flash and RAM an ELF occupies, by kind."""

    elf: Path
    #: Machine code (including literal pools and the start-up code).
    flash_code: int
    #: Read-only data in flash: rodata, the vector table, TVM constants.
    flash_constants: int
    #: Flash images of initialised RAM data that start-up code copies (``.data``).
    flash_data_init: int
    #: Workspace pool(s): RAM object symbols matching the pool patterns.
    ram_pool: int
    #: Stack: stack sections and RAM object symbols matching the stack patterns.
    ram_stack: int
    #: All other RAM: data, bss, noinit.
    ram_other: int
    #: Capacities of the board's regions (None without a board).
    flash_capacity: int | None = None
    ram_capacity: int | None = None
    #: Sections outside the board's flash and RAM (only with a board).
    unplaced: tuple[SectionUse, ...] = ()
    sections: tuple[SectionUse, ...] = ()

    @property
    def flash_total(self) -> int:
        return self.flash_code + self.flash_constants + self.flash_data_init

    @property
    def ram_total(self) -> int:
        return self.ram_pool + self.ram_stack + self.ram_other

    def as_dict(self) -> dict[str, int | None]:
        return {
            "flash_code": self.flash_code,
            "flash_constants": self.flash_constants,
            "flash_data_init": self.flash_data_init,
            "flash_total": self.flash_total,
            "flash_capacity": self.flash_capacity,
            "ram_pool": self.ram_pool,
            "ram_stack": self.ram_stack,
            "ram_other": self.ram_other,
            "ram_total": self.ram_total,
            "ram_capacity": self.ram_capacity,
        }

    def format(self) -> str:
        """A small human-readable table."""

        def cap(used: int, capacity: int | None) -> str:
            if not capacity:
                return ""
            return f"  ({100.0 * used / capacity:.1f}% of {capacity})"

        rows = [
            f"flash  {self.flash_total:>10}{cap(self.flash_total, self.flash_capacity)}",
            f"  code       {self.flash_code:>10}",
            f"  constants  {self.flash_constants:>10}",
            f"  data init  {self.flash_data_init:>10}",
            f"ram    {self.ram_total:>10}{cap(self.ram_total, self.ram_capacity)}",
            f"  pool       {self.ram_pool:>10}",
            f"  stack      {self.ram_stack:>10}",
            f"  other      {self.ram_other:>10}",
        ]
        for sec in self.unplaced:
            rows.append(
                f"unplaced section {sec.name} at 0x{sec.address:08x} ({sec.size} bytes)"
            )
        return "\n".join(rows)


def memory_report(
    elf: Path,
    board: BoardSpec | None = None,
    *,
    pool_patterns: Sequence[str] = DEFAULT_POOL_PATTERNS,
    stack_patterns: Sequence[str] = DEFAULT_STACK_PATTERNS,
) -> MemoryReport:
    """Flash and RAM use of ``elf``; see the module docstring for the rules."""
    view = _load(Path(elf))
    code = constants = data_init = 0
    pool = stack = ram_other = 0
    used: list[SectionUse] = []
    unplaced: list[SectionUse] = []
    for sec in view.sections:
        where = _placement(sec, board)
        use = SectionUse(sec.name, sec.vma, sec.lma, sec.size, where)
        used.append(use)
        if where == UNPLACED:
            unplaced.append(use)
            continue
        if where == FLASH:
            if sec.executable:
                const_bytes = _constant_bytes_in_exec_section(view, sec)
                constants += const_bytes
                code += sec.size - const_bytes
            else:
                constants += sec.size
            continue
        # RAM
        if _has_load_copy(sec):
            data_init += sec.size
        if _is_stack_section(sec.name):
            stack += sec.size
            continue
        sec_pool = sec_stack = 0
        for sym in view.symbols:
            if sym.section_index != sec.index or sym.kind != "OBJECT" or not sym.size:
                continue
            if _matches(sym.name, pool_patterns):
                sec_pool += sym.size
            elif _matches(sym.name, stack_patterns):
                sec_stack += sym.size
        pool += sec_pool
        stack += sec_stack
        ram_other += max(0, sec.size - sec_pool - sec_stack)
    return MemoryReport(
        elf=Path(elf),
        flash_code=code,
        flash_constants=constants,
        flash_data_init=data_init,
        ram_pool=pool,
        ram_stack=stack,
        ram_other=ram_other,
        flash_capacity=board.flash.size if board is not None else None,
        ram_capacity=board.ram.size if board is not None else None,
        unplaced=tuple(unplaced),
        sections=tuple(used),
    )


@dataclass(frozen=True)
class SymbolInfo:
    """A model symbol and where it lives."""

    name: str
    address: int
    size: int
    section: str
    #: "code", "constants", "pool" or "data" (other RAM objects).
    kind: str
    #: Run address for RAM, flash address otherwise; differs from ``address`` when
    #: start-up code copies the symbol's initial value from flash.
    load_address: int
    placement: str  # FLASH, RAM or UNPLACED

    @property
    def copied_to_ram(self) -> bool:
        return self.load_address != self.address


@dataclass(frozen=True)
class ModelSymbols:
    """The symbols of one compiled model (prefix ``tvmgen_<name>_``), by kind."""

    prefix: str
    code: tuple[SymbolInfo, ...]
    constants: tuple[SymbolInfo, ...]
    pool: tuple[SymbolInfo, ...]
    data: tuple[SymbolInfo, ...]

    @property
    def code_bytes(self) -> int:
        return sum(s.size for s in self.code)

    @property
    def constants_bytes(self) -> int:
        return sum(s.size for s in self.constants)

    @property
    def pool_bytes(self) -> int:
        return sum(s.size for s in self.pool)

    @property
    def data_bytes(self) -> int:
        return sum(s.size for s in self.data)

    def all(self) -> tuple[SymbolInfo, ...]:
        return self.code + self.constants + self.pool + self.data

    def pool_places(self) -> list[dict[str, object]]:
        """Each pool symbol: its bytes, the output section (the memory region's, in Zephyr) and
        address, and whether it is in RAM."""
        return [{"symbol": p.name, "bytes": p.size, "section": p.section, "address": p.address,
                 "in_ram": p.placement == RAM} for p in self.pool]

    def find(self, name: str) -> SymbolInfo | None:
        for sym in self.all():
            if sym.name == name:
                return sym
        return None


KERNEL_PREFIX = "__tvm_ffi_"


def _model_source(prefix: str) -> re.Pattern[str] | None:
    """The base names of the C files of the model with symbol prefix ``tvmgen_<name>_``: its
    static functions and data (the kernels it defines itself, utvm_dsp_*, utvm_mve_*) carry
    no prefix and are found by the file they were compiled from."""
    m = re.fullmatch(r"tvmgen_(\w+)_", prefix)
    return re.compile(rf"{re.escape(m.group(1))}_lib\d+\.c") if m else None


def _symbol_infos(
    view: _Elf,
    board: BoardSpec | None,
    prefix: str,
    pool_patterns: Sequence[str],
) -> list[SymbolInfo]:
    infos: list[SymbolInfo] = []
    seen: set[tuple[str, int]] = set()
    source = _model_source(prefix)
    for sym in view.symbols:
        if sym.kind not in ("FUNC", "OBJECT"):
            continue
        # kernels carry TVM's packed-function prefix: __tvm_ffi_tvmgen_<name>_...
        named = sym.name.removeprefix(KERNEL_PREFIX).startswith(prefix)
        if not named and not (source is not None and sym.file and source.fullmatch(sym.file)):
            continue
        sec = view.by_index.get(sym.section_index)
        if sec is None:
            continue
        address = _code_address(view, sym)
        key = (sym.name, address)
        if key in seen:
            continue
        seen.add(key)
        where = _placement(sec, board)
        if sym.kind == "FUNC":
            kind = "code"
        elif where == FLASH:
            kind = "constants"
        elif _matches(sym.name, pool_patterns):
            kind = "pool"
        else:
            kind = "data"
        infos.append(
            SymbolInfo(
                name=sym.name,
                address=address,
                size=sym.size,
                section=sec.name,
                kind=kind,
                load_address=address - sec.vma + sec.lma,
                placement=where,
            )
        )
    infos.sort(key=lambda s: (s.kind, s.address))
    return infos


def model_symbols(
    elf: Path,
    prefix: str,
    board: BoardSpec | None = None,
    *,
    pool_patterns: Sequence[str] = DEFAULT_POOL_PATTERNS,
) -> ModelSymbols:
    """Function and object symbols whose names start with ``prefix``, by kind.

    ``prefix`` is normally ``tvmgen_<name>_``; a bare model name is accepted too.
    """
    if prefix and not prefix.startswith("tvmgen_"):
        prefix = f"tvmgen_{prefix}_"
    view = _load(Path(elf))
    infos = _symbol_infos(view, board, prefix, pool_patterns)
    return ModelSymbols(
        prefix=prefix,
        code=tuple(s for s in infos if s.kind == "code"),
        constants=tuple(s for s in infos if s.kind == "constants"),
        pool=tuple(s for s in infos if s.kind == "pool"),
        data=tuple(s for s in infos if s.kind == "data"),
    )


@dataclass(frozen=True)
class ConstantsCheck:
    """Result of :func:`constants_in_flash`."""

    ok: bool
    #: The constant symbols that were checked.
    constants: tuple[SymbolInfo, ...]
    #: One line per problem found; empty when ``ok``.
    problems: tuple[str, ...]

    @property
    def constants_bytes(self) -> int:
        return sum(s.size for s in self.constants)


def constants_in_flash(
    elf: Path,
    board: BoardSpec | None = None,
    prefix: str = "tvmgen_",
    names: Iterable[str] | None = None,
) -> ConstantsCheck:
    """Check that a model's constants are read in place from flash.

    The constants are the object symbols named in ``names`` or, by default, every object
    symbol starting with ``prefix`` that is in flash. Each must lie in flash (the board's
    flash region, or a flash section when ``board`` is None) and have no load copy in RAM.
    Any other object symbol starting with ``prefix`` that start-up code copies from flash
    into RAM (initialised, non-const data) is reported too: it costs flash and RAM.
    """
    view = _load(Path(elf))
    infos = _symbol_infos(view, board, prefix, DEFAULT_POOL_PATTERNS)
    objects = [s for s in infos if s.kind != "code"]
    problems: list[str] = []
    if names is not None:
        wanted = list(names)
        by_name = {s.name: s for s in objects}
        checked = []
        for name in wanted:
            info = by_name.get(name)
            if info is None:
                problems.append(f"{name}: no such object symbol in {Path(elf).name}")
            else:
                checked.append(info)
    else:
        checked = [s for s in objects if s.kind == "constants"]
    for info in checked:
        if info.placement != FLASH:
            problems.append(
                f"{info.name}: at 0x{info.address:08x} in {info.section}, not in flash"
            )
        elif board is not None and not board.flash.contains(info.address, info.size):
            problems.append(f"{info.name}: extends past the end of flash")
        if info.copied_to_ram:
            problems.append(
                f"{info.name}: copied from flash 0x{info.load_address:08x} to RAM "
                f"0x{info.address:08x} at start-up"
            )
    checked_names = {s.name for s in checked}
    for info in objects:
        if info.name not in checked_names and info.copied_to_ram:
            problems.append(
                f"{info.name}: {info.size} bytes of initialised data copied from flash to RAM "
                f"at start-up (missing const?)"
            )
    return ConstantsCheck(
        ok=not problems, constants=tuple(checked), problems=tuple(problems)
    )


def region_of(board: BoardSpec, address: int) -> MemoryRegion | None:
    """The board region (flash or RAM) containing ``address``, if any."""
    for region in (board.flash, board.ram):
        if region.contains(address):
            return region
    return None
