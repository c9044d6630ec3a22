"""The call log: every tool call's intent on disk before it runs, its result after.

    log = CallLog("logs/run-42.jsonl")
    agent.run("the task", call_log=log)

From the controlled-execution article: save the intent, then execute, then save the
result; never replay a call id; never retry a call whose result is unknown.

- Before a call runs, its intent (agent, call id, tool, arguments) is appended to the
  file and flushed to disk. If that fails, the call does not run, and the model reads why.
- After the call, its result (status, ok, output). The model's replies are logged too,
  so even a run that crashed can be replayed offline, every recorded call answered from
  the log (give the run the log too, or its tools run again), or resumed against a live
  model with ``resumed(log, model)`` (resume.py):

      log = CallLog("logs/run-42.jsonl")
      Agent(ScriptedModel.from_run(log), tools).run("the task", call_log=log)

- A log that already holds entries is a run to resume: a call whose result is recorded
  is answered from the record, not run again; a call whose intent is recorded without a
  result is reported (status ``unknown``), never retried: nobody knows if it happened.
  Only *the same call* is answered: same agent, call id, tool and arguments (the ids the
  harness makes up, ``call_1_0``..., start again in every process, so an id alone says
  nothing). Arguments are compared as validated, canonical JSON.

``CallLog.from_run(saved)`` makes a log from a saved run, for a replay that never
repeats a side effect: calls of tools with side effects (writing files, the shell,
command templates) get their recorded result; read-only tools run again for real. A call
the recorded run did not finish (``unknown``, ``blocked``, ``unlogged``, interrupted
while it ran, ...) never runs in a replay: it is answered as it was then, with its status.

Every string from outside is written (a lone surrogate as the JSON escape ``\\udc80``,
read back as it was). A line that cannot be read (the last one torn by kill -9 or a
full disk, or a damaged one) is skipped with a warning: a torn intent is a call that
never started, since its intent is written in full before the tool runs; a torn result
leaves its intent, so that call is ``unknown``.
"""

from __future__ import annotations

import json
import os
import warnings
from contextlib import suppress
from pathlib import Path
from typing import Any

from ..events import Event
from ..tools import Tool, ToolResult

UNFINISHED = ("Not run again: this call was started before the run stopped, and its result is "
           "unknown (the call log has its intent, not its result). Find out what it did "
           "before you try it again.")
UNREADABLE = ("Not run again: the call log has a result under this call id, but its intent "
              "(tool and arguments) cannot be read, so nobody knows whether it was this "
              "call. Find out what it did before you try it again.")
RAN = ("ok", "error", "recorded")  # the tool ran (in the recorded run, or before it)
NOT_KNOWN = object()  # the arguments of a result whose intent line was lost


