"""The README's Python examples work when copied as they are; its tables agree with the package."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_readme_python_example_prints_what_its_comment_says():
    blocks = python_blocks()
    assert blocks, "README.md has no ```python block"
    for block in blocks:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, "README.md", "exec"), {})
        for line in re.findall(r"print\(.*\)\s*#\s*(.+)", block):
            assert line.strip() in out.getvalue()


def section(title: str) -> str:
    text = README.read_text(encoding="utf-8")
    return text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def table_rows(text: str) -> list[list[str]]:
    """The body rows of the markdown tables in ``text``, each as its stripped cells."""
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in text.splitlines() if line.startswith("|")]
    return [row for row in rows if not set("".join(row)) <= set("-")][1:]


def test_readme_events_table_is_harness_events():
    from harness import EVENTS

    rows = table_rows(section("Events"))
    assert {name.strip("`"): fields for name, fields in rows} == EVENTS


def test_readme_settings_table_names_every_setting_with_its_default():
    from dataclasses import MISSING, fields

    from harness import Settings

    rows = {name.strip("`"): default.strip("`") for name, default, _ in
            table_rows(section("Settings"))}
    assert rows == {f.name: repr(f.default) for f in fields(Settings) if f.default is not MISSING}


def test_readme_names_the_six_fixed_points_of_a_mechanism():
    from harness import Mechanism

    text = section("Your own mechanism")
    points = ("prompt", "tools", "before_request", "tool_choice", "after_call", "after_round",
              "on_answer")
    assert all(callable(getattr(Mechanism, p)) and f"`{p}(" in text for p in points)
