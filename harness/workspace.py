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
| `run_shell`   | ``bash -c command`` in the root, with timeout  | (kills its process group)     |

The confinement rule, one method (`Workspace.resolve`) that every path goes through:

    "notes/a.md" -> (root / path).resolve() -> inside root.resolve()?  yes -> use it
                                                                        no  -> PathError

An absolute path, a ``..`` that climbs out, or a symlink that leads out (to a file or
a folder) is refused with a one-line reason the model reads; symlinks that stay inside
are fine. ``run_shell`` is confined only by its working folder: guard it with
`Permissions` (lesson 03).
"""

from __future__ import annotations

import atexit
import math
import os
import re
import shutil
import stat
import tempfile
from contextlib import suppress
from pathlib import Path
from typing import Any

from .process import run_process
from .tools import Tool, ToolResult, tool

SAMPLE = Path(__file__).with_name("sample_workspace")
IGNORED = {".git", "__pycache__", ".ipynb_checkpoints", ".pytest_cache", ".venv", "node_modules"}
TEXT_SUFFIXES = {".md", ".txt", ".rst", ".py", ".json", ".toml", ".yaml", ".yml", ".csv", ".cfg"}
MAX_LISTED, PASSAGE_LINES = 200, 6
COMMON_WORDS = ("a an and are as at be by can do does for from has have how i if in is it its "
                "me my of on or our should the their this to was we what when where which who "
                "why will with you your")
STOPWORDS = frozenset(COMMON_WORDS.split())  # they would match every passage
CJK = "[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]"  # kana, CJK ideographs, hangul
WORD = re.compile(rf"{CJK}+|(?:(?!{CJK})[^\W_])+")


class PathError(ValueError):
    """The path is outside the root, missing, or not a regular file."""


class NotTextError(ValueError):
    """The file is binary or not UTF-8."""


class TooLargeError(ValueError):
    """The file, or the content to write, is over ``max_file_bytes``."""


class EditError(ValueError):
    """The text to replace is missing or not unique."""


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
    """

    def __init__(self, root: str | os.PathLike, *, shell_timeout: float = 30,
                 max_file_bytes: int = 1_000_000, max_output: int = 8000) -> None:
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise NotADirectoryError(f"workspace root {str(root)!r} is not an existing folder")
        self.shell_timeout, self.max_file_bytes = shell_timeout, max_file_bytes
        self.max_output = max_output
        writers = {self.write_file: "path", self.edit_file: "path"}  # one write policy
        fns = (self.read_file, self.write_file, self.edit_file, self.list_files,
               self.search_docs, self.run_shell)
        self._tools = [tool(fn, max_output=max_output, writes=writers.get(fn)) for fn in fns]
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
        return real

    def _file(self, path: str, *, must_exist: bool = True) -> Path:
        """`resolve`, then insist on a regular file: a FIFO would block, a device never ends."""
        real = self.resolve(path, must_exist=must_exist)
        if real.exists() and not stat.S_ISREG(real.stat().st_mode):
            kind = "a directory" if real.is_dir() else "not a regular file"
            raise PathError(f"'{path}' is {kind}; only regular files can be read or written")
        return real

    def _files(self, pattern: str) -> list[str]:
        """Regular files matching ``pattern``, each one checked by `resolve`."""
        _check_length(pattern)
        if Path(pattern).is_absolute() or ".." in Path(pattern).parts:
            raise PathError(f"pattern '{pattern}' must stay inside the workspace (no '..', "
                            "no leading '/')")
        try:
            matches = [m.relative_to(self.root).as_posix() for m in self.root.glob(pattern)]
        except (ValueError, NotImplementedError) as exc:
            raise PathError(f"pattern '{pattern}' is not a valid glob ({exc})") from None
        found = []
        for rel in matches:
            with suppress(PathError):  # a symlink out of the root is not in the workspace
                if not IGNORED.intersection(rel.split("/")) and self.resolve(rel).is_file():
                    found.append(rel)
        return sorted(found)

    # -- the tools (their docstrings are what the model reads) ------------------------

    def read_file(self, path: str) -> str:
        """Read a UTF-8 text file in the workspace and return its content.

        Args:
            path: file path relative to the workspace root, e.g. "docs/faq.md".
        """
        real = self._file(path)
        with open(real, "rb") as f:
            data = f.read(self.max_file_bytes + 1)
        if len(data) > self.max_file_bytes:
            raise TooLargeError(f"'{path}' is {real.stat().st_size:,} bytes; the limit is "
                               f"{self.max_file_bytes:,}")
        if b"\0" in data:
            raise NotTextError(f"'{path}' is a binary file (it contains NUL bytes)")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise NotTextError(f"'{path}' is not UTF-8 text") from None

    def write_file(self, path: str, content: str) -> str:
        """Create or overwrite a text file in the workspace (missing folders are created).

        Args:
            path: file path relative to the workspace root.
            content: the complete new content of the file.
        """
        size = len(content.encode("utf-8"))
        if size > self.max_file_bytes:
            raise TooLargeError(f"content is {size:,} bytes; the limit is {self.max_file_bytes:,}")
        real = self._file(path, must_exist=False)
        try:
            real.parent.mkdir(parents=True, exist_ok=True)
            with open(real, "w", encoding="utf-8", newline="") as f:
                f.write(content)
        except OSError as exc:  # a parent that is a file, no permission, disk full
            raise PathError(f"cannot write '{path}': {exc.strerror}") from None
        return f"Wrote {len(content)} characters to {real.relative_to(self.root).as_posix()}"

    def edit_file(self, path: str, old: str, new: str) -> str:
        """Replace one exact piece of text in a file; `old` must occur exactly once.

        Args:
            path: file path relative to the workspace root.
            old: the exact text to replace, whitespace included.
            new: the text to put in its place.
        """
        if not old:
            raise EditError("'old' is empty; give the exact text to replace")
        text = self.read_file(path)
        found = len(re.findall(f"(?={re.escape(old)})", text))  # overlapping matches count
        if found == 0:
            raise EditError(f"'old' was not found in {path}; read the file and copy the "
                            "exact text, whitespace included")
        if found > 1:
            raise EditError(f"'old' occurs {found} times in {path}; include more of the "
                            "surrounding text so it matches exactly once")
        self.write_file(path, text.replace(old, new, 1))
        return f"Replaced 1 occurrence in {path}"

    def list_files(self, pattern: str = "**/*") -> str:
        """List the workspace's files that match a glob pattern, one path per line.

        Args:
            pattern: glob relative to the root, e.g. "**/*.md" or "docs/*"; default all files.
        """
        files = self._files(pattern)
        more = len(files) - MAX_LISTED
        listed = "\n".join(files[:MAX_LISTED]) or f"No files match '{pattern}'."
        return listed + (f"\n[... {more} more files; use a narrower pattern]" if more > 0 else "")

    def search_docs(self, query: str, max_results: int = 5) -> str:
        """Search the workspace's text files; returns matching passages as path:line + text.

        Args:
            query: words to look for, e.g. "return opened headphones".
            max_results: how many passages to return (1-20).
        """
        terms = set(tokens(query))
        passages = []  # (path, line, text, its words)
        for rel in self._files("**/*"):
            if Path(rel).suffix.lower() in TEXT_SUFFIXES:
                with suppress(ValueError, OSError):  # binary, too big, unreadable: skip
                    passages += [(rel, n, body, set(tokens(body)))
                                 for n, body in paragraphs(self.read_file(rel))]
        df = {t: sum(t in words for *_, words in passages) for t in terms}
        scored = sorted(  # rarer words weigh more; ties go by path, then line
            (-sum(math.log(1 + len(passages) / df[t]) for t in sorted(terms & words)),
             rel, n, body)
            for rel, n, body, words in passages if terms & words)
        if not scored:
            return (f"No passages matched '{query}' in this workspace's text files: "
                    "the information is not there.")
        best = scored[:max(1, min(max_results, 20))]
        return "\n\n".join(f"{rel}:{n}\n{body[:600]}" for _, rel, n, body in best)

    def run_shell(self, command: str) -> ToolResult:
        """Run a shell command in the workspace root; returns exit status, stdout and stderr.

        Args:
            command: a bash command line, e.g. "python -m pytest -q".
        """
        shell = shutil.which("bash") or shutil.which("sh")
        argv = [shell, "-c", command] if shell else ["cmd", "/c", command]
        return run_process(argv, cwd=self.root, timeout=self.shell_timeout,
                           max_output=self.max_output)