class CallLog:
    """Intent before, result after, one JSON line each; with a path, durable on disk."""

    def __init__(self, path: str | os.PathLike | None = None, *, reuse: str = "all") -> None:
        if reuse not in ("all", "side_effects", "none"):
            raise ValueError("reuse is 'all' (resume a run: nothing recorded runs again), "
                             "'side_effects' (replay one: read-only tools run again) or "
                             "'none' (every tool that finished runs again)")
        self.path = Path(path) if path else None
        self.reuse = reuse
        self.entries: list[dict] = []
        self._open_line = False  # the file ends inside a line (a torn write): start a new one
        if self.path and self.path.exists():  # resuming: what happened before this run
            self.entries, self._open_line = _read(self.path)
        self._asked: dict[tuple[str, str], Any] = {}  # the arguments each call was sent with
        self._before = _calls(self.entries)

    @classmethod
    def from_run(cls, run: Any, *, reuse: str = "side_effects") -> CallLog:
        """A log of a saved run (a `RunResult` or the path of one) to replay it."""
        from ..context.saved import _saved

        events = (_saved(run)["events"] if isinstance(run, (str, os.PathLike))
                  else [e.to_dict() for e in run.events])
        log, started = cls(reuse=reuse), {}
        for e in events:
            key = (e.get("agent_id"), e.get("call_id"))
            if e["type"] == "tool_call":
                started[key] = e
            elif e["type"] == "tool_result" and e["status"] != "duplicate_id":
                # (the harness refuses a reused id itself; its record would hide the call's)
                if key in started:
                    log.entries.append(_intent_of(started.pop(key)))
                log.entries.append({"phase": "result", "agent_id": key[0], "call_id": key[1],
                                    "tool": e["tool_name"], "status": e["status"],
                                    "ok": e["ok"], "output": e["output"]})
        for call in started.values():  # no result: it was running when the run stopped
            if call.get("runnable", True):
                log.entries.append(_intent_of(call))
        log._before = _calls(log.entries)
        return log

    # -- the call path (calls.py) asks these ----------------------------------------------

    def recorded(self, agent_id: str, call_id: str, tool: Tool,
                 arguments: str | None = None) -> tuple[str, ToolResult] | None:
        """How an earlier run answered this very call (same tool, same arguments), or None:
        run it. ``("recorded", result)`` for a call that finished; ``("unknown", why)`` for
        one that started and never finished; a call the replayed run did not run (blocked,
        unlogged, ...) keeps its status. Those last two never run. ``arguments``: the
        model's JSON text (by default, as its reply gave it: see `on_event`)."""
        before = self._before.get((agent_id, call_id))
        if not before:
            return None
        if arguments is None:
            arguments = self._asked.get((agent_id, call_id))
        asked = _canonical(tool, arguments)
        same = [c for c in before if c["tool"] == tool.name
                and _same(tool, c["arguments"], arguments, asked)]
        if not same:
            return None  # another call under the same id (ids restart in each process)
        call = same[-1]
        if call["arguments"] is NOT_KNOWN:
            return "unknown", ToolResult(False, UNREADABLE)
        if call["status"] not in RAN:  # never or maybe run: reported as it was, never run
            return call["status"] or "unknown", ToolResult(False, call["output"])
        if self.reuse == "none" or (self.reuse == "side_effects" and not tool.side_effects):
            return None
        return "recorded", ToolResult(call["ok"], call["output"])

    def intent(self, agent_id: str, call_id: str, tool: str, arguments: Any) -> None:
        """Record that a call is about to run, on disk. Raises `OSError` if it cannot."""
        self._write({"phase": "intent", "agent_id": agent_id, "call_id": call_id,
                     "tool": tool, "arguments": arguments}, durable=True)

    def result(self, agent_id: str, call_id: str, tool: str, status: str, ok: bool,
               output: str) -> None:
        self._write({"phase": "result", "agent_id": agent_id, "call_id": call_id,
                     "tool": tool, "status": status, "ok": ok, "output": output})

    def on_event(self, event: Event) -> None:
        """The model's replies, so a crashed run can be replayed (and so `recorded` knows
        each call's arguments). Best effort: a reply that cannot be written is only missing
        from the replay (the calls' intents are what must be on disk, and a call whose
        intent cannot be written does not run)."""
        if event.type == "model_reply":
            for call in event.message.get("tool_calls") or ():
                with suppress(AttributeError, KeyError, TypeError):
                    self._asked[(event.agent_id, call["id"])] = call["function"]["arguments"]
            purpose = {"purpose": event.purpose} if event.get("purpose") else {}
            with suppress(OSError):
                self._write({"phase": "reply", "agent_id": event.agent_id,
                             "message": event.message, "usage": event.usage, **purpose})

    def replies(self) -> list[dict]:
        """The model's logged replies, as steps for ``ScriptedModel`` (to replay a run); a
        summary's carries its ``purpose``, so it never answers for the agent."""
        steps = []
        for entry in self.entries:
            if entry["phase"] == "reply":
                usage = {} if entry["usage"].get("estimated") else {"usage": entry["usage"]}
                purpose = {"purpose": entry["purpose"]} if entry.get("purpose") else {}
                steps.append({**entry["message"], **usage, **purpose})
        return steps

    def unfinished(self) -> list[dict]:
        """Calls whose intent was logged but whose result never came: report, never retry."""
        return [c["intent"] for calls in _calls(self.entries).values() for c in calls
                if c["status"] is None]

    def _write(self, entry: dict, *, durable: bool = False) -> None:
        if self.path:
            data = _line(entry)
            try:
                with self.path.open("ab") as f:
                    f.write(b"\n" + data if self._open_line else data)
                    if durable:
                        f.flush()
                        os.fsync(f.fileno())
            except OSError:
                self._open_line = True  # part of the line may be on disk: the next starts anew
                raise
            self._open_line = False
        self.entries.append(entry)


def _intent_of(event: dict) -> dict:
    return {"phase": "intent", "agent_id": event.get("agent_id"),
            "call_id": event.get("call_id"), "tool": event["tool_name"],
            "arguments": event["arguments"]}


