"""Workspace: file and shell tools that cannot reach outside one folder.

    ws = Workspace("my_project")   # or Workspace.sample(): a fresh copy of the course project
    agent = Agent(model, ws.tools)

| tool          | does                                           | refuses                       |
|---------------|------------------------------------------------|-------------------------------|
| `read_file`   | a UTF-8 text file's content                    | binary, too big, not a file   |
| `write_file`  | create or replace a file (and its folders)     | too big, not a file           |
| `edit_file`   | replace one exact, unique piece of text        | 0 or 2+ matches               |
| `list_files`  | files matching a glob, sorted, capped          | a pattern with `..` or `/...` |
| `search_docs` | passages sharing words with a query, cited     | (says so if nothing matches)  |
| `run_shell`   | ``bash -c command`` in the root, sandboxed     | (nothing outlives the call)   |

The confinement rule, one method (`Workspace.resolve`) that every path goes through:

    "notes/a.md" -> (root / path).resolve() -> inside root.resolve()?   no  -> PathError
                                               a protected name on the way?  yes -> PathError
                                               else: use it

An absolute path, a ``..`` that climbs out, a symlink that leads out, or a protected
name (``.git``, a virtual environment, ``.env``: see `sandbox.PROTECTED`) is refused
with a one-line reason the model reads. The files themselves (files.py) are then opened
one name at a time without following links, and written through a temporary file and
an atomic rename, so swapping a folder for a link after the check gains nothing.
``run_shell`` runs in the sandbox where there is one (sandbox.py), with the root as
its only writable folder, no network and the limits of ``sandbox=Sandbox(...)``; guard
it with `Permissions` too (lesson 03).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from ..control import RunControl
from ..tools import Tool, ToolResult, tool
from . import files
from .files import EditError, NotTextError, PathError, TooLargeError
from .person import SKILLS, WHY, read_only_at
from .process import run_process
from .sandbox import Sandbox, is_protected
from .search import PatternError, Walk, rank, read_all

__all__ = ["EditError", "NotTextError", "PathError", "TooLargeError", "Workspace"]

SAMPLE = Path(__file__).parent.parent / "sample_workspace"
IGNORED = {".git", "__pycache__", ".ipynb_checkpoints", ".pytest_cache", ".venv", "node_modules"}
TEXT_SUFFIXES = {".md", ".txt", ".rst", ".py", ".json", ".toml", ".yaml", ".yml", ".csv", ".cfg"}
MAX_LISTED, MAX_OLD = 200, 20_000
MAX_PATH_CHARS, MAX_NAME_BYTES = 1024, 255


def _check_length(path: str) -> None:
    """Refuse paths the OS would choke on, before its error can show the absolute root."""
    parts = Path(path).parts
    if len(path) > MAX_PATH_CHARS or any(len(p.encode()) > MAX_NAME_BYTES for p in parts):
        raise PathError(f"path is too long (at most {MAX_PATH_CHARS} characters, "
                        f"{MAX_NAME_BYTES} bytes a name): '{path[:60]}...'")


class Workspace:
    """A root folder and the tools that work inside it; ``.tools`` goes to an `Agent`.

    The methods are the tools, and Python can call them too: ``ws.read_file("README.md")``.