# -- search ---------------------------------------------------------------------------

def tokens(text: str) -> list[str]:
    """Lowercase words, lightly stemmed, minus stopwords; CJK text as character bigrams."""
    out = []
    for word in WORD.findall(text.lower()):
        if re.match(CJK, word):
            out += [word[i:i + 2] for i in range(max(1, len(word) - 1))]
        elif word not in STOPWORDS:
            out.append(stem(word))
    return out


def stem(word: str) -> str:
    """Fold common English endings, so "returned", "returns" and "return" match."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    for ending in ("ing", "ed", "s"):
        if len(word) - len(ending) >= 3 and word.endswith(ending) and not word.endswith("ss"):
            return word[:-len(ending)]
    return word


def paragraphs(text: str) -> list[tuple[int, str]]:
    """Runs of non-blank lines (at most PASSAGE_LINES), each with its first line number.

    A block of headings only (``## Refunds``) joins the paragraph after it, so each
    passage carries its section title.
    """
    out, block, heading = [], [], None
    for n, line in enumerate([*text.splitlines(), ""], 1):
        if block and (not line.strip() or len(block) == PASSAGE_LINES):
            start, body = n - len(block), "\n".join(block)
            if heading:
                start, body = heading[0], f"{heading[1]}\n{body}"
            heading = (start, body) if all(b.startswith("#") for b in block) else None
            if heading is None:
                out.append((start, body))
            block = []
        if line.strip():
            block.append(line)
    return out + ([heading] if heading else [])
