"""The workspace under attack: no path a model can write reaches outside the root.

Every case goes through the tool path the loop uses (JSON arguments, parse, execute),
for each file tool at once, and checks two things: the call is refused with a reason
the model can read, and nothing outside the root was read, created or changed.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from harness import Workspace

from .file_tools import SECRET, use

FILE_TOOLS = ("read_file", "write_file", "edit_file")


@pytest.fixture
def ws(tmp_path: Path, outside: Path) -> Workspace:
    root = tmp_path / "root"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "guide.md").write_text("# Guide\n", encoding="utf-8")
    return Workspace(root, shell_timeout=5, max_file_bytes=1000, max_output=2000)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("path", [
    "../outside/secret.txt",
    "a/../../outside/secret.txt",
    "./../outside/secret.txt",
    "docs/./../../outside/secret.txt",
    "docs/../../outside/../outside/secret.txt",
    "docs//..//..//outside/secret.txt",
    "..",
    "../",
], ids=lambda p: p)
@pytest.mark.parametrize("name", FILE_TOOLS)
def test_dot_dot_that_climbs_out_is_refused_by_every_file_tool(
        ws: Workspace, outside: Path, name: str, path: str) -> None:
    before = snapshot(outside.parent)
    ok, output = use(ws, name, path)
    assert not ok
    assert output.startswith("Error: PathError:")
    assert SECRET.strip() not in output
    assert snapshot(outside.parent) == before


@pytest.mark.parametrize("path", ["/etc/passwd", "//etc/passwd", "/tmp", "/../etc/passwd"])
@pytest.mark.parametrize("name", FILE_TOOLS)
def test_absolute_path_is_refused_by_every_file_tool(ws: Workspace, name: str, path: str) -> None:
    ok, output = use(ws, name, path)
    assert not ok
    assert "is absolute" in output


@pytest.mark.parametrize("name", FILE_TOOLS)
def test_symlink_to_etc_passwd_planted_in_the_root_is_refused(ws: Workspace, name: str) -> None:
    (ws.root / "passwd").symlink_to("/etc/passwd")
    before = Path("/etc/passwd").read_bytes()
    ok, output = use(ws, name, "passwd")
    assert not ok
    assert "symlink that leads outside" in output
    assert "root:" not in output
    assert Path("/etc/passwd").read_bytes() == before


@pytest.mark.parametrize("name", FILE_TOOLS)
def test_symlink_chain_that_ends_outside_is_refused(
        ws: Workspace, outside: Path, name: str) -> None:
    (ws.root / "c").symlink_to(outside / "secret.txt")
    (ws.root / "b").symlink_to("c")
    (ws.root / "a").symlink_to("b")
    before = snapshot(outside)
    ok, output = use(ws, name, "a")
    assert not ok
    assert "symlink that leads outside" in output
    assert snapshot(outside) == before


@pytest.mark.parametrize("name", FILE_TOOLS)
def test_path_through_a_chain_of_symlinked_folders_out_of_the_root_is_refused(
        ws: Workspace, outside: Path, name: str) -> None:
    (ws.root / "inner").symlink_to(outside, target_is_directory=True)
    (ws.root / "docs" / "hop").symlink_to("../inner", target_is_directory=True)
    before = snapshot(outside)
    ok, output = use(ws, name, "docs/hop/secret.txt")
    assert not ok
    assert "symlink that leads outside" in output
    assert snapshot(outside) == before


def test_dangling_symlink_to_outside_is_not_written_through(ws: Workspace, outside: Path) -> None:
    (ws.root / "drop").symlink_to(outside / "new.txt")
    ok, output = use(ws, "write_file", "drop")
    assert not ok
    assert "symlink that leads outside" in output
    assert not (outside / "new.txt").exists()


def test_symlink_chain_that_stays_inside_is_followed(ws: Workspace) -> None:
    (ws.root / "b").symlink_to("docs/guide.md")
    (ws.root / "a").symlink_to("b")
    assert use(ws, "read_file", "a") == (True, "# Guide\n")


def test_symlink_loop_is_refused_without_hanging(ws: Workspace) -> None:
    (ws.root / "x").symlink_to("y")
    (ws.root / "y").symlink_to("x")
    for name in FILE_TOOLS:
        ok, output = use(ws, name, "x")
        assert not ok and "cannot be resolved" in output


def test_folder_symlinked_to_itself_neither_escapes_nor_hangs_listing(ws: Workspace) -> None:
    (ws.root / "self").symlink_to(".", target_is_directory=True)
    assert ws.list_files() == "docs/guide.md"
    assert use(ws, "read_file", "self/self/self/docs/guide.md") == (True, "# Guide\n")


@pytest.mark.parametrize("path", [
    "\u2025/outside/secret.txt",       # two dot leader
    "\uff0e\uff0e/outside/secret.txt",  # fullwidth full stops
    "..\u2215outside\u2215secret.txt",  # division slash
    "..\uff0foutside\uff0fsecret.txt",  # fullwidth solidus
    "..\\outside\\secret.txt",          # a Windows separator is a plain character here
    "~/secret.txt",
    "~root/secret.txt",
    "$HOME/secret.txt",
    "file:///etc/passwd",
], ids=["two-dot-leader", "fullwidth-dots", "division-slash", "fullwidth-solidus",
        "backslash", "tilde", "tilde-user", "env-var", "file-url"])
def test_look_alike_paths_are_plain_names_inside_the_root(
        ws: Workspace, outside: Path, path: str) -> None:
    before = snapshot(outside)
    ok, output = use(ws, "read_file", path)
    assert not ok and "does not exist" in output  # nothing of that name in the root
    ok, output = use(ws, "write_file", path)
    assert ok, output
    written = (ws.root / path).resolve()
    assert written.is_relative_to(ws.root)
    assert written.read_text(encoding="utf-8") == "planted"
    assert snapshot(outside) == before


@pytest.mark.parametrize("path", [
    "docs/guide.md\0", "\0", "docs/\0/../../outside/secret.txt", "", "   ",
], ids=["nul-end", "nul", "nul-middle", "empty", "blank"])
@pytest.mark.parametrize("name", FILE_TOOLS)
def test_nul_byte_or_empty_path_is_refused(ws: Workspace, name: str, path: str) -> None:
    ok, output = use(ws, name, path)
    assert not ok
    assert output.startswith("Error: PathError: invalid path")


@pytest.mark.parametrize("path", ["a" * 300, "/".join(["d" * 200] * 30), "a/" * 2000 + "x"],
                         ids=["long-name", "long-path", "deep-path"])
@pytest.mark.parametrize("name", FILE_TOOLS)
def test_very_long_path_is_refused_without_showing_where_the_root_is(
        ws: Workspace, name: str, path: str) -> None:
    ok, output = use(ws, name, path)
    assert not ok
    assert output.startswith("Error: PathError:")
    assert str(ws.root) not in output


def test_very_long_list_pattern_is_refused_without_showing_where_the_root_is(
        ws: Workspace) -> None:
    t = next(t for t in ws.tools if t.name == "list_files")
    result = t.execute(t.parse(json.dumps({"pattern": "a" * 300})))
    assert result.output.startswith(("Error: PathError:", "No files match"))
    assert str(ws.root) not in result.output


@pytest.mark.parametrize("pattern", ["../*", "../**/*", "**/../../*", "docs/../../outside/*",
                                     "/etc/*", "/**/passwd", "..", "docs/.."])
def test_list_files_refuses_patterns_that_leave_the_root(
        ws: Workspace, outside: Path, pattern: str) -> None:
    t = next(t for t in ws.tools if t.name == "list_files")
    result = t.execute(t.parse(json.dumps({"pattern": pattern})))
    assert not result.ok
    assert "must stay inside the workspace" in result.output
    assert "secret" not in result.output


def make_device(path: Path) -> None:
    """A character device (/dev/zero's numbers) where the OS allows it, else a FIFO:
    either way a special file that a read must never open."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 5))
    except PermissionError:  # not root: a FIFO is the special file we can make
        os.mkfifo(path)


@pytest.mark.parametrize("name", FILE_TOOLS)
def test_device_file_inside_the_root_is_refused_without_reading(ws: Workspace, name: str) -> None:
    make_device(ws.root / "zero")
    ok, output = use(ws, name, "zero")
    assert not ok
    assert "'zero' is not a regular file" in output


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "/dev/stdin",
                                    "/proc/self/environ"])
