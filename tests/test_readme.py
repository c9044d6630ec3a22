"""The README's Python example works when copied as it is."""

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
