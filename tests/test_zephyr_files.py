"""The Zephyr module checked against Zephyr's own files, not stand-ins of them.

The files come from the Zephyr tree of $ZEPHYR_BASE (3.4 to 4.x): scripts/zephyr_module.py,
its module schema (a file since 3.5, inside the script before), twister's testsuite schema,
board metadata, the logging Kconfig template and the CMSIS-NN Kconfig (modules/cmsis-nn since
3.5, modules/cmsis before). Every test here skips, with the reason, when ZEPHYR_BASE is unset.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from zephyr_tree import require_zephyr, skip_reason, zephyr_base, zephyr_file  # noqa: E402

pytestmark = pytest.mark.skipif(zephyr_base() is None, reason=skip_reason())

TESTSUITE_SCHEMA = "scripts/schemas/twister/testsuite-schema.yaml"
LOG_TEMPLATE = "subsys/logging/Kconfig.template.log_config"

#: Simulators twister runs in Zephyr's CI container (no Arm FVP there); its pytest harness
#: supports these two only (twisterlib.constants.SUPPORTED_SIMS_IN_PYTEST).
RUNNABLE_SIMULATORS = {"qemu", "native"}
#: What twister assumes for a board whose yaml has no ram/flash (KiB).
TWISTER_DEFAULT_RAM, TWISTER_DEFAULT_FLASH = 128, 512

SCENARIO_FILES = [REPO / "samples/utvm_inference/sample.yaml",
                  REPO / "samples/utvm_rpc_server/sample.yaml",
                  REPO / "tests/zephyr/crt/testcase.yaml"]


_zephyr_file = zephyr_file


def _knows_package_managers() -> bool:
    """Zephyr 4.1 and later accept a module.yml `package-managers` key."""
    return "package-managers" in _zephyr_file("scripts/zephyr_module.py").read_text()


def _run_zephyr_module(module: Path, out: Path) -> subprocess.CompletedProcess[str]:
    script = _zephyr_file("scripts/zephyr_module.py")
    out.mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        [sys.executable, str(script), "--modules", str(module),
         "--kconfig-out", str(out / "Kconfig.modules"), "--cmake-out", str(out / "modules.txt"),
         "--twister-out", str(out / "twister.args"), "--settings-out", str(out / "settings.txt")],
        capture_output=True, text=True, check=False, timeout=120)


# --------------------------------------------------------------------------- module.yml


def test_zephyr_module_py_accepts_the_module(tmp_path: Path) -> None:
    """Zephyr's own module scanner on this repository: what `west build` runs first. Its
    outputs name the module utvm (Kconfig ZEPHYR_UTVM_MODULE)."""
    r = _run_zephyr_module(REPO, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    kconfig = (tmp_path / "Kconfig.modules").read_text()
    assert f'osource "{REPO.as_posix()}/Kconfig"' in kconfig
    assert re.search(r"^config ZEPHYR_UTVM_MODULE$", kconfig, re.M), kconfig
    assert f'"utvm":"{REPO.as_posix()}":"{REPO.as_posix()}"' in (tmp_path / "modules.txt").read_text()
    roots = (tmp_path / "twister.args").read_text().split()
    assert str(REPO / "samples") in roots and str(REPO / "tests/zephyr") in roots


def test_zephyr_before_package_managers_rejects_that_key(tmp_path: Path) -> None:
    """Why module.yml has no package-managers key: Zephyr before 4.1 (3.4 to 4.0) refuses
    the module with it; a Zephyr that knows the key accepts it."""
    module = tmp_path / "mod"
    (module / "zephyr").mkdir(parents=True)
    shutil.copy(REPO / "CMakeLists.txt", module / "CMakeLists.txt")
    shutil.copy(REPO / "Kconfig", module / "Kconfig")
    meta = yaml.safe_load((REPO / "zephyr/module.yml").read_text())
    meta["package-managers"] = {"pip": {"requirement-files": ["scripts/requirements.txt"]}}
    (module / "zephyr/module.yml").write_text(yaml.safe_dump(meta))
    r = _run_zephyr_module(module, tmp_path / "out")
    if _knows_package_managers():
        assert r.returncode == 0, r.stdout + r.stderr
    else:
        assert r.returncode != 0 and "package-managers" in r.stdout + r.stderr


def _module_schema() -> Any:
    """The module.yml schema of this Zephyr: scripts/schemas/module-schema.yaml, or before
    that file existed the METADATA_SCHEMA string of scripts/zephyr_module.py."""
    path = require_zephyr() / "scripts/schemas/module-schema.yaml"
    if path.is_file():
        return yaml.safe_load(path.read_text())
    text = _zephyr_file("scripts/zephyr_module.py").read_text()
    found = re.search(r"^METADATA_SCHEMA = '''(.*?)'''", text, re.M | re.S)
    assert found, "scripts/zephyr_module.py has neither a schema file nor METADATA_SCHEMA"
    return yaml.safe_load(found.group(1))


def test_module_yml_against_the_schema() -> None:
    """zephyr/module.yml against this Zephyr's module schema: a pykwalify one (`type: map`,
    as zephyr_module.py checks it up to 4.x) or a JSON schema (newer)."""
    schema = _module_schema()
    meta = yaml.safe_load((REPO / "zephyr/module.yml").read_text())
    if schema.get("type") == "map":
        import pykwalify.core

        pykwalify.core.Core(source_data=meta, schema_data=schema).validate(raise_exception=True)
    else:
        jsonschema = pytest.importorskip("jsonschema")
        jsonschema.validate(meta, schema)
    assert meta["name"] == "utvm"
    assert "west-commands" not in meta  # declared by west.yml (self: west-commands) instead
    for path in meta["samples"] + meta["tests"]:
        assert (REPO / path).is_dir(), path


# --------------------------------------------------------------------------- twister


def _scenarios(path: Path) -> dict[str, dict[str, Any]]:
    """Each scenario of a sample.yaml/testcase.yaml with `common` merged in, as twister does
    (lists are joined, the scenario's own values win)."""
    data = yaml.safe_load(path.read_text())
    common = data.get("common", {})
    merged: dict[str, dict[str, Any]] = {}
    for name, own in data["tests"].items():
        scenario = dict(common)
        for key, value in (own or {}).items():
            if isinstance(value, list) and isinstance(scenario.get(key), list):
                scenario[key] = scenario[key] + value
            else:
                scenario[key] = value
        merged[name] = scenario
    return merged


def _boards() -> dict[str, dict[str, Any]]:
    """Zephyr's board metadata by twister identifier (e.g. mps2/an385)."""
    boards: dict[str, dict[str, Any]] = {}
    for path in sorted((require_zephyr() / "boards").glob("**/*.yaml")):
        if path.name == "twister.yaml":
            continue
        data = yaml.safe_load(path.read_text())
        if isinstance(data, dict) and "identifier" in data:
            boards.setdefault(data["identifier"], data)
    return boards


#: The board names of Zephyr's hardware model v2 (3.7 and later) that this project uses, and
#: the names the same boards had before (3.4 to 3.6; native_sim came in 3.5 and replaces
#: native_posix_64).
HWMV1_NAMES = {"mps2/an385": "mps2_an385", "mps2/an386": "mps2_an386", "mps2/an500": "mps2_an500",
               "mps3/corstone300/an547": "mps3_an547", "native_sim": "native_posix_64"}


def _tree_name(name: str) -> str:
    """The name this Zephyr tree gives the board that hardware model v2 calls `name`."""
    if any((require_zephyr() / "boards").glob("**/board.yml")):
        return name
    return HWMV1_NAMES.get(name, name)


def _simulators(board: dict[str, Any]) -> set[str]:
    sim = board.get("simulation", [])
    if isinstance(sim, str):  # the older form: simulation: qemu
        return {sim}
    return {s["name"] for s in sim}


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=lambda p: p.parent.name)
def test_scenario_files_against_twisters_schema(path: Path) -> None:
    import pykwalify.core
    import pykwalify.errors

    schema = yaml.safe_load(_zephyr_file(TESTSUITE_SCHEMA).read_text())
    data = yaml.safe_load(path.read_text())
    pykwalify.core.Core(source_data=data, schema_data=schema).validate(raise_exception=True)
    bad = {"tests": {"x.y": {"harness": "console", "platform_alow": ["a"]}}}  # a typo is refused
    with pytest.raises(pykwalify.errors.SchemaError):
        pykwalify.core.Core(source_data=bad, schema_data=schema).validate(raise_exception=True)


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=lambda p: p.parent.name)
def test_scenario_platforms_fit_the_boards(path: Path) -> None:
    """Every platform a scenario names exists, has the RAM and flash the scenario asks for,
    and has a simulator twister runs (in CI: QEMU or native; the pytest harness: only those),
    so that no scenario is filtered out or left waiting on Arm FVP."""
    boards = _boards()
    for name, scenario in _scenarios(path).items():
        platforms = set(scenario.get("platform_allow", [])) | set(scenario.get("integration_platforms", []))
        assert platforms, f"{name}: no platform to run on"
        for platform in sorted(platforms):
            board = boards.get(_tree_name(platform))
            assert board is not None, f"{name}: {platform} is not a Zephyr board known here"
            ram = board.get("ram", TWISTER_DEFAULT_RAM)
            flash = board.get("flash", TWISTER_DEFAULT_FLASH)
            assert ram >= scenario.get("min_ram", 0), f"{name}: {platform} has {ram} KiB of RAM"
            assert flash >= scenario.get("min_flash", 0), f"{name}: {platform} has {flash} KiB of flash"
            if not scenario.get("build_only", False):
                sims = _simulators(board) & RUNNABLE_SIMULATORS
                assert sims, f"{name}: {platform} runs only on {sorted(_simulators(board))}"


