"""Plan updates for fuzzing `todo_write`, and an independent oracle of what each must do.

Drawing every update through hypothesis, field by field, costs about a millisecond an
update. Instead one hypothesis example draws a pool of strings (unicode, blanks,
junk) and a byte string; `Updates` reads the bytes as a recipe and turns them into
dozens of raw argument strings: valid and invalid lists, wrong types, nulls, extra
fields, duplicate keys, truncated or trailing JSON, huge content, lone surrogates,
deep nesting. Hypothesis still owns every choice (and shrinks the bytes on failure).

`expected_plan(raw)` states the rules of DESIGN.md from scratch with the standard
library: it never calls the harness, so the two can disagree.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

STATUSES = ("pending", "in_progress", "completed")
MAX_ITEMS = 20
MAX_CONTENT = 500  # characters
LINE_BREAKING = {"Cc", "Zl", "Zp"}  # newlines, tabs, escapes, line and paragraph separators
BIDI = {chr(c) for c in (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))}
BLANKS = ("", " ", "\t\n", "\u3000", "\u2003\u00a0", "\x1c")  # str.strip() empties these
ODD_TEXT = ("\u200b", "\u0000", "e\u0301", "\U0001f600", "\u202eevil", "{}", "null", "\\",
            "step\n[x] done")
WRONG_TYPES: tuple[Any, ...] = (None, 0, 1.5, True, [], {}, ["x"], {"content": "x"})
BAD_STATUSES: tuple[Any, ...] = ("PENDING", "done", "in progress", "pending ", "", None, 1, [])
NOT_ITEMS: tuple[Any, ...] = (None, 1, "pending", [], ["a", "pending"], True)
TRAILERS = (" ", "\n", "\t \r\n", "{}", "x", ",", "]", "}", "null", "// note", "\x00", "\u3000")
WHITESPACE_TRAILERS = (" ", "\n", "\t \r\n", "\u3000")  # stripped: the update stays valid
WRONG_DOCS: tuple[Any, ...] = ([], None, "todos", 3, True, [{"todos": []}])


class Updates:
    """Turns hypothesis' strings and bytes into raw `todo_write` argument strings."""

    def __init__(self, words: list[str], recipe: bytes) -> None:
        self.words = [*words, *ODD_TEXT]
        self.recipe, self.pos = recipe, 0

    def __iter__(self) -> Updates:
        return self

    def __next__(self) -> str:
        if self.pos >= len(self.recipe):
            raise StopIteration
        return self.raw()

    def pick(self, n: int) -> int:
        """The next choice in range(n), read from the recipe (0 once it runs out)."""
        if self.pos >= len(self.recipe):
            return 0
        self.pos += 1
        return self.recipe[self.pos - 1] % n

    def choose(self, options: tuple | list) -> Any:
        return options[self.pick(len(options))]

    def raw(self) -> str:
        """One raw argument string; most are documents, some are anything but."""
        kind = self.pick(20)
        if kind < 9:
            return self.dump({"todos": self.items()})
        if kind == 9:
            return self.dump({"todos": self.items(), self.choose(self.words) or "x": 1})
        if kind == 10:
            wrong = [{}, {"todos": None}, *({"todos": w} for w in WRONG_DOCS)]
            return self.dump(self.choose(wrong))
        if kind == 11:
            return self.dump(self.choose(WRONG_DOCS))
        if kind == 12:  # cut short: never valid unless the cut lands after the end
            text = self.dump({"todos": self.items()})
            return text[: self.pick(len(text))]
        if kind == 13:
            return self.dump({"todos": self.items()}) + self.choose(TRAILERS)
        if kind == 14:
            return self.choose(self.words) + self.choose(("", "{", '{"todos": ['))
        if kind == 15:  # duplicate keys: the last one wins, as in json.loads
            first, second = self.dump(self.items()), self.dump(self.items())
            return f'{{"todos": {first}, "todos": {second}}}'
        if kind == 16:
            depth = 1 + self.pick(300)
            return '{"todos": ' + "[" * depth + "]" * depth + "}"
        if kind == 17:
            size = 5_000 * (1 + self.pick(20))
            return self.dump({"todos": [{"content": "é" * size, "status": "pending"}]})
        if kind == 18:
            return f'{{"todos": [{{"content": "a\\ud800b", "status": "{self.choose(STATUSES)}"}}]}}'
        return self.choose(WHITESPACE_TRAILERS) + self.dump({"todos": self.items()})

    def items(self) -> list[Any]:
        if self.pick(8):
            return [self.item() for _ in range(self.pick(6))]
        return self.long_items()

    def long_items(self) -> list[Any]:
        """19, 20 or 21 well-formed items, at most one in progress: the size rule decides."""
        items = [{"content": self.choose(self.words) or "step", "status": "pending"}
                 for _ in range(19 + self.pick(3))]
        items[self.pick(len(items))]["status"] = self.choose(STATUSES)
        return items

    def item(self) -> Any:
        kind = self.pick(24)
        content, status = self.choose(self.words), self.choose(STATUSES)
        if kind < 18:
            return {"content": content, "status": status}
        if kind == 18:
            return self.choose([{"content": content}, {"status": status}, {}])
        if kind == 19:
            return {"content": content, "status": status, "priority": "high"}
        if kind == 20:
            return {"content": self.choose(WRONG_TYPES), "status": status}
        if kind == 21:
            return {"content": content, "status": self.choose(BAD_STATUSES)}
        if kind == 22:
            return {"content": self.choose(BLANKS), "status": status}
        return self.choose(NOT_ITEMS)

    def dump(self, value: Any) -> str:
        ascii_only = bool(self.pick(2))
        compact = bool(self.pick(2))
        return json.dumps(value, ensure_ascii=ascii_only,
                          separators=(",", ":") if compact else None)


def expected_plan(raw: str) -> list[tuple[str, str]] | None:
    """The plan this update must produce, or None if it must be refused."""
    text = raw.strip() or "{}"  # surrounding whitespace is ignored; nothing means {}
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or set(doc) != {"todos"}:
        return None
    return expected_items(doc["todos"])


def expected_items(todos: Any) -> list[tuple[str, str]] | None:
    """The plan a list of items makes, or None if it breaks a rule."""
    if not isinstance(todos, (list, tuple)) or len(todos) > MAX_ITEMS:
        return None
    plan = []
    for item in todos:
        if not isinstance(item, dict) or set(item) != {"content", "status"}:
            return None
        content, status = item["content"], item["status"]
        if not isinstance(content, str) or not content.strip() or _has_surrogate(content):
            return None
        if len(content) > MAX_CONTENT or not _one_line(content):
            return None
        if status not in STATUSES:
            return None
        plan.append((content, status))
    if [status for _, status in plan].count("in_progress") > 1:
        return None
    return plan


def _one_line(text: str) -> bool:
    """No character that breaks the line or reorders it: one plan item, one line."""
    return not any(unicodedata.category(c) in LINE_BREAKING or c in BIDI for c in text)


def _has_surrogate(text: str) -> bool:
    """A lone surrogate is not text that can be sent as UTF-8: refuse it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
