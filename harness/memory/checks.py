"""The checks a proposed memory change passes before anything is written, in this order:

    the entry     one line, not blank, at most MAX_ENTRY characters
    data only     it grants no tool, approval or permission (grants.py); nothing hidden
    its sources   each a call of this run that succeeded, or an operation record of the
                  batch that succeeded and was not undone (records.py)
    a rule        more than one case, or a reason a cited source states (quoted in because)
    a one-off     says what happened once, never what to do from now on
    replaces      an entry the run read, the harness's own, and stronger evidence than it had
    (the file     unchanged since the run read it: remember.py checks it last)

A case is what a source is about: two reads of the same file are one case, and so are two
records of the same order. Each refusal is a `Refused` whose message says what was wrong
and what to do; nothing is written.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ..ui.display import escape
from .entries import Entry, entries, find
from .grants import fold, grants

MAX_ENTRY, MAX_SOURCES, MIN_QUOTE, MAX_LABEL = 300, 10, 15, 80
FROM_NOW_ON = re.compile(
    r"\b(from now on|in (the )?future|going forward|henceforth|by default|as a rule|"
    r"every time|whenever|all (such|these|those|similar)|any (such|similar)|"
    r"ignore (these|such|them|all|this kind)|"
    r"(these|such) (messages|items|orders|cases) (need|are))\b")
BESIDE = ("If what you found differs, keep it as a one-off beside it (kind 'one-off', no "
          "'replaces': what happened, with its sources); the person decides")
WORDS = re.compile(r"[a-z0-9]{3,}")
COMMON = {"the", "and", "for", "with", "that", "this", "are", "was", "not", "from", "its",
          "has", "have", "been", "only", "when", "all", "any", "one", "per"}


class Refused(ValueError):
    """A change memory does not take: the message says why and what to do instead."""


@dataclass(frozen=True)
class Source:
    """One cited source: its id, the case it is about, the text a reason is quoted from, and
    how the memory file names it (a call id means nothing once its run is over)."""

    id: str
    case: str
    text: str
    label: str


@dataclass(frozen=True)
class Seen:
    """A call of this run, as memory may cite it: what it was and how it ended."""

    name: str
    status: str  # "ok": it ran and worked (calls.py has the rest)
    arguments: Any
    output: str

    def source(self, id: str) -> Source:
        if self.status != "ok":
            raise Refused(f"{id} ({self.name}) did not succeed (status {self.status}): a "
                          "failed call is not evidence; cite calls whose results you read")
        return Source(id, f"{self.name} {json.dumps(self.arguments, sort_keys=True)}",
                      self.output, label(self.name, self.arguments))


def label(name: str, arguments: Any) -> str:
    """A cited call as the person reads it in the memory file, long after its run: the tool
    and what it was asked (``read_file docs/faq.md``), on one line, escaped, without the
    characters that end a source in the entry's suffix."""
    values = arguments.values() if isinstance(arguments, dict) else (
        [] if arguments is None else [arguments])
    asked = " ".join(v if isinstance(v, str) else json.dumps(v) for v in values)
    text = " ".join(re.sub(r"[;(),#]", " ", escape(f"{name} {asked}")).split())
    return text if len(text) <= MAX_LABEL else text[:MAX_LABEL - 1] + "…"


def check_entry(text: str) -> str:
    """The entry's text, checked: one plain line that grants nothing."""
    text = text.strip()
    if not text or "\n" in text or "\r" in text:
        raise Refused("the entry must be one line of text: say the experience in one sentence")
    if len(text) > MAX_ENTRY:
        raise Refused(f"the entry has {len(text):,} characters; at most {MAX_ENTRY}: say it "
                      "shorter")
    if found := grants(text):
        raise Refused(f"memory is data and can never grant a tool, an approval or a permission "
                      f"(the entry says {escape(found)[:60]!r}); permissions are the person's, "
                      "set in the agent's Permissions. Do not remember this; carry on with the "
                      "task as your permissions allow")
    if escape(text) != text or "(sources:" in text:
        raise Refused("the entry holds hidden characters or a '(sources:' part; write plain "
                      "text: the harness adds the sources and the date itself")
    return text


