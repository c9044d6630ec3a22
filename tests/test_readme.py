"""The README's Python examples work when copied as they are; its tables agree with the package."""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_readme_python_example_prints_what_its_comment_says(tmp_path, monkeypatch):
    blocks = python_blocks()
    assert blocks, "README.md has no ```python block"
    monkeypatch.chdir(tmp_path)  # a block that saves a file (paused.json) saves it there
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
    """The body rows of the markdown tables in ``text`` (each table's header left out),
    each as its stripped cells."""
    lines = [line for line in text.splitlines() if line.startswith("|")]
    rows = []
    for i, line in enumerate(lines):
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        header = i + 1 < len(lines) and set(lines[i + 1]) <= set("|-: ")
        if not header and not set("".join(cells)) <= set("-: "):
            rows.append(cells)
    return rows


def core_events() -> dict[str, str]:
    """`harness.EVENTS` before any extension registered its own (a fresh interpreter)."""
    code = "import json, harness; print(json.dumps(harness.EVENTS))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout)


def registered() -> list:
    from harness.extend import REGISTERED, discover

    discover()
    return list(REGISTERED.values())


def test_readme_events_tables_are_the_cores_events_and_each_extensions():
    rows = table_rows(section("Events"))
    core = {row[0].strip("`"): row[1] for row in rows if len(row) == 2}
    theirs = {row[0].strip("`"): (row[1], row[2].strip("`")) for row in rows if len(row) == 3}
    assert core == core_events()
    assert theirs == {name: (fields, e.name) for e in registered()
                      for name, fields in e.events.items()}


def test_readme_settings_tables_name_every_setting_with_its_default():
    from dataclasses import MISSING, fields

    from harness import Settings

    rows = table_rows(section("Settings"))
    core = {row[0].strip("`"): row[1].strip("`") for row in rows if len(row) == 3}
    theirs = {row[0].strip("`"): (row[1].strip("`"), row[2].strip("`")) for row in rows
              if len(row) == 4}
    assert core == {f.name: repr(f.default) for f in fields(Settings) if f.default is not MISSING}
    assert theirs == {f.name: (repr(f.default), e.name) for e in registered() if e.settings
                      for f in fields(e.settings)}


def test_readme_names_the_six_fixed_points_of_a_mechanism():
    from harness import Mechanism

    text = section("Your own mechanism")
    points = ("prompt", "tools", "before_request", "tool_choice", "after_call", "after_round",
              "on_answer", "pinned")
    assert all(callable(getattr(Mechanism, p)) and f"`{p}(" in text for p in points)
