"""The model's constants as a relocatable ELF object (``--constants object``).

Instead of C arrays that a compiler has to parse (slow for models with megabytes of
weights), the raw bytes of every constant go into one ``.rodata.tvm`` section (read-only,
allocated, 16-byte aligned) with one global object symbol per tensor, ``tvmgen_<N>_cK``:
the names the executor (``<N>_lib1.c``) declares ``extern``. The object is written here
directly (no compiler, no objcopy), so symbol sizes are exact.
"""

from __future__ import annotations

import platform
import struct
from dataclasses import dataclass
from pathlib import Path

from ..errors import UtvmError

SECTION = ".rodata.tvm"
ALIGN = 16


@dataclass(frozen=True)
class ObjectTarget:
    name: str        # file name suffix, e.g. "arm"
    elf64: bool
    machine: int     # e_machine
    flags: int       # e_flags


#: ``arm`` is 32-bit little-endian ARM EABI5 (Cortex-M); ``host`` is the machine utvm runs
#: on (:func:`host_target`).
TARGETS: dict[str, ObjectTarget] = {
    "arm": ObjectTarget("arm", False, 40, 0x05000000),
}

#: ELF formats of the little-endian hosts whose linkers take ELF objects, by
#: platform.machine() (e_machine per the ELF ABI supplements; e_flags as their compilers set
#: them by default: RISC-V RVC + double-float ABI, PowerPC64 ELFv2).
_HOST_ELF: dict[str, ObjectTarget] = {
    "x86_64": ObjectTarget("x86_64", True, 62, 0),
    "amd64": ObjectTarget("x86_64", True, 62, 0),
    "aarch64": ObjectTarget("aarch64", True, 183, 0),
    "arm64": ObjectTarget("aarch64", True, 183, 0),
    "i386": ObjectTarget("i386", False, 3, 0),
    "i686": ObjectTarget("i386", False, 3, 0),
    "riscv64": ObjectTarget("riscv64", True, 243, 0x5),
    "ppc64le": ObjectTarget("ppc64le", True, 21, 2),
}
#: Systems whose linkers take ELF objects.
_ELF_SYSTEMS = ("Linux", "FreeBSD", "NetBSD", "OpenBSD")


def host_target(system: str | None = None, machine: str | None = None) -> ObjectTarget:
    """The ELF format of this host (or of ``system``/``machine``, as platform reports them)."""
    system = platform.system() if system is None else system
    machine = (platform.machine() if machine is None else machine).lower()
    if system not in _ELF_SYSTEMS:
        raise UtvmError(f"--constants object writes ELF objects, and the linker of this host "
                        f"({system} {machine}) takes another format: use --constants c")
    if machine not in _HOST_ELF:
        raise UtvmError(f"--constants object: no ELF format known for a {machine} host: use --constants c")
    return _HOST_ELF[machine]


def _target(target: str) -> ObjectTarget:
    if target == "host":
        return host_target()
    if target not in TARGETS:
        raise UtvmError(f"unknown constants target '{target}' (one of: host, {', '.join(TARGETS)})")
    return TARGETS[target]

_SHT_PROGBITS, _SHT_SYMTAB, _SHT_STRTAB = 1, 2, 3
_SHF_ALLOC = 0x2
_STB_LOCAL, _STB_GLOBAL = 0, 1
_STT_OBJECT, _STT_SECTION = 1, 3


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def layout(constants: list[tuple[str, bytes]]) -> tuple[bytes, list[tuple[str, int, int]]]:
    """(blob, [(symbol, offset, size)]): every constant starts on a 16-byte boundary."""
    blob = bytearray()
    symbols: list[tuple[str, int, int]] = []
    for sym, data in constants:
        if not data:
            data = bytes(4)  # the C declaration has at least one element
        blob += bytes(_align(len(blob), ALIGN) - len(blob))
        symbols.append((sym, len(blob), len(data)))
        blob += data
    return bytes(blob), symbols


