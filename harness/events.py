"""Events: every step of a run, as a small record you can print, filter or save.

    run_start -> model_request -> model_reply -> tool_call -> tool_result -> ... -> run_end

Each event has a ``type``, the ``agent_id`` and ``depth`` of the agent that produced it
(0 for the top agent, 1 inside a sub-agent), and its data, readable as attributes
(``event.tool_name``) or keys (``event["tool_name"]``). Hooks, observers such as the
plan panel, and ``RunResult.events`` all see the same objects.

`format_event` is the one human line for an event (the panel's log and the terminal use
it); `notify` hands an event to observers.
"""

from __future__ import annotations

import unicodedata
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Event:
    """One step of a run."""

    type: str
    agent_id: str = "main"
    depth: int = 0
    data: dict[str, Any] = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        # Only called for names that are not real attributes. Read __dict__ directly:
        # copy and pickle call this on an empty instance, before `type` or `data` exist.
        data = self.__dict__.get("data", {})
        if name in data:
            return data[name]
        raise AttributeError(f"{self.__dict__.get('type', 'Event')!r} event has no field {name!r}")

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "agent_id": self.agent_id, "depth": self.depth, **self.data}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Event:
        d = dict(d)
        return cls(d.pop("type"), d.pop("agent_id", "main"), d.pop("depth", 0), d)

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={short(repr(v), 60)}" for k, v in self.data.items())
        where = f"{self.agent_id}" + (f"@{self.depth}" if self.depth else "")
        return f"Event({self.type} [{where}] {fields})"


TRANSIENT = frozenset({"model_delta"})  # shown to observers as they happen, never stored


def notify(observers: Iterable[Any], event: Event) -> None:
    """Hand ``event`` to each observer; a broken one is reported, and never changes the run."""
    for observer in observers:
        try:
            (observer.on_event if hasattr(observer, "on_event") else observer)(event)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # sys.exit() in an observer is only reported too
            warnings.warn(f"observer {observer!r} failed on a {event.type!r} event: "
                          f"{type(exc).__name__}: {exc}", RuntimeWarning, stacklevel=3)


# -- one human line per event ------------------------------------------------------------

HIDDEN = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}  # controls, formats, separators, ...
VISIBLE_FORMATS = {"\u200d"}  # ...except the joiner inside emoji (👩‍💻), which is harmless


def escape(text: str, *, lines: bool = False) -> str:
    """``text`` with every invisible or reordering character written as ``\\uXXXX``: an
    escape sequence cannot rewrite a terminal, a bidi control cannot reorder what you read.
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
        line = f"{'✓' if d['ok'] else '✗'} {d['tool_name']}{how}: {short(d['output'])}"
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
        line = f"⇣ forcing {wanted} refused by the server: sent {d['sent']!r}"
    elif kind == "model_partial":
        line = f"… stopped mid-reply: {short(d['text'] or d['reasoning'] or d['call'])}"
    elif kind == "approval_request":
        line = f"? waiting for approval: {d['tool_name']}"
    elif kind == "approval_result":
        line = f"{'✓ approved' if d['approved'] else '✗ denied'}: {d['tool_name']}"
    elif kind == "run_end" and event.depth == 0:
        error = f": {short(d['error'])}" if d.get("error") else ""
        line = f"■ {d['outcome']} after {plural(d['turns'], 'turn')}{error}"
    else:
        return None
    return "  " * event.depth + line
