"""A tool's text, in and out: the arguments a model wrote, the result it reads back.

In: `parse_json_object` reads exactly one JSON object; `describe` turns pydantic's
validation errors into one line naming each field (a bounded number of them).
Out: `to_text` turns a return value into text (JSON for structures), and `cap` keeps
the head and tail of long output with a marker of what was cut. Every failure becomes one line the
model can act on (`error_line`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError, to_jsonable_python


class ToolArgumentError(ValueError):
    """The arguments a model sent cannot be used: the message says why, in one line."""


def parse_json_object(raw: str | None) -> dict:
    """Parse exactly one JSON object. An empty string means no arguments (``{}``)."""
    if raw is None or not raw.strip():
        return {}
    try:
        value, end = json.JSONDecoder().raw_decode(raw.strip())
    except json.JSONDecodeError as exc:
        raise ToolArgumentError(
            f"arguments are not valid JSON ({exc.msg} at char {exc.pos})") from None
    except RecursionError:
        raise ToolArgumentError("arguments are nested too deeply") from None
    except ValueError as exc:  # a number of 4,301 digits: Python's own limit says no
        why = str(exc).split(":")[0][:200]
        raise ToolArgumentError(f"arguments hold a value that cannot be read ({why})") from None
    if raw.strip()[end:].strip():
        raise ToolArgumentError("arguments must be one JSON object; found more data after it")
    if not isinstance(value, dict):
        raise ToolArgumentError(f"arguments must be a JSON object, not {type(value).__name__}")
    return value


def to_text(value: Any) -> str:
    """A tool's return value as the text the model reads (JSON for structures)."""
    if isinstance(value, str):
        return value
    if type(value) is int:  # the most common non-text result, and its JSON is its str()
        return str(value)
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    try:
        return json.dumps(value, ensure_ascii=False, default=_jsonable)
    except (TypeError, ValueError):
        return str(value)


def _jsonable(value: Any) -> Any:
    """What `json.dumps` cannot write itself: pydantic models, dates, paths; else ``str``."""
    try:
        return to_jsonable_python(value)
    except PydanticSerializationError:
        return str(value)


def cap(text: str, limit: int) -> str:
    """At most ``limit`` characters: the head and tail of long output, with a visible
    marker of what was cut between them (the marker counts towards the limit)."""
    if len(text) <= limit:
        return text
    room = limit - len(f"\n[... {len(text):,} characters cut ...]\n")
    if room < 3:  # too small for a marker: the head alone
        return text[:limit]
    head, tail = room * 2 // 3, room - room * 2 // 3
    cut = len(text) - head - tail
    return f"{text[:head]}\n[... {cut:,} characters cut ...]\n{text[len(text) - tail:]}"


MAX_PROBLEMS = 5  # a call with 10,000 bad fields gets a short answer, not 10,000 lines


def describe(exc: ValidationError) -> str:
    """The problems of a call, naming each field: what a model needs to fix its call.

    Missing fields first, then unknown ones, then the rest, each in field order, so the
    text does not depend on the order pydantic happens to report them in.
    """
    problems = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        if err["type"] == "missing":
            problems.append((0, where, f"missing field '{where}'"))
        elif err["type"] == "extra_forbidden":
            problems.append((1, where, f"unknown field '{where}'"))
        else:  # a validator's own words, without pydantic's "Value error, " in front
            msg = err["msg"].removeprefix("Value error, ")
            problems.append((2, where, f"'{where}': {msg}"))
    problems.sort(key=lambda p: (p[0], _natural(p[1])))
    shown = [text for *_, text in problems[:MAX_PROBLEMS]]
    if len(problems) > MAX_PROBLEMS:
        shown.append(f"and {len(problems) - MAX_PROBLEMS} more")
    return "invalid arguments: " + "; ".join(shown)


def _natural(where: str) -> list:
    """Sort key for a field path: ``todos.2`` before ``todos.10``."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in where.split(".")]


def reason(exc: BaseException, limit: int = 200) -> str:
    """``Type: first line of the message``, at most ``limit`` characters."""
    line = error_line(exc).removeprefix("Error: ")
    return line if len(line) <= limit else line[:limit - 3] + "..."


def error_line(exc: BaseException) -> str:
    """``Error: Type: first line of the message`` (even when the message itself fails)."""
    try:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    except Exception:
        first = ""
    return f"Error: {type(exc).__name__}" + (f": {first}" if first else "")


# -- a function's description, for @tool ----------------------------------------------

def split_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into its description and its ``Args:`` entries."""
    head, _, rest = doc.partition("\nArgs:")
    args: dict[str, str] = {}
    indent, current = None, None
    for line in rest.splitlines():
        if not line.strip():
            continue
        depth = len(line) - len(line.lstrip())
        indent = depth if indent is None else indent
        if depth < indent or depth == 0:  # the next section (Returns:, Raises:) ends Args
            break
        m = re.match(r"(\w+)(?:\s*\([^)]*\))?:\s*(.*)", line.strip())
        if depth == indent and m:
            current = m.group(1)
            args[current] = m.group(2).strip()
        elif current:
            args[current] += " " + line.strip()
    return head.strip(), args


def strip_titles(schema: Any) -> Any:
    """Drop pydantic's auto-generated ``title`` keys: they cost tokens and say nothing."""
    if isinstance(schema, dict):
        return {k: strip_titles(v) for k, v in schema.items()
                if not (k == "title" and isinstance(v, str))}
    if isinstance(schema, list):
        return [strip_titles(v) for v in schema]
    return schema
