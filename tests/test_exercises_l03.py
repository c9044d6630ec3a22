"""Lesson 03's exercise checks accept the reference solutions and reject plausible mistakes."""

from __future__ import annotations

import posixpath
import sys
from pathlib import Path

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
sys.path.insert(0, str(LESSONS))

from exercises.l03 import check_notes_only, check_research_permissions  # noqa: E402
from solutions import l03  # noqa: E402

from harness import Permissions  # noqa: E402


def test_notes_only_check_accepts_the_reference_hook():
    assert check_notes_only(l03.notes_only) is True


def test_notes_only_check_rejects_a_prefix_test_that_lets_dot_dot_through():
    def prefix_only(event):
        if event.tool_name == "write_file" and not event.arguments["path"].startswith("notes/"):
            return "Blocked: only notes/."
        return None

    assert check_notes_only(prefix_only) is False


def test_notes_only_check_rejects_a_prefix_without_the_slash():
    def no_slash(event):
        path = posixpath.normpath(event.arguments.get("path", ""))
        if event.tool_name == "write_file" and not path.startswith("notes"):
            return "no"
        return None

    assert check_notes_only(no_slash) is False


def test_notes_only_check_rejects_a_hook_that_blocks_every_tool_outside_notes():
    def blocks_reads_too(event):
        path = event.arguments.get("path", "")
        return None if l03._in_notes(path) else "Blocked: only notes/."

    assert check_notes_only(blocks_reads_too) is False


def test_notes_only_check_reports_the_unedited_stub_without_raising(capsys):
    def stub(event):
        raise NotImplementedError

    assert check_notes_only(stub) is False
    assert "not done" in capsys.readouterr().out


def test_research_permissions_check_accepts_the_reference_table():
    assert check_research_permissions(l03.research_permissions) is True


def test_research_permissions_check_rejects_an_approver_that_says_yes_to_everything():
    def approves_all() -> Permissions:
        return Permissions({"read_file": "allow", "list_files": "allow", "search_docs": "allow",
                            "write_file": "ask", "edit_file": "ask", "run_shell": "deny"},
                           approve=lambda name, args: True)

    assert check_research_permissions(approves_all) is False


def test_research_permissions_check_rejects_a_table_that_allows_unlisted_tools():
    def default_allow() -> Permissions:
        good = l03.research_permissions()
        return Permissions(good.rules, default="allow", approve=good.approve)

    assert check_research_permissions(default_allow) is False
