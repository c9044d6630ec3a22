"""The course's shape: lessons 00-14 without gaps, executed, clean, each with exercises."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
NOTEBOOKS = sorted(LESSONS.glob("[0-9][0-9]_*.ipynb"))
TEMPLATE = ("## Goals", "## The idea", "## Build it small", "## The harness version",
            "## Run it offline", "## Run it live", "## What changed in harness/")


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def source(cell: dict) -> str:
    return "".join(cell["source"])


def test_lessons_are_numbered_from_00_without_gaps():
    assert [p.name[:2] for p in NOTEBOOKS] == [f"{n:02d}" for n in range(len(NOTEBOOKS))]
    assert len(NOTEBOOKS) >= 16


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_lesson_title_and_next_link_name_the_right_lessons(path):
    """The title carries the lesson's number; the last cell links to the next lesson by
    its file name and its title (the last lesson links nowhere)."""
    text = [source(c) for c in cells(path)]
    assert text[0].startswith(f"# {path.name[:2]} · ")
    later = NOTEBOOKS[NOTEBOOKS.index(path) + 1:]
    links = re.findall(r"Next: \[(\d\d) · ([^\]]+)\]\(([^)]+)\)", text[-1])
    if not later:
        assert links == []
        return
    title = source(cells(later[0])[0]).splitlines()[0].removeprefix(f"# {later[0].name[:2]} · ")
    assert links == [(later[0].name[:2], title, later[0].name)]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_lesson_is_committed_executed_in_order_without_errors(path):
    code = [c for c in cells(path) if c["cell_type"] == "code" and source(c).strip()]
    counts = [c["execution_count"] for c in code]
    assert None not in counts, "a code cell was not executed: run scripts/execute_notebooks.py"
    assert counts == sorted(counts), "cells were executed out of order"
    errors = [o for c in code for o in c["outputs"] if o["output_type"] == "error"]
    assert errors == []
    streams = [o for c in code for o in c["outputs"] if o.get("name") == "stderr"]
    assert streams == [], "a cell wrote to stderr (a warning or a traceback)"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_lesson_follows_the_template(path):
    text = "\n".join(source(c) for c in cells(path) if c["cell_type"] == "markdown")
    headings = TEMPLATE[:1] if path.name.startswith("00") else TEMPLATE
    missing = [h for h in headings if h not in text]
    assert missing == []


@pytest.mark.parametrize("path", NOTEBOOKS[1:], ids=lambda p: p.stem)
def test_lesson_has_at_least_two_exercises_with_checks(path):
    number = path.name[:2]
    checks = {name for c in cells(path) if c["cell_type"] == "code"
              for name in re.findall(r"\b(check_\w+)\(", source(c))}
    module = (LESSONS / "exercises" / f"l{number}.py").read_text(encoding="utf-8")
    defined = set(re.findall(r"^def (check_\w+)\(", module, re.M))
    assert len(checks & defined) >= 2, f"lesson {number} calls checks {sorted(checks)}"
    assert (LESSONS / "solutions" / f"l{number}.py").exists()
    assert (LESSONS.parent / "tests" / f"test_exercises_l{number}.py").exists()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_lesson_asks_for_no_input_install_or_key(path):
    code = "\n".join(source(c) for c in cells(path) if c["cell_type"] == "code")
    assert not re.search(r"^\s*[%!]pip\b", code, re.M)
    assert not re.search(r"\binput\(", code)
    assert not re.search(r"sk-[A-Za-z0-9_-]{16,}", json.dumps(cells(path)))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_lesson_stores_no_widget_state_or_local_paths(path):
    data = json.loads(path.read_text(encoding="utf-8"))
    assert "widgets" not in data["metadata"]
    outputs = json.dumps([c.get("outputs", []) for c in data["cells"]])
    assert not re.search(r"/(?:root|home|tmp|work)/[\w.-]+", outputs)


DIAGRAM_WIDTH = 84  # JupyterLab at 1280 px with the file browser open wraps a wider line


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_diagrams_fit_the_notebook_width(path):
    """A wrapped line breaks a diagram apart (the learner-eye pass found four that did)."""
    blocks = [block for c in cells(path) if c["cell_type"] == "markdown"
              for block in re.findall(r"```[^\n]*\n(.*?)```", source(c), re.S)]
    wide = [line for block in blocks for line in block.splitlines()
            if len(line) > DIAGRAM_WIDTH]
    assert wide == []


@pytest.mark.parametrize("path", NOTEBOOKS[:-1], ids=lambda p: p.stem)
def test_only_the_last_lesson_says_it_is_the_last(path):
    text = " ".join(" ".join(source(c).split()) for c in cells(path)
                    if c["cell_type"] == "markdown")
    assert not re.search(r"\b(?:this|the) last lesson\b", text, re.I)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_lesson_fits_one_sitting(path):
    """At most 60 cells: the old lessons 07 (73) and 08 (65, eight topics) took two."""
    assert len(cells(path)) <= 60