def test_symlink_to_a_device_or_proc_file_is_refused(ws: Workspace, device: str) -> None:
    (ws.root / "dev").symlink_to(device)
    ok, output = use(ws, "read_file", "dev")
    assert not ok
    assert "symlink that leads outside" in output


def test_file_at_the_size_cap_is_read_and_one_byte_over_is_refused(ws: Workspace) -> None:
    (ws.root / "at.txt").write_bytes(b"x" * 1000)
    (ws.root / "over.txt").write_bytes(b"x" * 1001)
    assert use(ws, "read_file", "at.txt") == (True, "x" * 1000)
    ok, output = use(ws, "read_file", "over.txt")
    assert not ok and "TooLargeError" in output


def test_huge_sparse_file_is_refused_by_size_without_reading_it(ws: Workspace) -> None:
    with open(ws.root / "huge.log", "wb") as f:
        f.truncate(50 * 1024**3)  # 50 GB of holes: reading it would never end
    ok, output = use(ws, "read_file", "huge.log")
    assert not ok
    assert "TooLargeError: 'huge.log' is 53,687,091,200 bytes" in output


def test_multibyte_content_over_the_cap_in_bytes_is_not_written(ws: Workspace) -> None:
    t = next(t for t in ws.tools if t.name == "write_file")
    result = t.execute(t.parse(json.dumps({"path": "zh.md", "content": "退" * 334})))
    assert not result.ok and "1,002 bytes" in result.output
    assert not (ws.root / "zh.md").exists()


def test_edit_that_would_grow_a_file_over_the_cap_changes_nothing(ws: Workspace) -> None:
    (ws.root / "f.txt").write_text("x" * 990 + "MARK", encoding="utf-8")
    t = next(t for t in ws.tools if t.name == "edit_file")
    result = t.execute(t.parse(json.dumps({"path": "f.txt", "old": "MARK", "new": "Y" * 50})))
    assert not result.ok and "TooLargeError" in result.output
    assert (ws.root / "f.txt").read_text(encoding="utf-8") == "x" * 990 + "MARK"


@pytest.mark.parametrize("data", [b"text then \x00 a NUL", b"\x89PNG\r\n\x1a\n\x00\x00",
                                  b"\xff\xfe\x00t\x00e", "caf\xe9".encode("latin-1")],
                         ids=["nul", "png", "utf16", "latin1"])
@pytest.mark.parametrize("name", ["read_file", "edit_file"])
def test_binary_file_is_refused_and_left_unchanged(ws: Workspace, name: str, data: bytes) -> None:
    (ws.root / "blob").write_bytes(data)
    ok, output = use(ws, name, "blob")
    assert not ok and "NotTextError" in output
    assert (ws.root / "blob").read_bytes() == data
