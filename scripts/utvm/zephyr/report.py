"""``west tvm report``: flash and RAM that the models take in a built Zephyr image.

Reads ``<build>/zephyr/zephyr.elf`` with :mod:`utvm.run.elfreport`. Where flash and RAM are
comes from the build's own configuration (``<build>/zephyr/.config``: CONFIG_FLASH_BASE_ADDRESS,
CONFIG_FLASH_SIZE, CONFIG_SRAM_BASE_ADDRESS, CONFIG_SRAM_SIZE), so no board is named here;
without them (native_sim, or an ELF alone) the ELF's own section flags decide.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from utvm.errors import UtvmError
from utvm.run import elfreport
from utvm.run.boards import BoardSpec, MemoryRegion

_CONFIG_LINE = re.compile(r"^(CONFIG_[A-Za-z0-9_]+)=(.*)$")


@dataclass(frozen=True)
class ModelReport:
    """Memory of one model in the image."""

    name: str
    code: int
    constants: int
    pool: int
    data: int
    constants_in_flash: bool
    pool_in_ram: bool
    problems: tuple[str, ...]
    #: each pool symbol: bytes, output section (its memory region), address, in RAM or not
    pools: tuple[dict[str, object], ...] = ()
    #: from the model's metadata.json in the build directory, when found: the pools the plan
    #: made (name, size, capacity) and the patch plan of --memory-mode min
    planned_pools: tuple[dict[str, object], ...] = ()
    patch_plan: dict[str, object] | None = None

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "flash": {"code": self.code, "constants": self.constants,
                      "total": self.code + self.constants},
            "ram": {"pool": self.pool, "data": self.data, "total": self.pool + self.data},
            "constants_in_flash": self.constants_in_flash,
            "pool_in_ram": self.pool_in_ram,
            "pools": list(self.pools),
            "planned_pools": list(self.planned_pools),
            "patch_plan": self.patch_plan,
            "problems": list(self.problems),
        }


@dataclass(frozen=True)
class ImageReport:
    """The models of one image, and the image's totals."""

    elf: Path
    board: str | None
    regions_from_config: bool
    models: tuple[ModelReport, ...]
    image: elfreport.MemoryReport

    def as_dict(self) -> dict[str, object]:
        return {
            "elf": str(self.elf),
            "board": self.board,
            "regions": "config" if self.regions_from_config else "elf",
            "models": [m.as_dict() for m in self.models],
            "image": self.image.as_dict(),
        }


def read_config(path: Path) -> dict[str, str]:
    """CONFIG_ symbols of a Zephyr .config (values unquoted)."""
    values: dict[str, str] = {}
    if not path.is_file():
        return values
    for line in path.read_text(errors="replace").splitlines():
        m = _CONFIG_LINE.match(line.strip())
        if m:
            value = m.group(2)
            if len(value) >= 2 and value[0] == value[-1] == '"':
                value = value[1:-1]
            values[m.group(1)] = value
    return values


def _int(value: str | None) -> int | None:
    if value is None or value == "":
        return None
    try:
        return int(value, 0)
    except ValueError:
        return None


def regions_from_config(config: dict[str, str], board: str | None = None) -> BoardSpec | None:
    """A BoardSpec carrying only the flash and RAM regions of a Zephyr .config.

    None when the configuration has no flash (native_sim) or no SRAM, or does not run
    from flash (CONFIG_XIP not set: code is copied to RAM).
    """
    flash_base = _int(config.get("CONFIG_FLASH_BASE_ADDRESS"))
    flash_kb = _int(config.get("CONFIG_FLASH_SIZE"))
    sram_base = _int(config.get("CONFIG_SRAM_BASE_ADDRESS"))
    sram_kb = _int(config.get("CONFIG_SRAM_SIZE"))
    if None in (flash_base, flash_kb, sram_base, sram_kb) or config.get("CONFIG_XIP") != "y":
        return None
    assert flash_base is not None and flash_kb and sram_base is not None and sram_kb
    name = board or _board_name(config) or "zephyr"
    return BoardSpec(
        name=name, zephyr_name=name, qemu_machine="", cpu="", cpu_flags=(), float_flags=(),
        flash=MemoryRegion(origin=flash_base, size=flash_kb * 1024),
        ram=MemoryRegion(origin=sram_base, size=sram_kb * 1024),
        counter_addr=0, counter_hz=1,
    )


def _board_name(config: dict[str, str]) -> str | None:
    return config.get("CONFIG_BOARD_TARGET") or config.get("CONFIG_BOARD")


def find_models(elf: Path) -> list[str]:
    """Names of the models in an image: those with a descriptor tvmgen_<name>_model."""
    syms = elfreport.model_symbols(elf, "tvmgen_")
    names = set()
    for sym in syms.all():
        m = re.fullmatch(r"tvmgen_(\w+)_model", sym.name)
        if m:
            names.add(m.group(1))
    return sorted(names)


