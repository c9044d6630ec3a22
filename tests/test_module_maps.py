"""The maps of the package (README's and lesson 00's) and each lesson's "What changed in
harness/" table name the modules as they are: every module on a map, no module that is
gone (a module that moved left its old name behind twice before this test)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "harness"
LESSONS = sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))
NAME = re.compile(r"`([\w/]+\.py)`")


def modules() -> set[str]:
    """Every module, as a path inside harness/ (the learner's sample project is not one)."""
    return {p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")
            if "sample_workspace" not in p.parts and "__pycache__" not in p.parts}


def on_a_map() -> set[str]:
    """What a map must name: every module but a sub-package's __init__.py (it only says
    what the sub-package exports)."""
    return {m for m in modules() if "/" not in m or not m.endswith("/__init__.py")}


def section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start:end if end != -1 else None]


def readme_map() -> set[str]:
    """README's two tables: core files by name; a sub-package's row names its folder
    (`harness/live/`) and then its modules by file name."""
    named = set()
    for row in section((ROOT / "README.md").read_text(encoding="utf-8"),
                       "## The harness, module by module").splitlines():
        if not row.startswith("| `"):
            continue
        first, *rest = row.split(" | ")
        folder = re.fullmatch(r"\| `harness/(\w+)/`", first)
        prefix = f"{folder.group(1)}/" if folder else ""
        cells = " | ".join(rest[:1]) if folder else first
        named |= {prefix + name for name in NAME.findall(cells)}
    return named


def lesson_cells(path: Path) -> list[str]:
    return ["".join(c["source"]) for c in json.loads(path.read_text(encoding="utf-8"))["cells"]
            if c["cell_type"] == "markdown"]


def lesson00_map() -> set[str]:
    text = "\n".join(lesson_cells(LESSONS[0]))
    return {name for row in section(text, "## What is in harness/").splitlines()
            if row.startswith("| `") for name in NAME.findall(row.split(" | ")[0])}


@pytest.mark.parametrize("where, named", [("README.md", readme_map),
                                          ("lesson 00", lesson00_map)])
def test_the_module_map_names_every_module_and_no_other(where, named):
    found = named()
    assert sorted(found - modules()) == [], f"{where} names modules that do not exist"
    assert sorted(on_a_map() - found) == [], f"{where} leaves these modules out"


@pytest.mark.parametrize("path", LESSONS[1:], ids=lambda p: p.stem)
def test_what_changed_names_only_modules_that_exist(path):
    [table] = [c for c in lesson_cells(path) if c.startswith("## What changed in harness/")]
    rows = [row for row in table.splitlines() if row.startswith("| `")]
    named = {name for row in rows for name in NAME.findall(row.split(" | ")[0])}
    assert named, "the table names no module"
    assert sorted(named - modules()) == []
