"""Workspace tools: what they do, what they refuse, and that nothing escapes the root."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from harness import Agent, ScriptedModel, Workspace, say, tool_call
from harness.control import RunControl
from harness.workspace import PathError, TooLargeError
from harness.workspace.folder import SAMPLE
from tests.reliability.procs import none_left_in


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "root"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "guide.md").write_text("# Guide\n\nHello, world.\n", encoding="utf-8")
    return Workspace(root, shell_timeout=5, max_file_bytes=1000, max_output=2000)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("top secret\n", encoding="utf-8")
    return folder


def call(ws: Workspace, name: str, **arguments):
    """Run one tool the way the loop does: validate the JSON arguments, then execute."""
    t = next(t for t in ws.tools if t.name == name)
    return t.execute(t.parse(json.dumps(arguments)))


# -- read, write, edit, list --------------------------------------------------------

def test_read_file_returns_the_text(ws: Workspace) -> None:
    assert ws.read_file("docs/guide.md") == "# Guide\n\nHello, world.\n"


def test_write_file_creates_parent_folders_inside_the_root(ws: Workspace) -> None:
    assert ws.write_file("notes/day1/a.md", "héllo") == "Wrote 5 characters to notes/day1/a.md"
    assert (ws.root / "notes" / "day1" / "a.md").read_text(encoding="utf-8") == "héllo"


def test_edit_file_replaces_the_unique_match(ws: Workspace) -> None:
    replaced = ws.edit_file("docs/guide.md", "world", "team")
    assert replaced == "Replaced 1 occurrence in docs/guide.md"
    assert ws.read_file("docs/guide.md") == "# Guide\n\nHello, team.\n"


def test_edit_file_without_a_match_says_to_copy_the_exact_text(ws: Workspace) -> None:
    result = call(ws, "edit_file", path="docs/guide.md", old="planet", new="x")
    assert not result.ok
    assert result.output.startswith("Error: EditError: 'old' was not found in docs/guide.md")


def test_edit_file_with_two_matches_changes_nothing(ws: Workspace) -> None:
    result = call(ws, "edit_file", path="docs/guide.md", old="l", new="L")
    assert "occurs 3 times" in result.output and "exactly once" in result.output
    assert ws.read_file("docs/guide.md") == "# Guide\n\nHello, world.\n"


def test_list_files_is_sorted_relative_and_files_only(ws: Workspace) -> None:
    ws.write_file("b.txt", "b")
    ws.write_file("a/z.py", "z")
    assert ws.list_files() == "a/z.py\nb.txt\ndocs/guide.md"
    assert ws.list_files("**/*.md") == "docs/guide.md"


def test_list_files_caps_the_count_with_a_marker(ws: Workspace) -> None:
    for i in range(205):
        (ws.root / f"f{i:03}.txt").touch()
    listed = ws.list_files("*.txt").splitlines()
    assert len(listed) == 201
    assert listed[-1] == "[... 5 more files; use a narrower pattern]"


def test_symlinks_inside_the_root_are_followed(ws: Workspace) -> None:
    (ws.root / "alias.md").symlink_to(ws.root / "docs" / "guide.md")
    assert ws.read_file("alias.md").startswith("# Guide")


# -- confinement ----------------------------------------------------------------------

@pytest.mark.parametrize("path, reason", [
    ("../outside/secret.txt", "'../outside/secret.txt' leads outside the workspace"),
    ("docs/../../outside/secret.txt", "leads outside the workspace"),
    ("/etc/passwd", "'/etc/passwd' is absolute"),
    ("missing.md", "'missing.md' does not exist"),
    ("docs", "'docs' is a directory"),
])
def test_read_file_refuses_paths_that_are_not_files_in_the_root(
        ws: Workspace, outside: Path, path: str, reason: str) -> None:
    result = call(ws, "read_file", path=path)
    assert not result.ok
    assert result.output.startswith("Error: PathError: ")
    assert reason in result.output


def test_symlinked_file_out_of_the_root_is_refused(ws: Workspace, outside: Path) -> None:
    (ws.root / "link.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(PathError, match=r"'link\.txt' is a symlink that leads outside"):
        ws.read_file("link.txt")


def test_write_through_a_symlinked_dir_out_of_the_root_writes_nothing(
        ws: Workspace, outside: Path) -> None:
    (ws.root / "out").symlink_to(outside, target_is_directory=True)
    with pytest.raises(PathError, match=r"'out/new\.txt' is a symlink that leads outside"):
        ws.write_file("out/new.txt", "escaped")
    with pytest.raises(PathError):
        ws.write_file("../outside/new.txt", "escaped")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


def test_list_files_never_shows_files_behind_a_symlinked_dir(
        ws: Workspace, outside: Path) -> None:
    (ws.root / "out").symlink_to(outside, target_is_directory=True)
    (ws.root / "secret-link.txt").symlink_to(outside / "secret.txt")
    assert "secret" not in ws.list_files()
    assert ws.list_files("out/*") == "No files match 'out/*'."
    with pytest.raises(PathError, match="must stay inside the workspace"):
        ws.list_files("../outside/*")


def test_device_file_behind_a_symlink_is_refused(ws: Workspace) -> None:
    (ws.root / "null").symlink_to("/dev/null")
    with pytest.raises(PathError, match="'null' is a symlink that leads outside"):
        ws.read_file("null")


def test_fifo_is_refused_without_blocking(ws: Workspace) -> None:
    os.mkfifo(ws.root / "pipe")
    with pytest.raises(PathError, match="'pipe' is not a regular file"):
        ws.read_file("pipe")
    with pytest.raises(PathError, match="'pipe' is not a regular file"):
        ws.write_file("pipe", "x")


def test_oversize_file_is_refused_with_its_size(ws: Workspace) -> None:
    (ws.root / "big.txt").write_text("x" * 1500, encoding="utf-8")
    with pytest.raises(TooLargeError, match=r"'big\.txt' is 1,500 bytes; the limit is 1,000"):
        ws.read_file("big.txt")


def test_oversize_content_is_not_written(ws: Workspace) -> None:
    with pytest.raises(TooLargeError, match="content is 1,001 bytes"):
        ws.write_file("big.txt", "x" * 1001)
    assert not (ws.root / "big.txt").exists()


@pytest.mark.parametrize("data, reason", [
    (b"PK\x03\x04\x00\x00binary", "'blob.bin' is a binary file (it contains NUL bytes)"),
    ("café".encode("latin-1"), "'blob.bin' is not UTF-8 text"),
])
def test_binary_file_is_refused(ws: Workspace, data: bytes, reason: str) -> None:
    (ws.root / "blob.bin").write_bytes(data)
    assert call(ws, "read_file", path="blob.bin").output == f"Error: NotTextError: {reason}"


# -- search_docs ----------------------------------------------------------------------

def test_search_docs_cites_the_returns_policy_for_opened_headphones(tmp_path: Path) -> None:
    ws = Workspace.sample(tmp_path / "shop")
    found = ws.search_docs("Can I return opened headphones?")
    first = found.split("\n\n")[0]
    assert first.startswith("docs/policies/returns.md:")
    assert "can be returned within 14 days" in first
    line = int(first.splitlines()[0].rsplit(":", 1)[1])
    source = (ws.root / "docs/policies/returns.md").read_text(encoding="utf-8").splitlines()
    assert source[line - 1] == first.splitlines()[1]  # the cited line is where the text is


def test_search_docs_says_clearly_when_nothing_matches(tmp_path: Path) -> None:
    ws = Workspace.sample(tmp_path / "shop")
    found = ws.search_docs("xylophone zeppelin")
    assert found.startswith("No passages matched 'xylophone zeppelin'")


def test_search_docs_orders_equal_scores_by_path_then_line(ws: Workspace) -> None:
    ws.write_file("b.md", "refund rules\n\nrefund again\n")
    ws.write_file("a.txt", "refund here\n")
    heads = [p.splitlines()[0] for p in ws.search_docs("refund").split("\n\n")]
    assert heads == ["a.txt:1", "b.md:1", "b.md:3"]


def test_search_docs_finds_chinese_text_by_character_pairs(ws: Workspace) -> None:
    ws.write_file("zh.md", "# 退货政策\n\n拆封耳机只有在故障时才能退货。\n")
    assert ws.search_docs("拆封耳机可以退货吗").startswith("zh.md:1\n# 退货政策\n拆封耳机")


# -- run_shell ------------------------------------------------------------------------

def test_run_shell_reports_status_stdout_and_stderr(ws: Workspace) -> None:
    result = call(ws, "run_shell", command="ls docs; echo oops >&2; exit 3")
    assert not result.ok
    assert result.output == "exit status 3\nstdout:\nguide.md\nstderr:\noops"


def test_run_shell_caps_huge_output_without_deadlock(ws: Workspace) -> None:
    result = ws.run_shell("head -c 3000000 /dev/zero | tr '\\0' a; echo; echo END")
    assert result.ok
    assert len(result.output) <= 2000
    assert "bytes cut" in result.output and result.output.endswith("END")


def test_run_shell_timeout_kills_the_command_and_its_children(ws: Workspace) -> None:
    ws.shell_timeout = 0.5
    started = time.monotonic()
    result = ws.run_shell("sleep 30 & sleep 30")
    assert time.monotonic() - started < 2
    assert "timed out after 0.5 s; killed the command and its process group" in result.output
    assert none_left_in(ws.root)


def test_a_background_child_ends_when_the_command_does(ws: Workspace) -> None:
    started = time.monotonic()
    result = ws.run_shell("sleep 30 & echo started")
    assert time.monotonic() - started < 2  # not the 5 s timeout: nothing waits for it
    assert result.output == "exit status 0\nstdout:\nstarted"
    assert none_left_in(ws.root)


def test_run_shell_stops_within_a_second_when_the_run_is_cancelled(ws: Workspace) -> None:
    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()
    started = time.monotonic()
    result = ws.run_shell("sleep 30", control=RunControl(max_turns=1, cancel=cancel))
    assert time.monotonic() - started < 1.2
    assert not result.ok
    assert "stopped: cancelled" in result.output


def test_run_shell_timeout_is_cut_to_the_runs_time_left(ws: Workspace) -> None:
    control = RunControl(max_turns=1, deadline=time.monotonic() + 0.3)
    started = time.monotonic()
    result = ws.run_shell("sleep 30", control=control)
    assert time.monotonic() - started < 1  # not the workspace's own 5 s
    assert "stopped: time_limit" in result.output


# -- the sample workspace and a whole run --------------------------------------------

def test_sample_copy_leaves_the_package_files_unchanged(tmp_path: Path) -> None:
    before = (SAMPLE / "docs/policies/returns.md").read_bytes()
    ws = Workspace.sample(tmp_path / "copy")
    ws.write_file("docs/policies/returns.md", "changed")
    ws.write_file("new.md", "new")
    assert (SAMPLE / "docs/policies/returns.md").read_bytes() == before
    assert not (SAMPLE / "new.md").exists()


def test_sample_query_record_prints_a_record_or_fails_on_stderr(tmp_path: Path) -> None:
    ws = Workspace.sample(tmp_path / "shop")
    found = ws.run_shell("python3 tools/query_record.py --id ORD-1002")
    missing = ws.run_shell("python3 tools/query_record.py --id ORD-9999")
    assert found.ok and '"item": "Wren in-ear headphones"' in found.output
    assert missing.output == "exit status 1\nstderr:\nerror: no record with id ORD-9999"


def test_agent_answers_from_the_real_search_output(tmp_path: Path) -> None:
    ws = Workspace.sample(tmp_path / "shop")
    search = tool_call("search_docs", query="return opened in-ear headphones", id="call_1")

    def answer(messages: list[dict]) -> dict:
        first = messages[-1]["content"].split("\n\n")[0]
        return say(f"Per {first.splitlines()[0]}: {first.splitlines()[1]}")

    result = Agent(ScriptedModel([search, answer]), ws.tools).run(
        "Can a customer return opened in-ear headphones?")
    assert result.outcome == "completed"
    assert result.final.startswith("Per docs/policies/returns.md:")
    assert [e.tool_name for e in result.events if e.type == "tool_result"] == ["search_docs"]


def test_a_tool_switched_off_stays_off_for_the_next_agent(tmp_path):
    ws = Workspace(tmp_path)
    [shell] = [t for t in ws.tools if t.name == "run_shell"]
    shell.enabled = False
    model = ScriptedModel([tool_call("run_shell", command="touch ran", id="c1"), say("ok")])
    result = Agent(model, ws.tools).run("go")
    assert result.messages[3]["content"] == "Error: tool 'run_shell' is switched off."
    assert not (tmp_path / "ran").exists()