def constants_object(constants: list[tuple[str, bytes]], target: str) -> bytes:
    """An ELF relocatable object defining every constant in section ``.rodata.tvm``."""
    t = _target(target)
    blob, symbols = layout(constants)

    shstrtab = b"\0" + SECTION.encode() + b"\0.symtab\0.strtab\0.shstrtab\0.note.GNU-stack\0"

    def shname(s: str) -> int:
        return shstrtab.index(s.encode() + b"\0")

    strtab = bytearray(b"\0")
    sym_entries: list[bytes] = []
    ptr = "<Q" if t.elf64 else "<I"

    def sym(name_off: int, value: int, size: int, info: int, shndx: int) -> bytes:
        if t.elf64:
            return struct.pack("<IBBHQQ", name_off, info, 0, shndx, value, size)
        return struct.pack("<IIIBBH", name_off, value, size, info, 0, shndx)

    sym_entries.append(sym(0, 0, 0, 0, 0))
    sym_entries.append(sym(0, 0, 0, (_STB_LOCAL << 4) | _STT_SECTION, 1))
    for name, offset, size in symbols:
        off = len(strtab)
        strtab += name.encode() + b"\0"
        sym_entries.append(sym(off, offset, size, (_STB_GLOBAL << 4) | _STT_OBJECT, 1))
    symtab = b"".join(sym_entries)

    ehsize = 64 if t.elf64 else 52
    shentsize = 64 if t.elf64 else 40
    symentsize = 24 if t.elf64 else 16
    # file layout: header | .rodata.tvm | .symtab | .strtab | .shstrtab | section headers
    body = bytearray()
    pos = ehsize

    def place(data: bytes, align: int) -> int:
        nonlocal pos
        pad = _align(pos, align) - pos
        body.extend(bytes(pad))
        pos += pad
        at = pos
        body.extend(data)
        pos += len(data)
        return at

    data_off = place(blob, ALIGN)
    symtab_off = place(symtab, 8)
    strtab_off = place(bytes(strtab), 1)
    shstr_off = place(shstrtab, 1)
    shoff = _align(pos, 8)
    body.extend(bytes(shoff - pos))

    def shdr(name: int, typ: int, flags: int, off: int, size: int, link: int, info: int,
             align: int, entsize: int) -> bytes:
        if t.elf64:
            return struct.pack("<IIQQQQIIQQ", name, typ, flags, 0, off, size, link, info, align, entsize)
        return struct.pack("<IIIIIIIIII", name, typ, flags, 0, off, size, link, info, align, entsize)

    headers = [
        shdr(0, 0, 0, 0, 0, 0, 0, 0, 0),
        shdr(shname(SECTION), _SHT_PROGBITS, _SHF_ALLOC, data_off, len(blob), 0, 0, ALIGN, 0),
        # sh_link: the string table; sh_info: index of the first global symbol
        shdr(shname(".symtab"), _SHT_SYMTAB, 0, symtab_off, len(symtab), 3, 2, 8, symentsize),
        shdr(shname(".strtab"), _SHT_STRTAB, 0, strtab_off, len(strtab), 0, 0, 1, 0),
        shdr(shname(".shstrtab"), _SHT_STRTAB, 0, shstr_off, len(shstrtab), 0, 0, 1, 0),
        # empty: the object does not need an executable stack
        shdr(shname(".note.GNU-stack"), _SHT_PROGBITS, 0, shoff, 0, 0, 0, 1, 0),
    ]
    ident = b"\x7fELF" + bytes([2 if t.elf64 else 1, 1, 1, 0]) + bytes(8)
    header = ident + struct.pack("<HHI", 1, t.machine, 1) + struct.pack(ptr, 0) + struct.pack(ptr, 0)
    header += struct.pack(ptr, shoff)
    header += struct.pack("<IHHHHHH", t.flags, ehsize, 0, 0, shentsize, len(headers), 4)
    assert len(header) == ehsize
    return header + bytes(body) + b"".join(headers)


def write_constants_object(directory: Path, name: str, constants: list[tuple[str, bytes]],
                           target: str) -> Path:
    """Write ``<directory>/<name>_constants_<arch>.o``; return its path."""
    path = Path(directory) / f"{name}_constants_{_target(target).name}.o"
    data = constants_object(constants, target)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path
