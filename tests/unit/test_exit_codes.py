"""Exit codes are chosen in one place: ``ExitCode`` members and the functions of ``fabline.results``."""

from __future__ import annotations

import ast
from pathlib import Path

from fabline.results import ExitCode

SRC = Path(__file__).resolve().parents[2] / "src" / "fabline"
DOC = Path(__file__).resolve().parents[2] / "docs" / "exit-codes.md"


def _exits_with_a_number(tree: ast.AST) -> list[int]:
    """Lines of ``sys.exit(N)`` / ``os._exit(N)``-like calls and ``click.exceptions.Exit(N)`` with a literal N."""
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        name = ast.unparse(node.func)
        if name.endswith(("sys.exit", "Exit", "ctx.exit")) and isinstance(node.args[0], ast.Constant):
            lines.append(node.lineno)
    return lines


def test_no_command_exits_with_a_bare_number() -> None:
    found = {
        str(path.relative_to(SRC)): lines
        for path in sorted(SRC.rglob("*.py"))
        if (lines := _exits_with_a_number(ast.parse(path.read_text("utf-8"))))
    }
    assert found == {}, found


def test_every_exit_code_is_documented() -> None:
    doc = DOC.read_text("utf-8")
    for code in ExitCode:
        assert f"| {code.value} |" in doc, code
