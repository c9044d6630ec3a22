"""Calling the workspace's file tools as the loop does, for the containment tests.

`use` parses a call's JSON and executes the tool, so every refusal a model would meet is
met here too. `outside` is a folder next to the workspace holding a secret that no file
tool may read or change (conftest.py makes it a fixture for the whole folder).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness import Workspace

SECRET = "top secret\n"
PLANT = {"read_file": {}, "write_file": {"content": "planted"},
         "edit_file": {"old": "top", "new": "OWNED"}}  # a write tries to plant a file


def use(ws: Workspace, name: str, path: str, **arguments: str) -> tuple[bool, str]:
    """Call a file tool on ``path`` the way the loop does; ``arguments`` replace `PLANT`'s."""
    t = next(t for t in ws.tools if t.name == name)
    result = t.execute(t.parse(json.dumps({"path": path, **PLANT[name], **arguments})))
    return result.ok, result.output


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text(SECRET, encoding="utf-8")
    return folder
