"""A tool's text, in and out: the arguments a model wrote, the result it reads back. Every
problem is one line the model can act on; a long result keeps its head and tail (`cap`)."""

from __future__ import annotations

import json
import re
import textwrap
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import to_jsonable_python

DEFAULT_MAX_OUTPUT = 8_000  # characters of tool output the model gets back
MAX_PROBLEMS = 5  # a call with 10,000 bad fields gets a short answer, not 10,000 lines


class ToolArgumentError(ValueError):
    """The arguments a model sent cannot be used: the message says why, in one line."""


def parse_json_object(raw: str | None) -> dict:
    """Parse exactly one JSON object. An empty string means no arguments (``{}``)."""
    text = (raw or "").strip() or "{}"
    try:
        value, end = json.JSONDecoder().raw_decode(text)
    except json.JSONDecodeError as exc:
        why = f"{exc.msg} at char {exc.pos}"
        raise ToolArgumentError(f"arguments are not valid JSON ({why})") from None
    except (RecursionError, ValueError) as exc:  # nested too deeply, a 4,301-digit number
        why = str(exc).split(":")[0][:200]
        raise ToolArgumentError(f"arguments hold a value that cannot be read ({why})") from None
    if text[end:]:
        raise ToolArgumentError("arguments must be one JSON object; found more data after it")
    if not isinstance(value, dict):
        raise ToolArgumentError(f"arguments must be a JSON object, not {type(value).__name__}")
    return value


def describe(exc: Exception) -> str:
    """The problems of a call, naming each field: missing ones first, then unknown ones,
    then the rest, each in field order (not in the order pydantic reports them)."""
    if not isinstance(exc, ValidationError):  # a validator of yours raised something else
        why = error_line(exc).removeprefix("Error: ")
        return f"arguments could not be validated ({why if len(why) <= 200 else why[:197] + '...'})"
    problems = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        if err["type"] == "missing":
            problems.append((0, where, f"missing field '{where}'"))
        elif err["type"] == "extra_forbidden":
            problems.append((1, where, f"unknown field '{where}'"))
        else:  # a validator's own words, without pydantic's "Value error, " in front
            problems.append((2, where, f"'{where}': " + err["msg"].removeprefix("Value error, ")))
    # natural order: todos.2 before todos.10
    problems.sort(key=lambda p: (p[0], [(not s.isdigit(), int(s) if s.isdigit() else 0, s)
                                        for s in p[1].split(".")]))
    shown = [text for *_, text in problems[:MAX_PROBLEMS]]
    if len(problems) > MAX_PROBLEMS:
        shown.append(f"and {len(problems) - MAX_PROBLEMS} more")
    return "invalid arguments: " + "; ".join(shown)


def to_text(value: Any) -> str:
    """A tool's return value as the text the model reads (JSON for structures)."""
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    try:  # pydantic writes what json cannot (dates, paths, models); str() the rest
        return json.dumps(value, ensure_ascii=False,
                          default=lambda v: to_jsonable_python(v, fallback=str))
    except (TypeError, ValueError):
        return str(value)


def cap(text: str, limit: int) -> str:
    """At most ``limit`` characters: head and tail, and a marker of what was cut between."""
    if len(text) <= limit:
        return text
    room = limit - len(f"\n[... {len(text):,} characters cut ...]\n")
    if room < 3:  # too small for a marker: the head alone
        return text[:limit]
    head = room * 2 // 3  # two thirds of the room before the marker, the rest after it
    tail = room - head
    return f"{text[:head]}\n[... {len(text) - room:,} characters cut ...]\n{text[-tail:]}"


def error_line(exc: BaseException) -> str:
    """``Error: Type: first line of the message`` (even when the message itself fails)."""
    try:
        first = (str(exc).strip().splitlines() or [""])[0]
    except Exception:
        first = ""
    return f"Error: {type(exc).__name__}" + (f": {first}" if first else "")


def split_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """A Google-style docstring's description, and its ``Args:`` entries (for @tool)."""
    head, rest = doc.split("\nArgs:", 1) if "\nArgs:" in doc else (doc, "")
    section = re.split(r"\n(?=\S)", rest, maxsplit=1)[0]  # up to the next one (Returns:)
    args: dict[str, str] = {}
    current = None
    for line in textwrap.dedent(section).splitlines():
        entry = re.match(r"(\w+)(?:\s*\([^)]*\))?:\s*(.*)", line)  # name (type): what it is
        if entry:
            current = entry[1]
            args[current] = entry[2].strip()
        elif current and line.strip():  # an entry's next line
            args[current] += " " + line.strip()
    return head.strip(), args


def strip_titles(schema: Any) -> Any:
    """Drop pydantic's auto-generated ``title`` keys: they cost tokens and say nothing."""
    if isinstance(schema, list):
        return [strip_titles(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    return {k: strip_titles(v) for k, v in schema.items() if k != "title" or not isinstance(v, str)}