#: a board's Kconfig symbol in a scenario's filter (CONFIG_BOARD_MPS2_AN385)
BOARD_SYMBOL = re.compile(r"CONFIG_(BOARD_[A-Z0-9_]+)")


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=lambda p: p.parent.name)
def test_scenarios_pick_boards_under_both_hardware_models(path: Path) -> None:
    """Every filter names, for each board it means, a symbol this Zephyr's boards define (3.4: BOARD_MPS3_AN547, 4.x:
    BOARD_MPS3_CORSTONE300_AN547, the same BOARD_MPS2_AN385 in both)."""
    scenarios = _scenarios(path)
    wanted = {name: BOARD_SYMBOL.findall(s.get("filter", "")) for name, s in scenarios.items()}
    wanted = {name: syms for name, syms in wanted.items() if syms}
    if not wanted:
        return
    boards = require_zephyr() / "boards"
    defined = {m for f in boards.glob("**/Kconfig*") for m in re.findall(r"^config (BOARD_\w+)", f.read_text(), re.M)}
    # hardware model v2 defines BOARD_<board>_<qualifiers> from board.yml, not in Kconfig files
    for yml in boards.glob("**/board.yml"):
        data = yaml.safe_load(yml.read_text()) or {}
        for board in data.get("boards", [data.get("board", {})]):
            for soc in board.get("socs", []):
                for variant in [None, *[v["name"] for v in soc.get("variants", [])]]:
                    parts = [board.get("name", ""), soc.get("name", ""), variant]
                    defined.add("BOARD_" + "_".join(p for p in parts if p).upper())
                    defined.add("BOARD_" + "_".join(p for p in (board.get("name", ""), variant) if p).upper())
    for name, syms in wanted.items():
        assert set(syms) & defined, f"{name}: none of {syms} is a board of this Zephyr"


