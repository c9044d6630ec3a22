"""Lesson 03's exercise checks accept the reference solutions and reject plausible mistakes."""

from __future__ import annotations

import posixpath
import re
import sys
from pathlib import Path

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
sys.path.insert(0, str(LESSONS))

from exercises.l03 import check_notes_only, check_research_permissions  # noqa: E402
from solutions import l03  # noqa: E402

from harness import Permissions  # noqa: E402


def test_notes_only_check_accepts_the_reference_hook():
    assert check_notes_only(l03.notes_only) is True


def test_notes_only_check_rejects_a_hook_that_guards_only_write_file(capsys):
    def write_file_only(event):
        if event.tool_name == "write_file" and not l03._in_notes(event.arguments["path"]):
            return "Blocked: only notes/."
        return None

    assert check_notes_only(write_file_only) is False
    assert "edit_file docs/policies/returns.md ran" in capsys.readouterr().out


def test_notes_only_check_rejects_a_hook_that_lists_the_workspace_writers_by_name(capsys):
    def known_writers(event):
        if event.tool_name in ("write_file", "edit_file"):
            if not l03._in_notes(event.arguments["path"]):
                return "Blocked: only notes/."
        return None

    assert check_notes_only(known_writers) is False
    assert "save_draft drafts/reply.md ran" in capsys.readouterr().out


def test_notes_only_check_rejects_a_prefix_test_that_lets_dot_dot_through():
    def prefix_only(event):
        path = event.get("writes")
        if path is not None and not path.startswith("notes/"):
            return "Blocked: only notes/."
        return None

    assert check_notes_only(prefix_only) is False


def test_notes_only_check_rejects_a_prefix_without_the_slash():
    def no_slash(event):
        path = event.get("writes")
        if path is not None and not posixpath.normpath(path).startswith("notes"):
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


def _table(approve) -> Permissions:
    return Permissions({"read_file": "allow", "list_files": "allow", "search_docs": "allow",
                        "write_file": "ask", "edit_file": "ask", "run_shell": "deny"},
                       approve=approve)


def test_research_permissions_check_rejects_an_approver_that_answers_yes(capsys):
    def says_yes() -> Permissions:
        return _table(lambda name, args: "yes" if l03._in_notes(args["path"]) else "no")

    assert check_research_permissions(says_yes) is False
    assert "Only True approves" in capsys.readouterr().out


def test_research_permissions_check_rejects_an_approver_that_answers_one(capsys):
    def says_one() -> Permissions:
        return _table(lambda name, args: int(l03._in_notes(args["path"])))

    assert check_research_permissions(says_one) is False
    assert "Only True approves" in capsys.readouterr().out


def test_research_permissions_check_rejects_an_approver_that_says_yes_to_everything():
    def approves_all() -> Permissions:
        return _table(lambda name, args: True)

    assert check_research_permissions(approves_all) is False


def test_research_permissions_check_rejects_an_approver_that_lets_dot_dot_through(capsys):
    def prefix_only() -> Permissions:
        return _table(lambda name, args: args.get("path", "").startswith("notes/"))

    assert check_research_permissions(prefix_only) is False
    assert "notes/../src/hack.py: should be refused" in capsys.readouterr().out


def test_research_permissions_check_rejects_a_table_that_allows_unlisted_tools():
    def default_allow() -> Permissions:
        good = l03.research_permissions()
        return Permissions(good.rules, default="allow", approve=good.approve)

    assert check_research_permissions(default_allow) is False


def test_research_permissions_check_rejects_an_approver_without_the_slash(capsys):
    def no_slash() -> Permissions:
        return _table(lambda name, args: posixpath.normpath(args["path"]).startswith("notes"))

    assert check_research_permissions(no_slash) is False
    assert "notes_backup/x.md: should be refused" in capsys.readouterr().out


def test_research_permissions_check_rejects_an_approver_that_looks_for_notes_anywhere(capsys):
    def anywhere() -> Permissions:
        return _table(lambda name, args: "notes/" in posixpath.normpath(args["path"]))

    assert check_research_permissions(anywhere) is False
    assert "src/notes/x.md: should be refused" in capsys.readouterr().out


def test_research_permissions_check_rejects_an_approver_that_refuses_dot_slash_notes(capsys):
    def no_normalising() -> Permissions:
        return _table(lambda name, args: args["path"].startswith("notes/")
                      and ".." not in args["path"])

    assert check_research_permissions(no_normalising) is False
    assert re.search(r"write \./notes/\w+\.md: should run", capsys.readouterr().out)


def test_notes_only_check_rejects_a_hook_that_looks_for_notes_anywhere(capsys):
    def anywhere(event):
        path = event.get("writes")
        if path is None or "notes/" in posixpath.normpath(path):
            return None
        return "Blocked: write only inside notes/."

    assert check_notes_only(anywhere) is False
    assert "src/notes/x.md ran" in capsys.readouterr().out


def test_notes_only_check_rejects_a_hook_that_blocks_dot_slash_notes(capsys):
    def no_normalising(event):
        path = event.get("writes")
        if path is None or (path.startswith("notes/") and ".." not in path):
            return None
        return "Blocked: write only inside notes/."

    assert check_notes_only(no_normalising) is False
    assert "./notes/dot.md is inside notes/ but did not run" in capsys.readouterr().out


def test_notes_only_hint_for_a_hook_that_blocks_some_writes_says_it_let_this_one_through(capsys):
    def no_slash(event):
        path = event.get("writes")
        if path is not None and not posixpath.normpath(path).startswith("notes"):
            return "Blocked: only notes/."
        return None

    assert check_notes_only(no_slash) is False
    out = capsys.readouterr().out
    assert "Your hook returned nothing for this call" in out
    assert "To block a call, return a non-empty string" not in out  # it knew how; not here


def test_notes_only_check_rejects_a_hook_that_knows_the_checks_writer_by_name(capsys):
    def known_names(event):
        if event.tool_name in ("write_file", "edit_file", "save_draft"):
            path = event.arguments.get("path") or event.arguments.get("filename")
            if not l03._in_notes(path):
                return "Blocked: only notes/."
        return None

    assert check_notes_only(known_names) is False
    assert "event.get('writes') finds it" in capsys.readouterr().out


def test_research_permissions_check_rejects_an_approver_that_knows_the_checks_paths():
    def known_paths() -> Permissions:
        return _table(lambda name, args: args["path"] in ("notes/summary.md",
                                                         "./notes/dot.md"))

    assert check_research_permissions(known_paths) is False