A method's ``control`` is not the model's to send: in a run, the call path passes the
run's `RunControl`, so a long search or command stops when the run does.
    """

    def __init__(self, root: str | os.PathLike, *, shell_timeout: float = 30,
                 max_file_bytes: int = 1_000_000, max_output: int = 8000,
                 sandbox: Sandbox | None = None) -> None:
        self.root = Path(root).resolve()
        self.sandbox = sandbox  # what run_shell's processes may use; None: the defaults
        if not self.root.is_dir():
            raise NotADirectoryError(f"workspace root {str(root)!r} is not an existing folder")
        self.shell_timeout, self.max_file_bytes = shell_timeout, max_file_bytes
        self.max_output = max_output
        writers = {self.write_file: "path", self.edit_file: "path"}  # one write policy
        fns = (self.read_file, self.write_file, self.edit_file, self.list_files,
               self.search_docs, self.run_shell)
        readers = {self.read_file, self.list_files, self.search_docs}  # safe side by side
        self._tools = [tool(fn, max_output=max_output, writes=writers.get(fn),
                            parallel=fn in readers) for fn in fns]
        # made once: a switch you turn off (``tool.enabled = False``) stays off

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"

    @classmethod
    def sample(cls, dest: str | os.PathLike | None = None, **settings: Any) -> Workspace:
        """A fresh copy of the course's sample project (a headphone shop's support repo).

        Lessons work on the copy, so the files shipped inside the package never change.
        Without ``dest`` the copy goes to a temporary folder, removed when Python exits.
        """
        if dest is None:
            target = Path(tempfile.mkdtemp(prefix="harness-"))
            atexit.register(shutil.rmtree, target, ignore_errors=True)
        else:
            target = Path(dest)
        shutil.copytree(SAMPLE, target, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns(*IGNORED))
        return cls(target, **settings)

    @property
    def tools(self) -> list[Tool]:
        """The six tools, the same objects every time (a new list)."""
        return list(self._tools)

    # -- confinement: every path goes through here ------------------------------------

    def resolve(self, path: str, *, must_exist: bool = True) -> Path:
        """The real location of ``path`` inside the root, or `PathError` saying why not."""
        given = Path(path)
        if not path.strip() or "\0" in path:
            raise PathError(f"invalid path {path!r}; give a path relative to the workspace root")
        if given.is_absolute() or given.drive:
            raise PathError(f"'{path}' is absolute; give a path relative to the workspace root")
        _check_length(path)
        if not Path(os.path.normpath(self.root / given)).is_relative_to(self.root):
            raise PathError(f"'{path}' leads outside the workspace")
        try:
            real = (self.root / given).resolve(strict=must_exist)
        except FileNotFoundError:
            raise PathError(f"'{path}' does not exist; list_files shows what does") from None
        except (OSError, RuntimeError) as exc:  # a symlink loop, a name too long
            reason = getattr(exc, "strerror", None) or "symlink loop"
            raise PathError(f"'{path}' cannot be resolved ({reason})") from None
        if not real.is_relative_to(self.root):
            raise PathError(f"'{path}' is a symlink that leads outside the workspace")
        folder = self.root
        for name in real.relative_to(self.root).parts:
            if is_protected(folder, name):
                raise PathError(f"'{path}' is inside '{name}', which is protected: version "
                                "control, virtual environments and .env files are off limits")
            folder = folder / name
        return real

    def _parts(self, path: str, *, must_exist: bool = True) -> tuple[str, ...]:
        """`resolve`, as the names from the root down, for files.py to open one by one."""
        parts = self.resolve(path, must_exist=must_exist).relative_to(self.root).parts
        if not parts:
            raise PathError(f"'{path}' is a directory; only regular files can be read or written")
        return parts

    def _skip(self, folder: Path, name: str) -> bool:
        return name in IGNORED or is_protected(folder, name)

    def _walk(self, pattern: str, control: RunControl | None = None) -> Walk:
        _check_length(pattern)
        if Path(pattern).is_absolute() or ".." in Path(pattern).parts:
            raise PathError(f"pattern '{pattern}' must stay inside the workspace (no '..', "
                            "no leading '/')")
        try:
            return Walk(self.root, pattern, self._skip, control)
        except PatternError as exc:
            raise PathError(str(exc)) from None

    def _files(self, walk: Walk) -> list[str]:
        """The regular files a walk found; a link counts if it leads to one inside."""
        found = []
        for rel, entry in walk:
            if is_protected(Path(entry.path).parent, entry.name):
                continue
            if entry.is_symlink():
                try:
                    if self.resolve(rel).is_file():
                        found.append(rel)
                except PathError:  # a link out of the root is not in the workspace
                    pass
            elif entry.is_file(follow_symlinks=False):
                found.append(rel)
        return sorted(found)

    # -- the tools (their docstrings are what the model reads) ------------------------

    def read_file(self, path: str) -> str:
        """Read a UTF-8 text file in the workspace and return its content.

        Args:
            path: file path relative to the workspace root, e.g. "docs/faq.md".
        """
        return files.read_text(self.root, self._parts(path), path, self.max_file_bytes)

    def write_file(self, path: str, content: str) -> str:
        """Create or overwrite a text file in the workspace (missing folders are created).

        Args:
            path: file path relative to the workspace root.
            content: the complete new content of the file.
        """
        parts = self._write(path, content)
        return f"Wrote {len(content)} characters to {'/'.join(parts)}"

    def edit_file(self, path: str, old: str, new: str) -> str:
        """Replace one exact piece of text in a file; `old` must occur exactly once.

        Args:
            path: file path relative to the workspace root.
            old: the exact text to replace, whitespace included.
            new: the text to put in its place.
        """
        if not old:
            raise EditError("'old' is empty; give the exact text to replace")
        if len(old) > MAX_OLD:
            raise EditError(f"'old' is {len(old):,} characters; at most {MAX_OLD:,}: give a "
                            "shorter piece that occurs once, or write_file the whole file")
        text = self.read_file(path)
        first = text.find(old)  # str.find is linear: no regex, no backtracking
        if first < 0:
            raise EditError(f"'old' was not found in {path}; read the file and copy the "
                            "exact text, whitespace included")
        if text.find(old, first + 1) >= 0:  # a second match, even one overlapping the first
            found = max(text.count(old), 2)
            raise EditError(f"'old' occurs {found} times in {path}; include more of the "
                            "surrounding text so it matches exactly once")
        self._write(path, text[:first] + new + text[first + len(old):])
        return f"Replaced 1 occurrence in {path}"

    def _write(self, path: str, content: str) -> tuple[str, ...]:
        """The one write path of `write_file` and `edit_file`: size, confinement, write."""
        data = content.encode("utf-8")
        if len(data) > self.max_file_bytes:
            raise TooLargeError(f"content is {len(data):,} bytes; the limit is "
                                f"{self.max_file_bytes:,}")
        parts = self._parts(path, must_exist=False)
        if person := read_only_at(self.root.joinpath(*parts)):
            why = WHY.get(person, SKILLS)  # a skills folder, a memory folder
            raise PathError(f"'{path}' is inside a folder that is the person's {why}")
        files.write_bytes(self.root, parts, path, data)
        return parts

    def list_files(self, pattern: str = "**/*", control: RunControl | None = None) -> str:
        """List the workspace's files that match a glob pattern, one path per line.

        Args:
            pattern: glob relative to the root, e.g. "**/*.md" or "docs/*"; default all files.
        """
        walk = self._walk(pattern, control)
        found = self._files(walk)
        more = len(found) - MAX_LISTED
        listed = "\n".join(found[:MAX_LISTED]) or f"No files match '{pattern}'."
        if more > 0:
            listed += f"\n[... {more} more files; use a narrower pattern]"
        if walk.stopped:
            listed += f"\n[listing stopped early: {walk.stopped}; use a narrower pattern]"
        return listed

    def search_docs(self, query: str, max_results: int = 5,
                    control: RunControl | None = None) -> str:
        """Search the workspace's text files; returns matching passages as path:line + text.

        Args:
            query: words to look for, e.g. "return opened headphones".
            max_results: how many passages to return (1-20).
        """
        walk = self._walk("**/*", control)
        texts = [rel for rel in self._files(walk) if Path(rel).suffix.lower() in TEXT_SUFFIXES]
        best = rank(read_all(texts, self.read_file, walk), query, max_results)
        stopped = f"\n\n[search stopped early: {walk.stopped}]" if walk.stopped else ""
        if not best:
            return (f"No passages matched '{query}' in this workspace's text files: "
                    f"the information is not there.{stopped}")
        return "\n\n".join(best) + stopped

    def run_shell(self, command: str, control: RunControl | None = None) -> ToolResult:
        """Run a shell command in the workspace root; returns exit status, stdout and stderr.

        Args:
            command: a bash command line, e.g. "python -m pytest -q".
        """
        shell = shutil.which("bash") or shutil.which("sh")
        argv = [shell, "-c", command] if shell else ["cmd", "/c", command]
        return run_process(argv, cwd=self.root, timeout=self.shell_timeout,
                           max_output=self.max_output, control=control, sandbox=self.sandbox)