def test_sample_output_matches_its_regexes() -> None:
    """The lines samples/utvm_inference prints (format of src/main.c) match sample.yaml,
    and the failure marker twister stops on follows a FAIL."""
    scenario = _scenarios(REPO / "samples/utvm_inference/sample.yaml")["sample.tvm.utvm_inference"]
    regexes = scenario["harness_config"]["regex"]
    lines = [
        "utvm_inference: model kws, 1 input(s), 1 output(s), pool 16000 bytes",
        "output 0 (Identity): -128 -128 -127 42",
        "utvm_inference: 123456 timing cycles per inference (4938 us)",
        "utvm_inference: PASS",
    ]
    for r, line in zip(regexes, lines, strict=True):
        assert re.search(r, line), (r, line)
    assert re.search(regexes[2], "utvm_inference: 12 k_cycle_get_32 ticks per inference (366 us)")
    main = (REPO / "samples/utvm_inference/src/main.c").read_text()
    assert '"PROJECT EXECUTION FAILED"' in main


def test_cmsis_nn_scenario_needs_the_module() -> None:
    """Without the cmsis-nn module twister filters the scenario out instead of failing in
    Kconfig (CONFIG_UTVM_OFFLOAD_CMSIS_NN depends on CMSIS_NN)."""
    scenario = _scenarios(REPO / "samples/utvm_inference/sample.yaml")["sample.tvm.utvm_inference.cmsis_nn"]
    assert "cmsis-nn" in scenario["modules"]
    # `filter:` is evaluated without the sample's CMakeLists.txt (no ZEPHYR_EXTRA_MODULES):
    # utvm must be a module twister knows, or the scenario is filtered
    assert "utvm" in scenario["modules"] and "filter" in scenario
    assert "CONFIG_UTVM_OFFLOAD_CMSIS_NN=y" in scenario["extra_configs"]


# --------------------------------------------------------------------------- Kconfig

