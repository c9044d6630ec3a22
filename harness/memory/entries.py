"""The memory files: Markdown a person reads and edits, and the entries found in them.

    # Archive memory                  <- every line outside the two lists is the person's
    ## Rules                          <- lasting experience
    - Quote the policy id. (sources: read_file docs/faq.md, op-4; 2024-05-01; #9f2c01ab)
    ## One-offs                       <- what happened once, with its date and source
    - MSG-17 marked no action needed. (sources: op-2; 2024-05-02; #41d0e7c2)

A source is named for the person, long after the run: a call as its tool and what it was
asked, an operation record by its id. The suffix is how the harness knows an entry it
wrote: ``#`` is a hash of its section, text, sources and date. An entry without one, or
one a person changed (the hash no longer matches), or moved to the other list, is the
person's: the model may add beside it, never replace it. A change touches one line; every
other line stays as the person left it.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

FILES = {"temporary": "temporary.md", "archive": "archive.md"}
HEADINGS = {"rule": "## Rules", "one-off": "## One-offs"}
KIND_OF = {"rules": "rule", "rule": "rule", "one-offs": "one-off", "one-off": "one-off",
           "one offs": "one-off"}
SUFFIX = re.compile(r"^(?P<text>.+?) \(sources: (?P<sources>[^;()]+); "
                    r"(?P<date>\d{4}-\d{2}-\d{2}); #(?P<tag>[0-9a-f]{8})\)$")
ABOUT = {
    "temporary": "What runs noticed while they worked: kept by the harness's remember tool.",
    "archive": "What archiving kept from batches of operation records (harness/memory).",
}


@dataclass(frozen=True)
class Entry:
    """One line of a memory list: its text, its list, and where it came from."""

    text: str
    kind: str  # "rule" or "one-off": the list it is in
    sources: tuple[str, ...] = ()
    date: str = ""
    ours: bool = False  # the harness wrote it and no one changed it since: it may be replaced
    line: int = -1  # its line in the file (0-based)

    def render(self) -> str:
        sources = ", ".join(self.sources)
        return f"- {self.text} (sources: {sources}; {self.date}; #{tag(self)})"


def tag(entry: Entry) -> str:
    """The hash the harness writes after an entry: what tells its own lines from a person's."""
    seen = "\n".join([entry.kind, entry.text, ",".join(entry.sources), entry.date])
    return hashlib.sha256(seen.encode("utf-8")).hexdigest()[:8]


def digest(text: str) -> str:
    """What a run remembers of a file it read: a change underneath shows as another digest."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def new_file(which: str) -> str:
    """A memory file before anything is in it: a title, what it is for, the two lists."""
    return (f"# {which.capitalize()} memory\n\n{ABOUT[which]} Yours to read and edit: an "
            "entry you write or change is yours, and the harness never overwrites it. "
            "Nothing here grants a tool, an approval or a permission.\n\n"
            f"{HEADINGS['rule']}\n\n{HEADINGS['one-off']}\n")


def kind_of(line: str) -> str | None:
    """The list a heading line starts (None: another heading, the lists end there)."""
    return KIND_OF.get(line.lstrip("#").strip().rstrip(":").casefold())


def entries(text: str) -> list[Entry]:
    """The entries of a memory file: the bullet lines under its Rules and One-offs."""
    found, kind = [], None
    for i, line in enumerate(text.splitlines()):
        if line.startswith("#"):
            kind = kind_of(line)
        elif kind and line.startswith(("- ", "* ")):
            body = line[2:].strip()
            if match := SUFFIX.match(body):
                sources = tuple(s.strip() for s in match["sources"].split(","))
                entry = Entry(match["text"], kind, sources, match["date"], line=i)
                found.append(Entry(entry.text, kind, sources, entry.date,
                                   ours=tag(entry) == match["tag"], line=i))
            elif body:
                found.append(Entry(body, kind, line=i))
    return found


def find(text: str, wanted: str) -> Entry | None:
    """The entry whose text (or whole line) is ``wanted``, spaces aside."""
    wanted = " ".join(wanted.removeprefix("- ").split())
    for entry in entries(text):
        line = text.splitlines()[entry.line][2:].strip()
        if wanted in (" ".join(entry.text.split()), " ".join(line.split())):
            return entry
    return None


def with_change(text: str, new: Entry, old: Entry | None = None) -> str:
    """``text`` with ``new`` in its list (in place of ``old``, if given); nothing else moves."""
    lines = text.splitlines()
    if old is not None and old.kind == new.kind:
        lines[old.line] = new.render()
        return "\n".join(lines) + "\n"
    if old is not None:  # a one-off that became a rule: it leaves its list
        del lines[old.line]
    heads = [i for i, line in enumerate(lines) if line.startswith("#")
             and kind_of(line) == new.kind]
    if not heads:  # the person removed the list: it comes back at the end
        gap = [""] if lines and lines[-1].strip() else []
        return "\n".join([*lines, *gap, HEADINGS[new.kind], "", new.render()]) + "\n"
    end = next((i for i in range(heads[0] + 1, len(lines)) if lines[i].startswith("#")),
               len(lines))
    at = end
    while at > heads[0] + 1 and not lines[at - 1].strip():
        at -= 1
    added = [new.render()] if at > heads[0] + 1 else ["", new.render()]
    if at == end and end < len(lines):  # the next heading follows: keep a blank line
        added.append("")
    return "\n".join([*lines[:at], *added, *lines[at:]]) + "\n"
