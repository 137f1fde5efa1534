"""What a compile is asked to do, parsed once into typed values: :class:`CompileOptions` with its
:class:`MemoryMode` and the kernels' :class:`~utvm.kernels.target.Target`, made where the options
enter (the command line, run, group, tune, RPC) and passed down as they are."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .errors import UtvmError
from .kernels.target import Target

#: --memory-mode min: the most extra MACs the patches may cost unless min:PCT says otherwise
DEFAULT_PATCH_OVERHEAD = 0.5


@dataclass(frozen=True)
class MemoryMode:
    """``--memory-mode``: "fast" (layer by layer), or "min" / "min:PCT" (the first stage patch
    by patch where that lowers the pool, with at most PCT percent more MACs; min is min:50)."""

    #: the most extra MACs (a fraction of the model's) the patches may cost; None: fast
    max_extra_macs: float | None = None

    @classmethod
    def parse(cls, text: str) -> MemoryMode:
        if text == "fast":
            return cls()
        if text == "min":
            return cls(DEFAULT_PATCH_OVERHEAD)
        name, _, pct = text.partition(":")
        try:
            value = float(pct) if name == "min" else -1.0
        except ValueError:
            value = -1.0
        if not 0 <= value <= 1000:
            raise UtvmError(f"--memory-mode must be 'fast', 'min' or 'min:PCT' (PCT: the most extra MACs in "
                            f"percent, 0-1000), not '{text[:40]}'")
        return cls(value / 100)

    @property
    def fast(self) -> bool:
        return self.max_extra_macs is None


@dataclass
class CompileOptions:
    name: str | None = None
    io_in_pool: bool = False
    #: the CPU the C will be compiled for (e.g. cortex-m4); None: any
    cpu: str | None = None
    #: "c": constants as C arrays (<name>_lib2.c); "object": a relocatable ELF object
    constants: str = "c"
    #: with constants="object": "host" (x86-64) or "arm"; None: "arm" when cpu is set
    constants_target: str | None = None
    #: None, or "static-lib": also build lib/lib<name>.a with ``cc`` and ``cflags``
    export: str | None = None
    cc: str = "cc"
    cflags: str = ""
    #: external modules that take the operators they support, first come first served
    offload: tuple[str, ...] = ()
    #: CMSIS-NN sources for --offload cmsis-nn; None: $CMSIS_NN_DIR
    cmsis_nn_dir: Path | None = None
    #: kernel configurations chosen by `utvm tune` (JSON lines), applied where they match
    tuning_log: Path | None = None
    #: "tvm-0.18": the public header and a system library as TVM 0.18 generated them
    compat: str | None = None
    #: workspace pools (name, bytes) in order of preference; empty: one pool of any size
    pools: tuple[tuple[str, int], ...] = ()
    #: the model group whose shared pool (tvmgen_<group>_pool) the model runs in (--shared-pool)
    shared_pool: str | None = None
    #: (offset, bytes) of the pool the plan must leave alone (another model's kept output)
    reserved: tuple[tuple[int, int], ...] = ()
    #: the --memory-mode text ("fast", "min", "min:PCT") is parsed here, once
    memory_mode: MemoryMode = field(default_factory=MemoryMode)
    #: the most bytes the model's constants may take in flash (--max-flash); None: no budget
    max_flash: int | None = None
    #: what the kernels may assume about ``cpu``, made from it once
    target: Target = field(init=False)

    def __post_init__(self) -> None:
        if isinstance(self.memory_mode, str):
            self.memory_mode = MemoryMode.parse(self.memory_mode)
        self.target = Target.for_cpu(self.cpu)

    @property
    def object_target(self) -> str:
        """The ELF format of constants as an object: --constants-target, else arm with a CPU."""
        return self.constants_target or ("arm" if self.cpu else "host")