# Zephyr's own symbols that the files under test refer to, declared as Zephyr declares them
# (type only): the files themselves are the real ones.
_TOP = """
mainmenu "utvm Kconfig test"
config LOG
\tbool "Logging"
config ASSERT
\tbool "Asserts"
config THREAD_STACK_INFO
\tbool
config INIT_STACKS
\tbool
config TIMING_FUNCTIONS
\tbool "Timing functions"
config CPU_CORTEX_M
\tbool
\tdefault y
config CMSIS_DSP
\tbool
config LOG_DEFAULT_LEVEL
\tint "Default log level"
\tdefault 3
\trange 0 4
source "{cmsis_nn}"
source "{repo}/Kconfig"
"""
_ZEPHYR_SYMBOLS = {"LOG", "ASSERT", "THREAD_STACK_INFO", "INIT_STACKS", "TIMING_FUNCTIONS", "CPU_CORTEX_M",
                   "CMSIS_DSP", "LOG_DEFAULT_LEVEL"}


def _cmsis_nn_kconfig(srctree: Path) -> Path:
    """Zephyr's CMSIS-NN Kconfig: modules/cmsis-nn/Kconfig (3.5 and later), or before it the
    CMSIS_NN menu of modules/cmsis/Kconfig with the Kconfig.cmsis_nn it sources (copied into
    srctree, where its `source` resolves)."""
    base = require_zephyr()
    if (base / "modules/cmsis-nn/Kconfig").is_file():
        return base / "modules/cmsis-nn/Kconfig"
    menu = re.search(r"^menuconfig CMSIS_NN\n.*?^endif\n", _zephyr_file("modules/cmsis/Kconfig").read_text(),
                     re.M | re.S)
    assert menu, "modules/cmsis/Kconfig has no CMSIS_NN menu"
    (srctree / "modules/cmsis").mkdir(parents=True)
    shutil.copy(_zephyr_file("modules/cmsis/Kconfig.cmsis_nn"), srctree / "modules/cmsis/Kconfig.cmsis_nn")
    out = srctree / "modules/cmsis/Kconfig.nn_menu"
    out.write_text(menu.group(0))
    return out


