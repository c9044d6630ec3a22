"""Protected folders: hidden from listings was not enough, they must be out of reach.

``.git`` was hidden from `list_files` but readable and writable: credentials read from
``.git/config``, ``core.fsmonitor`` planted, and the person's next ``git status`` ran the
model's command. Version control, virtual environments and ``.env`` files are refused
in path resolution, for every file tool, however the path is spelled.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import Workspace

from .file_tools import use as use_tool

CONFIG = "[remote]\n\turl = https://user:token@git.example/repo\n"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "root"
    files = {".git/config": CONFIG, ".git/hooks/pre-commit": "[remote]\n",
             "docs/.git/config": CONFIG, ".hg/hgrc": "[remote]\n",
             ".venv/pyvenv.cfg": "home = /usr\n", ".venv/bin/activate": "[remote]\n",
             "env312/pyvenv.cfg": "home = /usr\n", "env312/bin/python": "[remote]\n",
             ".env": "[remote]\nOPENAI_API_KEY=sk-from-dotenv\n",
             ".env.local": "[remote]\nOPENAI_API_KEY=sk-from-dotenv\n",
             "docs/guide.md": "# Guide\n"}
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    return Workspace(root)


GIT_PLANT = {"read_file": {}, "write_file": {"content": "[core]\n\tfsmonitor = evil\n"},
             "edit_file": {"old": "[remote]", "new": "[core] fsmonitor=x"}}


def use(ws: Workspace, name: str, path: str) -> tuple[bool, str]:
    """A file tool call that would plant git's fsmonitor (the attack the issue found)."""
    return use_tool(ws, name, path, **GIT_PLANT[name])


@pytest.mark.parametrize("path", [
    ".git/config", ".git/hooks/pre-commit", "docs/../.git/config", "./.git/config",
    ".venv/bin/activate", "env312/bin/python", ".env", ".env.local", ".hg/hgrc",
    "docs/.git/config", ".git/new-hook", ".GIT/config",
])
@pytest.mark.parametrize("name", ["read_file", "write_file", "edit_file"])
def test_every_file_tool_refuses_a_protected_path(ws: Workspace, name: str, path: str) -> None:
    before = {p: p.read_bytes() for p in ws.root.rglob("*") if p.is_file()}
    ok, output = use(ws, name, path)
    assert not ok
    missing = name != "write_file" and path in (".git/new-hook", ".GIT/config")
    assert ("does not exist" if missing else "is protected") in output, output
    assert "token" not in output and "sk-from-dotenv" not in output
    assert {p: p.read_bytes() for p in ws.root.rglob("*") if p.is_file()} == before


def test_a_link_to_a_protected_folder_is_refused(ws: Workspace) -> None:
    (ws.root / "notes").symlink_to(".git", target_is_directory=True)
    ok, output = use(ws, "read_file", "notes/config")
    assert not ok and "inside '.git', which is protected" in output


def test_listings_and_search_never_show_protected_files(ws: Workspace) -> None:
    listed = ws.list_files("**/*")
    assert listed == "docs/guide.md"
    assert ws.list_files(".git/*") == "No files match '.git/*'."
    assert "sk-from-dotenv" not in ws.search_docs("OPENAI_API_KEY sk from dotenv")


def test_ordinary_dot_files_are_still_usable(ws: Workspace) -> None:
    assert use(ws, "write_file", ".gitignore") == (True, "Wrote 25 characters to .gitignore")
    assert use(ws, "write_file", "docs/.environment.md")[0]
