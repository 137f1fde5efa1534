"""Several workspace pools of bounded size (--pool NAME:BYTES): the planner's assignment, the
emitted symbols and sections, the fit error, and a bit-exact run with two pools on mps2/an386."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from utvm.plan.memory import Buffer, PoolsTooSmall, assign_pools


def _buffers() -> list[Buffer]:
    # a chain of activations (each live for two steps) and one kernel's scratch
    sizes = [4096, 8192, 2048, 8192, 1024]
    bufs = [Buffer(f"t{i}", s, i, i + 1) for i, s in enumerate(sizes)]
    bufs.append(Buffer("k2_scratch", 512, 2, 2, kind="scratch"))
    return bufs


def test_one_pool_takes_everything_when_it_fits() -> None:
    bufs = _buffers()
    pools = assign_pools(bufs, [("fast", 1 << 20), ("slow", 1 << 20)])
    assert {b.pool for b in bufs} == {0}
    assert pools[1].size == 0 and pools[0].size == 4096 + 8192  # t0 and t1 at step 1


def test_hottest_buffers_go_to_the_first_pool() -> None:
    bufs = _buffers()
    pools = assign_pools(bufs, [("fast", 4096), ("slow", 32768)])
    where = {b.name: pools[b.pool].name for b in bufs}
    assert where["k2_scratch"] == "fast"           # scratch first
    assert where["t0"] == where["t2"] == "fast" and where["t1"] == where["t3"] == "slow"
    assert pools[0].size <= 4096 and pools[1].size <= 32768
    for pool_index, pool in enumerate(pools):       # placed within each pool, never overlapping
        mine = [b for b in bufs if b.pool == pool_index]
        assert all(b.offset + b.size <= pool.size for b in mine)
        for i, a in enumerate(mine):
            for b in mine[i + 1:]:
                assert not (a.overlaps_in_time(b) and a.overlaps_in_space(b)), (a, b)


def test_too_small_pools_raise_one_line() -> None:
    with pytest.raises(PoolsTooSmall) as info:
        assign_pools(_buffers(), [("a", 1000)])
    assert "needs 12288 bytes" in str(info.value) and "a 1000" in str(info.value) and "\n" not in str(info.value)


def test_cli_pool_too_small_exits_2_and_writes_nothing(models_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out" / "mlf"
    r = subprocess.run([sys.executable, "-m", "utvm", "compile", str(models_dir / "ad01_int8.tflite"),
                        "--pool", "a:100", "-o", str(out)], capture_output=True, text=True,
                       env={"PYTHONPATH": str(Path(__file__).parents[1] / "scripts"), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: the model needs"), r.stderr
    assert "a 100 bytes" in r.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("args, message", [
    (["--pool", "1x:100"], "not a C identifier"),
    (["--pool", "a:100", "--pool", "a:200"], "once"),
    (["--pool", "a:0"], "positive"),
])
def test_cli_bad_pool_options(models_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                              args: list[str], message: str) -> None:
    from utvm.cli import main

    rc = main(["compile", str(models_dir / "ad01_int8.tflite"), *args, "-o", str(tmp_path / "m")])
    assert rc == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "m").exists()


@pytest.mark.slow
def test_two_pools_run_bit_exact_on_an386_each_in_its_section(models_dir: Path, tmp_path: Path) -> None:
    from elftools.elf.elffile import ELFFile

    from utvm.run.runner import run_model

    report = run_model(models_dir / "vww_96_int8.tflite", "mps2/an386", workdir=tmp_path,
                       pools=(("fast", 16384), ("slow", 65536)))
    assert report.outputs_match_reference is True and report.max_abs_diff == 0
    pools = {p["name"]: p for p in report.pools}
    assert 0 < pools["fast"]["size"] <= 16384 and 0 < pools["slow"]["size"] <= 65536
    assert report.memory["ram_pool_bytes"] == pools["fast"]["size"] + pools["slow"]["size"]
    # the executor's object: each pool symbol alone in its own section
    (obj,) = (tmp_path / "fw" / "obj").glob("*_vww_96_int8_lib1.o")
    with obj.open("rb") as fh:
        elf = ELFFile(fh)
        symtab = elf.get_section_by_name(".symtab")
        for name, pool in pools.items():
            (sym,) = symtab.get_symbol_by_name(f"tvmgen_vww_96_int8_pool_{name}")
            assert elf.get_section(sym["st_shndx"]).name == f".bss.tvm.{name}"
            assert sym["st_size"] == pool["size"]
    # the linked firmware: both in RAM, apart
    with (tmp_path / "fw" / "firmware.elf").open("rb") as fh:
        symtab = ELFFile(fh).get_section_by_name(".symtab")
        spans = sorted((s["st_value"], s["st_value"] + s["st_size"])
                       for n in pools for s in symtab.get_symbol_by_name(f"tvmgen_vww_96_int8_pool_{n}"))
    assert all(0x20000000 <= a for a, _ in spans) and spans[0][1] <= spans[1][0]
    placed = (tmp_path / "fw" / "firmware.map").read_text()
    assert ".bss.tvm.fast" in placed and ".bss.tvm.slow" in placed


# -- one pool for several models (--shared-pool) ----------------------------------------------

def _two_ad_models(models_dir: Path, tmp_path: Path) -> list[Path]:
    """Two copies of the anomaly detection model (quick to compile) under different names."""
    import shutil

    paths = [tmp_path / "det.tflite", tmp_path / "cls.tflite"]
    for p in paths:
        shutil.copy(models_dir / "ad01_int8.tflite", p)
    return paths


def test_group_keeps_an_output_out_of_the_next_models_plan_and_runs_exact(models_dir: Path, tmp_path: Path) -> None:
    import json

    from utvm.compiler import CompileOptions
    from utvm.group import compile_group
    from utvm.run.runner import run_group

    models = _two_ad_models(models_dir, tmp_path)
    out = tmp_path / "grp"
    result = compile_group(models, out, "pipeline", CompileOptions(io_in_pool=True), ["det:Identity"])
    det, cls = result.models
    kept = det.graph.outputs[0]
    start, size = det.plan.offsets[kept], det.graph.tensors[kept].nbytes
    for b in cls.plan.buffers:  # the next model's plan never writes the kept output's bytes
        assert b.offset + b.size <= start or start + size <= b.offset, b
    assert result.pool_size == max(det.plan.pool_size, cls.plan.pool_size)
    meta = json.loads((out / "group.json").read_text())
    assert meta["pool_size"] == result.pool_size and meta["models"][0]["kept_outputs"] == [kept]
    header = (out / "include" / "tvmgen_pipeline.h").read_text()
    assert f"#define TVMGEN_PIPELINE_POOL_SIZE {result.pool_size}" in header
    assert "extern uint8_t tvmgen_pipeline_pool[]" in (out / "det" / "codegen/host/src/det_lib1.c").read_text()
    assert not list(out.glob("*.tar")) and sorted(p.name for p in out.iterdir()) == [
        "cls", "det", "group.json", "include", "src"]

    report = run_group(models, "host", CompileOptions(io_in_pool=True), keep=["det:Identity"], group="pipeline")
    assert [m["outputs_match_reference"] for m in report["models"]] == [True, True]
    assert report["pool_bytes"] == result.pool_size


@pytest.mark.parametrize("args, message", [
    (["--keep", "det:Identity"], "need --shared-pool"),
    (["--shared-pool", "--keep", "cls:Identity"], "runs last"),
    (["--shared-pool", "--keep", "det:nope"], "no output 'nope'"),
    (["--shared-pool", "--pool", "a:100000"], "--pool cannot be combined"),
])
def test_group_usage_errors(models_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                            args: list[str], message: str) -> None:
    from utvm.cli import main

    models = _two_ad_models(models_dir, tmp_path)
    rc = main(["compile", *map(str, models), *args, "-o", str(tmp_path / "g")])
    err = capsys.readouterr().err
    assert rc == 2 and message in err and err.count("\n") == 1, err
    assert not (tmp_path / "g").exists()


@pytest.mark.slow
def test_kws_and_ad_share_one_pool_on_an386(models_dir: Path, tmp_path: Path) -> None:
    import json

    r = subprocess.run([sys.executable, "-m", "utvm", "run", str(models_dir / "kws_ref_model.tflite"),
                        str(models_dir / "ad01_int8.tflite"), "--shared-pool", "--board", "mps2/an386", "--json"],
                       capture_output=True, text=True, cwd=tmp_path,
                       env={"PYTHONPATH": str(Path(__file__).parents[1] / "scripts"), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout.splitlines()[-1])
    assert [m["outputs_match_reference"] for m in report["models"]] == [True, True]
    assert report["pool_bytes"] == max(m["own_pool_bytes"] for m in report["models"])
    assert report["memory"]["ram_pool_bytes"] == report["pool_bytes"]  # one pool in the firmware
