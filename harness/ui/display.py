"""One human line per event, and text from a model made safe to show.

`format_event` is the line the plan panel's log and the terminal print for an event
(escaped whole: no field of it reaches a screen raw);
`escape` writes every invisible or reordering character as ``\\uXXXX``, so an escape
sequence a model wrote cannot rewrite a terminal and a bidi control cannot reorder
what you read; `short` cuts a text to one line at a word.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from ..events import Event

HIDDEN = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}  # controls, formats, separators, ...
VISIBLE_FORMATS = {"\u200d"}  # ...except the joiner inside emoji (👩‍💻), which is harmless


def escape(text: str, *, lines: bool = False) -> str:
    """``text`` with every invisible or reordering character written as ``\\uXXXX``.
    With ``lines=True`` newlines and tabs stay as they are (a streamed answer, a plan)."""
    kept = "\n\t" if lines else ""
    return "".join(_escaped(c) if unicodedata.category(c) in HIDDEN
                   and c not in VISIBLE_FORMATS and c not in kept else c for c in text)


def _escaped(c: str) -> str:
    return f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}"


def short(text: Any, limit: int = 60) -> str:
    """One line of at most ``limit`` characters, cut at a word boundary with ``…``, and
    escaped (model text is shown, never obeyed by the screen).

    Output whose first line says nothing (JSON starting with a bare ``{``) is flattened.
    """
    lines = [escape(line) for line in str(text).splitlines() if line.strip()] or [""]
    first = lines[0] if any(ch.isalnum() for ch in lines[0]) else " ".join(lines)
    line = " ".join(first.split()).rstrip(":")
    if len(line) <= limit:
        return line
    cut = line[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip(" ,;:") + "…"


def plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def tokens(usage: dict, key: str = "total_tokens") -> str:
    """A token count, with ``~`` when it is an estimate."""
    return f"{'~' if usage.get('estimated') else ''}{usage.get(key, 0):,}"


FAILED = {"error": "failed", "blocked": "blocked", "unknown_tool": "unknown tool",
          "invalid_arguments": "bad arguments", "duplicate_id": "duplicate call id",
          "disabled": "switched off"}


def format_event(event: Event) -> str | None:
    """One human line for an interesting event, indented by depth; None for the rest."""
    d, kind = event.data, event.type
    if kind == "run_start" and event.depth == 0:
        line = f"▶ task: {short(d['task'])}"
    elif kind == "tool_result":
        how = "" if d["ok"] else " " + FAILED.get(d.get("status"), "failed")
        line = f"{'✓' if d['ok'] else '✗'} {escape(d['tool_name'])}{how}: {short(d['output'])}"
    elif kind == "reminder":
        line = f"↻ reminder: plan not updated for {plural(d['rounds'], 'tool round')}"
    elif kind == "stop_gate":
        n = plural(len(d["open_items"]), "open item")
        line = f"↩ stop gate: answered with {n}, pushed back"
    elif kind == "subagent_start":
        line = f"↳ delegate to {d['child_id']}: {short(d['task'])}"
    elif kind == "subagent_end":
        line = (f"↳ {d['child_id']} {d['outcome']}: {plural(d['tool_calls'], 'tool call')}, "
                f"{tokens(d['usage'])} tokens")
    elif kind == "answer_refused":
        line = f"↩ answer refused by a stop hook: {short(d['reason'])}"
    elif kind == "tool_choice_fallback":
        wanted = d["requested"]
        if isinstance(wanted, dict):
            wanted = (wanted.get("function") or {}).get("name")
        line = f"⇣ forcing {escape(str(wanted))} refused by the server: sent {d['sent']!r}"
    elif kind == "model_partial":
        line = f"… stopped mid-reply: {short(d['text'] or d['reasoning'] or d['call'])}"
    elif kind == "compaction":
        line = (f"⇊ compacted: ~{d['before_tokens']:,} → ~{d['after_tokens']:,} tokens "
                f"of {d['window']:,} ({d['stubbed']} stubbed, {d['summarised']} summarised)")
    elif kind == "approval_request":
        line = f"? waiting for approval: {escape(d['tool_name'])}"
    elif kind == "approval_result":
        line = f"{'✓ approved' if d['approved'] else '✗ denied'}: {escape(d['tool_name'])}"
    elif kind == "run_end" and event.depth == 0:
        error = f": {short(d['error'])}" if d.get("error") else ""
        line = f"■ {d['outcome']} after {plural(d['turns'], 'turn')}{error}"
    else:
        return None
    return "  " * event.depth + escape(line)  # and whatever else came from outside in it
