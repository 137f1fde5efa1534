"""The operator registry: one module per operator, the table `utvm ops` prints and docs/OPERATORS.md."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

from tflite_builder import ModelBuilder
from utvm.ops import all_ops, onnx_ops, tflite_ops
from utvm.ops.table import as_markdown

ROOT = Path(__file__).resolve().parents[1]


def test_operators_md_is_generated_from_the_registry() -> None:
    doc = (ROOT / "docs" / "OPERATORS.md").read_text()
    assert doc == as_markdown(), "docs/OPERATORS.md is stale: python -m utvm ops --markdown > docs/OPERATORS.md"


def test_every_operator_has_a_generic_kernel_or_is_an_alias() -> None:
    for kind, opdef in all_ops().items():
        if opdef.alias:
            assert not opdef.variants, kind
            continue
        assert opdef.variants, f"{kind} has no kernel"
        assert opdef.variants[-1].cpus == "", f"{kind}: the last variant must be the generic one"
        assert len({v.name for v in opdef.variants}) == len(opdef.variants), kind
        assert opdef.reference, f"{kind} does not say which reference it matches"


def test_source_operators_map_to_registered_kinds() -> None:
    assert tflite_ops() and onnx_ops()
    for src in [*tflite_ops().values(), *onnx_ops().values()]:
        assert src.types, src.name


def test_ops_command_json() -> None:
    env_path = str(ROOT / "scripts")
    out = subprocess.run([sys.executable, "-m", "utvm", "ops", "--json"], capture_output=True, text=True,
                         check=True, env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"}).stdout
    table = json.loads(out)
    assert table["counts"]["tflite"] == len(tflite_ops())
    assert table["counts"]["onnx"] == len(onnx_ops())
    names = {row["name"] for row in table["tflite"]}
    assert {"CONV_2D", "FULLY_CONNECTED", "SOFTMAX"} <= names


def test_unsupported_operator_error_points_at_the_table(tmp_path: Path) -> None:
    m = ModelBuilder()
    x = m.add_tensor("x", (1, 4), "float32")
    y = m.add_tensor("y", (1, 4), "float32")
    m.add_operator("CUSTOM:Frobnicate", [x], [y])
    model = tmp_path / "custom.tflite"
    model.write_bytes(m.finish([x], [y]))
    proc = subprocess.run([sys.executable, "-m", "utvm", "compile", str(model), "-o", str(tmp_path / "out")],
                          capture_output=True, text=True, env={"PYTHONPATH": str(ROOT / "scripts"), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "CUSTOM:Frobnicate" in lines[0] and "utvm ops" in lines[0], proc.stderr
    assert not (tmp_path / "out").exists()


def _kind_names(source: str, kinds: set[str]) -> list[int]:
    """Lines of ``source`` that name an operator kind: a string (or tuple of strings) compared
    with an ``.kind``, or given as ``Operator``'s kind."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if not any(isinstance(s, ast.Attribute) and s.attr == "kind" for s in sides):
                continue
            named = [c for s in sides for c in ([s] if isinstance(s, ast.Constant) else getattr(s, "elts", []))]
            if any(isinstance(c, ast.Constant) and c.value in kinds for c in named):
                lines.append(node.lineno)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Operator" and node.args \
                and isinstance(node.args[0], ast.Constant) and node.args[0].value in kinds:
            lines.append(node.lineno)
    return lines


def test_no_stage_names_an_operator_kind() -> None:
    """What a stage needs to know of an operator is declared on its OpDef (channels, patch_stage,
    alias, rearranges, output_step, weights, ...); the operators a stage creates are built by
    their modules (reshape.view, transpose.permute, strided_slice.window, concatenation.join)."""
    kinds = set(all_ops())
    package = ROOT / "scripts" / "utvm"
    found = [f"{path.relative_to(package)}:{line}" for path in sorted(package.rglob("*.py"))
             if "ops" not in path.relative_to(package).parts[:1]
             for line in _kind_names(path.read_text(), kinds)]
    assert not found, f"operator kinds named outside utvm/ops: {found}"
    assert _kind_names('if op.kind in ("reshape", "x"): g.ops.append(Operator("add", [], []))', kinds) == [1, 1]
