"""Finding things in a workspace: files by a glob pattern, passages by their words.

`list_files` and `search_docs` (workspace.py) call these. Both must stay cheap whatever
the model asks for, so the pattern is matched during **one walk** of the folder tree:

    "docs/**/*.md"   head ["docs"], one "**", tail ["*.md"]
                     a folder is entered only if it can still lead to a match;
                     ".git", "node_modules", links to folders: never entered

At most one ``**`` (``"**/" * 12 + "*"`` asks for the same files twelve ways), at
most `MAX_SCANNED` entries looked at, and the run's deadline and cancel (the tool's
`RunControl` argument) are checked as the walk goes: a listing stops early and says so.

Passages are ranked by the words they share with the query, rarer words weighing
more; Chinese, Japanese and Korean text is matched by character pairs.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Iterable, Iterator
from fnmatch import fnmatch
from pathlib import Path

from ..control import RunControl

MAX_SCANNED = 20_000  # directory entries one listing may look at
MAX_READ = 20_000_000  # characters of text one search may read
PASSAGE_LINES = 6
COMMON_WORDS = ("a an and are as at be by can do does for from has have how i if in is it its "
                "me my of on or our should the their this to was we what when where which who "
                "why will with you your")
STOPWORDS = frozenset(COMMON_WORDS.split())  # they would match every passage
CJK = "[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]"  # kana, CJK ideographs, hangul
WORD = re.compile(rf"{CJK}+|(?:(?!{CJK})[^\W_])+")


class PatternError(ValueError):
    """The glob pattern cannot be used (two ``**``, say); the message says why."""


class Walk:
    """Files under ``root`` whose relative path matches ``pattern``, found in one walk.

    ``skip(folder, name)`` says which folders never to enter. After iterating,
    ``stopped`` says why the walk ended early (too many entries, the run stopped), or
    is ``None``.
    """

    def __init__(self, root: Path, pattern: str, skip: Callable[[Path, str], bool],
                 control: RunControl | None = None) -> None:
        parts = [p for p in pattern.split("/") if p not in ("", ".")]
        if parts.count("**") > 1:
            raise PatternError(f"pattern '{pattern}' has more than one '**'; one is enough "
                               "to reach any depth, e.g. 'docs/**/*.md'")
        self.root, self.skip, self.stopped, self.control = root, skip, None, control
        if "**" in parts:
            k = parts.index("**")
            self.head, self.tail = parts[:k], parts[k + 1:]
        else:
            self.head, self.tail = parts, None

    def __iter__(self) -> Iterator[tuple[str, os.DirEntry]]:
        """(relative path, entry) for each match that is not a folder, in no set order."""
        control, scanned = self.control, 0
        todo: list[tuple[Path, tuple[str, ...]]] = [(self.root, ())]
        while todo:
            folder, parts = todo.pop()
            for entry in _entries(folder):
                scanned += 1
                if scanned > MAX_SCANNED:
                    self.stopped = f"looked at {MAX_SCANNED:,} entries"
                    return
                if scanned % 256 == 0 and control and control.stop_reason():
                    self.stopped = f"the run stopped ({control.stop_reason()})"
                    return
                here = (*parts, entry.name)
                if entry.is_dir(follow_symlinks=False):
                    if self._may_hold(here) and not self.skip(folder, entry.name):
                        todo.append((Path(entry.path), here))
                elif self.matches(here):
                    yield "/".join(here), entry

    def _may_hold(self, parts: tuple[str, ...]) -> bool:
        """Can a folder at ``parts`` hold a match? Decided by the pattern's fixed head."""
        d = len(parts) - 1
        if self.tail is None and d >= len(self.head) - 1:
            return False
        return d >= len(self.head) or fnmatch(parts[d], self.head[d])

    def matches(self, parts: tuple[str, ...]) -> bool:
        head, tail = self.head, self.tail
        if tail is None:
            return len(parts) == len(head) and all(map(fnmatch, parts, head))
        if len(parts) < len(head) + max(len(tail), 1):  # a trailing ** needs one name
            return False
        end = parts[len(parts) - len(tail):] if tail else ()
        return all(map(fnmatch, parts, head)) and all(map(fnmatch, end, tail))


def _entries(folder: Path) -> Iterator[os.DirEntry]:
    """The entries of ``folder``, read lazily (a folder may hold a million)."""
    try:
        with os.scandir(folder) as entries:
            yield from entries
    except OSError:  # gone, or not readable: nothing to list there
        return


# -- passages -------------------------------------------------------------------------

def read_all(paths: Iterable[str], read: Callable[[str], str],
             walk: Walk) -> list[tuple[str, str]]:
    """(path, text) of each file ``read`` can read, until `MAX_READ` or the run stops.

    A file that cannot be read (binary, too big, gone) is skipped; stopping early is
    recorded on ``walk.stopped``, so the answer says the search was cut short.
    """
    documents, budget, control = [], MAX_READ, walk.control
    for rel in paths:
        if budget <= 0 or (control and control.stop_reason()):
            walk.stopped = walk.stopped or "read as much text as one search may"
            break
        try:
            text = read(rel)
        except (ValueError, OSError):
            continue
        budget -= len(text)
        documents.append((rel, text))
    return documents


def rank(documents: Iterable[tuple[str, str]], query: str, max_results: int) -> list[str]:
    """The best passages of ``documents`` ((path, text) pairs) for ``query``, cited.

    Each is ``path:line`` and the passage; ties go by path, then line.
    """
    terms = set(tokens(query))
    passages = [(rel, n, body, set(tokens(body)))
                for rel, text in documents for n, body in paragraphs(text)]
    df = {t: sum(t in words for *_, words in passages) for t in terms}
    scored = sorted(  # rarer words weigh more
        (-sum(math.log(1 + len(passages) / df[t]) for t in sorted(terms & words)),
         rel, n, body)
        for rel, n, body, words in passages if terms & words)
    best = scored[:max(1, min(max_results, 20))]
    return [f"{rel}:{n}\n{body[:600]}" for _, rel, n, body in best]


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