def sources_of(ids: list[str], calls: dict[str, Seen], records: dict[str, Any]) -> list[Source]:
    """The sources ``ids`` name, each checked: it exists and it succeeded."""
    ids = list(dict.fromkeys(i.strip() for i in ids))
    if not ids or not all(ids):
        raise Refused("cite at least one source: the id of a call of this run whose result "
                      "shows it (a tool call id), or of an operation record")
    if len(ids) > MAX_SOURCES:
        raise Refused(f"{len(ids)} sources; cite at most {MAX_SOURCES}, the ones that show it")
    found = []
    for i in ids:
        if i in records:
            found.append(records[i].source(records))
        elif i in calls:
            found.append(calls[i].source(i))
        else:
            known = ", ".join([*calls, *records][:20]) or "none yet (call a tool first)"
            raise Refused(f"{escape(i)[:40]!r} is not a call of this run or an operation "
                          f"record; cite one of: {known}")
    return found


def check_kind(kind: str, text: str, sources: list[Source], because: str) -> None:
    """A rule needs more than one case or a stated reason; a one-off stays one."""
    cases = {s.case for s in sources}
    if kind == "one-off":
        if found := FROM_NOW_ON.search(fold(text)):
            raise Refused(f"a one-off records what happened in one case, but this one says "
                          f"{found.group(0)!r}, which makes it a rule. Say what happened (the "
                          "item, what was done, why if a source says it)")
        return
    if because.strip():
        quote = fold(because)
        if len(quote) < MIN_QUOTE or not any(quote in fold(s.text) for s in sources):
            raise Refused("the reason in 'because' is not in the sources you cite: quote, "
                          f"exactly and at least {MIN_QUOTE} characters, the sentence of a "
                          "cited call's result or a record's note that states the rule")
        return
    if len(cases) < 2:
        are = "is one case" if len(sources) == 1 else "are one case (the same thing twice)"
        raise Refused(f"a lasting rule needs more than one case, or a reason a source states; "
                      f"{', '.join(s.id for s in sources)} {are}. Keep it as a "
                      "one-off (kind 'one-off': what happened, not what to do from now on), "
                      "cite a second case, or quote the source's reason in 'because'")


def check_replaces(text: str, kind: str, sources: list[Source], replaces: str,
                   file: str, read: str) -> Entry | None:
    """The entry this change replaces (None: it adds), if the evidence is strong enough."""
    if not replaces.strip():
        for entry in entries(read):
            if entry.kind == kind == "rule" and similar(entry.text, text) and not entry.ours:
                raise Refused(f"this reads like {entry.text!r}, the person's rule in {file}: "
                              f"it stands as they wrote it. {BESIDE}")
            if entry.kind == kind == "rule" and similar(entry.text, text):
                raise Refused(f"this reads like the rule {entry.text!r} already in {file}. "
                              "If it is the same, it is remembered already; if it changes "
                              "it, name that entry in 'replaces' (the old one stays unless "
                              "your evidence is stronger than its own)")
        return None
    old = find(read, replaces)
    if old is None:
        raise Refused(f"no entry of {file} reads {escape(replaces)[:80]!r}: copy the entry "
                      "exactly as your system prompt shows it, or leave 'replaces' empty")
    if not old.ours:
        raise Refused(f"{old.text!r} is the person's (written or changed by hand): memory "
                      f"never overwrites it. {BESIDE}")
    cases, had = len({s.case for s in sources}), len(old.sources)
    if (old.kind == "rule" and kind == "one-off") or cases <= had:
        raise Refused(f"kept the old entry {old.text!r}: it rests on {had} source(s) "
                      f"({', '.join(old.sources)}) and your change on {cases} case(s); memory "
                      "changes only on stronger evidence than it holds. Keep yours as a "
                      "one-off beside it (kind 'one-off', no 'replaces')")
    return old


def similar(a: str, b: str) -> bool:
    """Two entries about the same thing: most words of the shorter are in the longer."""
    words_a, words_b = (set(WORDS.findall(fold(t))) - COMMON for t in (a, b))
    shorter = min(len(words_a), len(words_b))
    return shorter >= 3 and len(words_a & words_b) >= 0.6 * shorter