@pytest.fixture()
def kconfig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    kconfiglib = pytest.importorskip("kconfiglib")
    template = _zephyr_file(LOG_TEMPLATE)
    cmsis_nn = _cmsis_nn_kconfig(tmp_path)
    (tmp_path / "subsys" / "logging").mkdir(parents=True)
    shutil.copy(template, tmp_path / "subsys/logging/Kconfig.template.log_config")
    top = tmp_path / "Kconfig"
    top.write_text(_TOP.format(repo=REPO.as_posix(), cmsis_nn=cmsis_nn.as_posix()))
    monkeypatch.setenv("srctree", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return kconfiglib.Kconfig(str(top), warn_to_stderr=False)


def test_kconfig_symbols_are_prefixed(kconfig) -> None:
    assert not kconfig.warnings, kconfig.warnings
    cmsis_nn = {s.name for s in kconfig.unique_defined_syms
                if s.name.startswith(("CMSIS_NN", "ZEPHYR_CMSIS_NN"))}
    ours = {sym.name for sym in kconfig.unique_defined_syms} - _ZEPHYR_SYMBOLS - cmsis_nn
    assert {"UTVM", "UTVM_PROFILE", "UTVM_POOL_SECTION", "UTVM_LOG_LEVEL", "UTVM_STACK_CHECK",
            "UTVM_WORKSPACE_CHECK", "UTVM_TIMING_FUNCTIONS"} <= ours
    assert all(name == "UTVM" or name.startswith("UTVM_") for name in ours), sorted(ours)
    for choice in kconfig.choices:
        if choice.name and choice.name not in ("UTVM_LOG_LEVEL_CHOICE",):
            assert choice.name.startswith("UTVM_"), choice.name
    undefined = {sym.name for sym in kconfig.syms.values()
                 if not sym.nodes and not re.fullmatch(r"[0-9]+|[ynm]|MODULES", sym.name)}
    assert not undefined, undefined


def test_kconfig_defaults(kconfig) -> None:
    syms = kconfig.syms
    assert syms["UTVM"].str_value == "n"
    assert syms["UTVM_PROFILE"].visibility == 0  # hidden until UTVM is on
    syms["UTVM"].set_value("y")
    syms["LOG"].set_value("y")
    assert syms["UTVM_POOL_BSS"].str_value == "y"
    assert syms["UTVM_POOL_SECTION"].str_value == ""
    assert syms["UTVM_LOG_LEVEL"].str_value == "3"  # the template's default: INF
    syms["UTVM_LOG_LEVEL_DBG"].set_value("y")
    assert syms["UTVM_LOG_LEVEL"].str_value == "4"
    syms["UTVM_STACK_CHECK"].set_value("y")
    assert syms["THREAD_STACK_INFO"].str_value == "y"
    assert syms["TIMING_FUNCTIONS"].str_value == "y"  # implied by UTVM_TIMING_FUNCTIONS
    # CMSIS-NN offload needs Zephyr's cmsis-nn module and turns on the parts the glue calls.
    assert syms["UTVM_OFFLOAD_CMSIS_NN"].visibility == 0
    syms["CMSIS_NN"].set_value("y")
    syms["UTVM_OFFLOAD_CMSIS_NN"].set_value("y")
    assert syms["UTVM_OFFLOAD_CMSIS_NN"].str_value == "y"
    for part in ("CONVOLUTION", "FULLYCONNECTED", "POOLING", "SOFTMAX", "BASICMATH", "NNSUPPORT"):
        assert syms[f"CMSIS_NN_{part}"].str_value == "y", part
    assert syms["UTVM_LOG_LINE_SIZE"].str_value == "128"


def test_kconfig_pool_section_follows_the_placement(kconfig, tmp_path: Path) -> None:
    """UTVM_POOL_SECTION has no prompt: a value written to .config by one placement does not
    outlive a change of the placement."""
    syms = kconfig.syms
    syms["UTVM"].set_value("y")
    syms["UTVM_POOL_NOINIT"].set_value("y")
    assert syms["UTVM_POOL_SECTION"].str_value == ".noinit.utvm_pool"
    config = tmp_path / ".config"
    kconfig.write_config(str(config))
    assert 'CONFIG_UTVM_POOL_SECTION=".noinit.utvm_pool"' in config.read_text()
    kconfig.load_config(str(config))
    syms["UTVM_POOL_BSS"].set_value("y")  # the user changes the placement only
    assert syms["UTVM_POOL_SECTION"].str_value == ""
    syms["UTVM_POOL_CUSTOM_SECTION"].set_value("y")
    assert syms["UTVM_POOL_SECTION"].str_value == ".utvm_pool"
    syms["UTVM_POOL_CUSTOM_SECTION_NAME"].set_value(".sram2")
    assert syms["UTVM_POOL_SECTION"].str_value == ".sram2"
    assert syms["UTVM_POOL_SECTION"].visibility == 0  # derived: no prompt to set it


def test_kconfig_matches_the_c_and_cmake(kconfig) -> None:
    """Every CONFIG_UTVM_* the C and CMake code use is a symbol of the Kconfig tree, and the
    runtime's log module is the one the logging template names."""
    defined = {s.name for s in kconfig.unique_defined_syms}
    used: set[str] = set()
    for path in [REPO / "CMakeLists.txt", REPO / "cmake/tvm.cmake",
                 REPO / "lib/crt/ports/zephyr/platform_zephyr.c",
                 REPO / "samples/utvm_inference/src/main.c"]:
        used |= set(re.findall(r"CONFIG_(UTVM\w*)", path.read_text()))
    assert used, "no CONFIG_UTVM symbols found"
    assert used <= defined, used - defined
    port = (REPO / "lib/crt/ports/zephyr/platform_zephyr.c").read_text()
    assert "LOG_MODULE_REGISTER(utvm, CONFIG_UTVM_LOG_LEVEL)" in port
    assert not re.search(r"CONFIG_TVM_", "\n".join(
        p.read_text() for p in [*REPO.glob("samples/*/prj.conf"), *REPO.glob("samples/*/sample.yaml"),
                                REPO / "tests/zephyr/crt/prj.conf", REPO / "tests/zephyr/crt/testcase.yaml"]))


def test_west_tvm_run_knows_which_boards_zephyr_emulates_with_fvp_only() -> None:
    """`west tvm run` sends a board to `west build -t run` only where Zephyr runs it in QEMU;
    the boards Zephyr's own files give Arm FVP alone go to utvm's QEMU runner."""
    from utvm.run.boards import BOARDS
    from utvm.zephyr.build import FVP_ONLY_BOARDS

    boards = _boards()
    in_tree = {name for name, spec in BOARDS.items() if _tree_name(spec.zephyr_name) in boards}
    fvp_only = {name for name in in_tree if "qemu" not in _simulators(boards[_tree_name(BOARDS[name].zephyr_name)])}
    assert "mps2/an385" in in_tree and "mps2/an385" not in fvp_only
    # Zephyr 3.4 has no mps2_an386/mps2_an500 at all; later trees give them Arm FVP only.
    assert fvp_only == set(FVP_ONLY_BOARDS) & in_tree