def _line(entry: dict) -> bytes:
    """One JSON line as UTF-8; a lone surrogate (a provider may send one) as ``\\udc80``,
    which JSON reads back as the same string. `OSError` if the entry is not JSON."""
    try:
        text = json.dumps(entry, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError) as exc:
        raise OSError(f"the entry cannot be written as JSON: {exc}") from None
    return (text + "\n").encode("utf-8", "backslashreplace")


def _read(path: Path) -> tuple[list[dict], bool]:
    """The entries of a log file, and whether it ends inside a line (a torn write).
    A line that is not an entry is skipped with a warning (see the module docstring)."""
    data = path.read_bytes()
    lines, entries = data.split(b"\n"), []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        entry, kept, start = _entry(line), False, 0
        while entry is None and (start := line.find(b'{"phase": ', start + 1)) > 0:
            entry = _entry(line[start:])  # an entry written after a torn one, on its line
            kept = entry is not None
        if entry is None or kept:
            last = n == len(lines) or (n == len(lines) - 1 and not lines[-1])
            why = ("is torn (its write was cut short: kill -9, a full disk; a torn intent is "
                   "a call that never started)" if last and not kept else
                   "is torn or not a call log entry")
            after = " (the entry written after it on the same line is kept)" if kept else ""
            warnings.warn(f"call log {path.name}: line {n} {why}: skipped{after}",
                          RuntimeWarning, stacklevel=3)
        if entry is not None:
            entries.append(entry)
    return entries, bool(data) and not data.endswith(b"\n")


FIELDS = {"intent": ("agent_id", "call_id", "tool", "arguments"),
          "result": ("agent_id", "call_id", "tool", "status", "ok", "output"),
          "reply": ("agent_id", "message", "usage")}


def _entry(line: bytes) -> dict | None:
    """One log line as an entry, or None if it is not one (torn, damaged, not ours)."""
    try:
        entry = json.loads(line.decode("utf-8"))
    except (ValueError, RecursionError):  # not UTF-8 (a torn character), not JSON
        return None
    phase = entry.get("phase") if isinstance(entry, dict) else None
    if phase not in FIELDS or any(key not in entry for key in FIELDS[phase]):
        return None
    if phase == "reply":
        whole = isinstance(entry["message"], dict) and isinstance(entry["usage"], dict)
    else:
        text = ("agent_id", "call_id", "tool") + (("status", "output") if phase == "result" else ())
        whole = all(isinstance(entry[key], str) for key in text)
    return entry if whole else None


def _calls(entries: list[dict]) -> dict[tuple[str, str], list[dict]]:
    """Every call of the log by (agent_id, call_id), in order: its tool and arguments (from
    its intent) and how it ended (status None: intent only, the result is unknown)."""
    calls: dict[tuple[str, str], list[dict]] = {}
    for entry in entries:
        if entry["phase"] not in ("intent", "result"):
            continue
        here = calls.setdefault((entry["agent_id"], entry["call_id"]), [])
        if entry["phase"] == "intent":
            here.append({"tool": entry["tool"], "arguments": entry["arguments"],
                         "status": None, "ok": False, "output": UNFINISHED, "intent": entry})
            continue
        call = next((c for c in reversed(here)
                     if c["status"] is None and c["tool"] == entry["tool"]), None)
        if call is None:  # a result whose intent was lost: it ran, with arguments unknown
            here.append(call := {"tool": entry["tool"], "arguments": NOT_KNOWN, "intent": {}})
        call.update(status=entry["status"], ok=bool(entry["ok"]), output=entry["output"])
    return calls


def _canonical(tool: Tool, arguments: Any) -> str | None:
    """The call's arguments as the tool validates them, as canonical JSON; None if not valid."""
    if arguments is None:
        return None
    if isinstance(arguments, dict):
        return _json(arguments)
    try:
        return _json(tool.parse(arguments).model_dump(mode="json"))
    except Exception:  # refused: the call path says why when it parses them itself
        return None


def _same(tool: Tool, recorded: Any, arguments: Any, asked: str | None) -> bool:
    """Were the recorded arguments (validated JSON, or the raw text of a refused call)
    those of the call asked now?"""
    if recorded is NOT_KNOWN:  # it ran, with arguments nobody can read: not run again
        return True
    if isinstance(recorded, str):
        return recorded == arguments or (asked is not None and _canonical(tool, recorded) == asked)
    return asked is not None and _json(recorded) == asked


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=True, default=str)