def model_report(elf: Path, name: str, board: BoardSpec | None) -> ModelReport:
    syms = elfreport.model_symbols(elf, f"tvmgen_{name}_", board)
    if not syms.all():
        raise UtvmError(f"{elf}: no symbols of a model named {name!r} (tvmgen_{name}_*)")
    code = syms.code_bytes  # kernels (__tvm_ffi_tvmgen_<name>_*) included
    check = elfreport.constants_in_flash(elf, board, prefix=f"tvmgen_{name}_")
    pool_in_ram = bool(syms.pool) and all(s.placement == elfreport.RAM for s in syms.pool)
    problems = list(check.problems)
    if not syms.pool:
        problems.append(f"no static pool symbol of {name} found (run_with_pool only?)")
    elif not pool_in_ram:
        problems.append(f"the pool of {name} is not in RAM")
    return ModelReport(
        name=name, code=code, constants=syms.constants_bytes,
        pool=syms.pool_bytes, data=syms.data_bytes,
        constants_in_flash=check.ok and bool(syms.constants),
        pool_in_ram=pool_in_ram, problems=tuple(problems), pools=tuple(syms.pool_places()))


def build_report(build_dir: Path, elf: Path | None = None,
                 names: list[str] | None = None) -> ImageReport:
    """The report for a Zephyr build directory, sysbuild's included (or an ELF given
    explicitly)."""
    from utvm.zephyr.build import image_elf

    elf_path = elf if elf is not None else image_elf(build_dir)
    if not elf_path.is_file():
        raise UtvmError(f"no image at {elf_path}: build first (west tvm build -b BOARD)")
    config = read_config(elf_path.parent / ".config")
    board = regions_from_config(config)
    models = names or find_models(elf_path)
    if not models:
        raise UtvmError(f"{elf_path}: no TVM model in this image (no tvmgen_<name>_model)")
    return ImageReport(
        elf=elf_path, board=_board_name(config),
        regions_from_config=board is not None,
        models=tuple(_with_metadata(model_report(elf_path, n, board), build_dir or _build_dir_of(elf_path))
                     for n in models),
        image=elfreport.memory_report(elf_path, board))


def _build_dir_of(elf: Path) -> Path | None:
    """The CMake build directory an image given by ``--elf`` lies in (<build>/zephyr/zephyr.elf,
    or the image beside CMakeCache.txt), or None."""
    for d in (elf.parent, elf.parent.parent):
        if (d / "CMakeCache.txt").is_file():
            return d
    return None


def _with_metadata(model: ModelReport, build_dir: Path | None) -> ModelReport:
    """``model`` with the pools and patch plan of its metadata.json (tvm_add_model's output
    directory, <build>/tvm/<name> or below the build directory), when there is one."""
    import dataclasses

    if build_dir is None:
        return model

    for meta_path in sorted(Path(build_dir).glob(f"**/tvm/{model.name}/metadata.json"))[:1]:
        try:
            module = json.loads(meta_path.read_text())["modules"][model.name]
        except (ValueError, KeyError):
            continue
        return dataclasses.replace(model, planned_pools=tuple(module.get("pools", [])),
                                   patch_plan=module.get("patch_plan"))
    return model


def to_json(report: ImageReport) -> str:
    return json.dumps(report.as_dict(), indent=2)


def _of(capacity: int | None) -> str:
    return f" of {capacity}" if capacity is not None else ""


def format_table(report: ImageReport) -> list[str]:
    """Lines of a table: one row per model, then the image's totals."""
    where = "Zephyr .config" if report.regions_from_config else "ELF section flags"
    lines = [f"{report.elf} (board {report.board or '?'}; flash/RAM from {where})", ""]
    header = (f"{'model':<16}{'code':>10}{'constants':>11}{'flash':>10}{'pool':>10}"
              f"{'data':>8}{'RAM':>10}  constants in flash  pool in RAM")
    lines += [header, "-" * len(header)]
    for m in report.models:
        lines.append(
            f"{m.name:<16}{m.code:>10}{m.constants:>11}{m.code + m.constants:>10}"
            f"{m.pool:>10}{m.data:>8}{m.pool + m.data:>10}  "
            f"{'yes' if m.constants_in_flash else 'NO':<19} {'yes' if m.pool_in_ram else 'NO'}")
    for m in report.models:
        lines += [f"{m.name}: pool {p['symbol']} {p['bytes']} bytes in {p['section']} at {p['address']:#x}"
                  for p in m.pools if len(m.pools) > 1]
        lines += [f"{m.name}: pool {p['name']} planned {p['size']} of {p['capacity']} bytes"
                  for p in m.planned_pools if p.get("capacity") is not None]
        if m.patch_plan:
            pp = m.patch_plan
            lines.append(f"{m.name}: first {pp['layers']} layers patch by patch, grid {pp['grid']}, "
                         f"{pp['mac_overhead']:.1%} more MACs")
    img = report.image
    lines += ["", f"image: flash {img.flash_total} bytes{_of(img.flash_capacity)}, "
                  f"RAM {img.ram_total} bytes{_of(img.ram_capacity)}"]
    for m in report.models:
        lines += [f"{m.name}: {p}" for p in m.problems]
    return lines
