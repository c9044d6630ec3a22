"""What a path check cannot see: hard links, and a folder swapped after the check.

A hard link inside the workspace to a file outside looks like any other file; a folder
replaced by a symlink between `resolve` and ``open`` leads wherever the link points.
The file tools open what they checked, name by name without following links, refuse
files with more than one name, and write through a temporary file and a rename.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from harness import Agent, Hooks, ScriptedModel, Workspace, say, tool_call

from .file_tools import SECRET, use

@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "root"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "guide.md").write_text("# Guide\n", encoding="utf-8")
    return Workspace(root)


@pytest.mark.parametrize("name", ["read_file", "write_file", "edit_file"])
def test_a_hard_link_to_an_outside_file_is_neither_read_nor_written(
        ws: Workspace, outside: Path, name: str) -> None:
    os.link(outside / "secret.txt", ws.root / "notes.txt")
    ok, output = use(ws, name, "notes.txt")
    assert not ok and "has 2 hard links" in output
    assert SECRET.strip() not in output
    assert (outside / "secret.txt").read_text(encoding="utf-8") == SECRET


def swap_after_check(ws: Workspace, monkeypatch: pytest.MonkeyPatch, folder: str,
                     target: Path) -> None:
    """Make ``folder`` a symlink to ``target`` right after the path check passes."""
    resolve = ws.resolve

    def then_swap(path: str, **kwargs: bool) -> Path:
        real = resolve(path, **kwargs)
        shutil.rmtree(ws.root / folder)
        (ws.root / folder).symlink_to(target, target_is_directory=True)
        return real

    monkeypatch.setattr(ws, "resolve", then_swap)


@pytest.mark.parametrize("name", ["read_file", "write_file", "edit_file"])
def test_a_folder_swapped_for_a_link_after_the_check_leads_nowhere(
        ws: Workspace, outside: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    (ws.root / "docs" / "secret.txt").write_text("top inside\n", encoding="utf-8")
    swap_after_check(ws, monkeypatch, "docs", outside)
    ok, output = use(ws, name, "docs/secret.txt")
    assert not ok and "changed while it was being used" in output
    assert SECRET.strip() not in output and str(ws.root) not in output
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text(encoding="utf-8") == SECRET


def test_a_folder_removed_after_the_check_gives_no_absolute_path(
        ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    resolve = ws.resolve

    def then_remove(path: str, **kwargs: bool) -> Path:
        real = resolve(path, **kwargs)
        shutil.rmtree(ws.root / "docs")
        return real

    monkeypatch.setattr(ws, "resolve", then_remove)
    ok, output = use(ws, "read_file", "docs/guide.md")
    assert not ok and output == ("Error: PathError: 'docs/guide.md' does not exist; "
                                 "list_files shows what does")


def test_a_write_replaces_the_file_whole_and_keeps_its_mode(ws: Workspace) -> None:
    script = ws.root / "run.sh"
    script.write_text("echo old\n", encoding="utf-8")
    script.chmod(0o750)
    before = script.stat().st_ino
    with open(script, encoding="utf-8") as reader:  # a reader holding the old file
        assert use(ws, "edit_file", "run.sh", old="old", new="new")[0]
        assert reader.read() == "echo old\n"  # the old file, whole: never half written
    assert script.read_text(encoding="utf-8") == "echo new\n"
    assert script.stat().st_ino != before and script.stat().st_mode & 0o777 == 0o750
    assert [p.name for p in ws.root.iterdir() if "harness-tmp" in p.name] == []


def test_edit_file_writes_by_its_own_path_not_through_write_file(ws: Workspace) -> None:
    ws.write_file = None  # edit_file does not call it: it has its own write path
    hooks, guarded = Hooks(), []
    hooks.on("pre_tool_use", lambda event: guarded.append((event.tool_name, event.writes))
             if getattr(event, "writes", None) else None)
    model = ScriptedModel([tool_call("edit_file", path="docs/guide.md", old="Guide", new="G"),
                           tool_call("write_file", path="docs/new.md", content="x"),
                           say("done")])
    Agent(model, ws.tools, hooks=hooks).run("edit")
    assert guarded == [("edit_file", "docs/guide.md"), ("write_file", "docs/new.md")]
    assert (ws.root / "docs" / "guide.md").read_text(encoding="utf-8") == "# G\n"
