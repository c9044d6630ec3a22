"""The call log: every tool call's intent on disk before it runs, its result after.

    log = CallLog("logs/run-42.jsonl")
    agent.run("the task", call_log=log)

From the controlled-execution article: save the intent, then execute, then save the
result; never replay a call id; never retry a call whose result is unknown.

- Before a call runs, its intent (agent, call id, tool, arguments) is appended to the
  file and flushed to disk. If that fails, the call does not run, and the model reads why.
- After the call, its result (status, ok, output). The model's replies are logged too,
  so even a run that crashed can be replayed: ``ScriptedModel.from_run(CallLog(log_path))``.
- A log that already holds entries is a run to resume: a call whose result is recorded
  is answered from the record, not run again; a call whose intent is recorded without a
  result is reported (status ``unknown``), never retried: nobody knows if it happened.

``CallLog.from_run(saved)`` makes a log from a saved run, for a replay that never
repeats a side effect: calls of tools with side effects (writing files, the shell,
command templates) get their recorded result; read-only tools run again for real.
"""

from __future__ import annotations

import json
import os
from contextlib import suppress
from pathlib import Path
from typing import Any

from ..events import Event
from ..tools import Tool, ToolResult

UNFINISHED = ("Not run again: this call was started before the run stopped, and its result is "
           "unknown (the call log has its intent, not its result). Find out what it did "
           "before you try it again.")


class CallLog:
    """Intent before, result after, one JSON line each; with a path, durable on disk."""

    def __init__(self, path: str | os.PathLike | None = None, *, reuse: str = "all") -> None:
        if reuse not in ("all", "side_effects", "none"):
            raise ValueError("reuse is 'all' (resume a run: nothing recorded runs again), "
                             "'side_effects' (replay one: read-only tools run again) or "
                             "'none' (every tool runs again)")
        self.path = Path(path) if path else None
        self.reuse = reuse
        self.entries: list[dict] = []
        if self.path and self.path.exists():  # resuming: what happened before this run
            text = self.path.read_text(encoding="utf-8")
            self.entries = [json.loads(line) for line in text.splitlines() if line.strip()]
        self._before = _outcomes(self.entries)

    @classmethod
    def from_run(cls, run: Any, *, reuse: str = "side_effects") -> CallLog:
        """A log of a saved run (a `RunResult` or the path of one) to replay it."""
        if isinstance(run, (str, os.PathLike)):
            events = json.loads(Path(run).read_text(encoding="utf-8"))["events"]
        else:
            events = [e.to_dict() for e in run.events]
        log = cls(reuse=reuse)
        for e in events:
            if e["type"] == "tool_result" and e["status"] in ("ok", "error", "recorded"):
                log.entries.append({"phase": "result", "agent_id": e["agent_id"],
                                    "call_id": e["call_id"], "tool": e["tool_name"],
                                    "status": e["status"], "ok": e["ok"], "output": e["output"]})
        log._before = _outcomes(log.entries)
        return log

    # -- the call path (calls.py) asks these ----------------------------------------------

    def recorded(self, agent_id: str, call_id: str, tool: Tool) -> tuple[str, ToolResult] | None:
        """How an earlier run answered this call: ``("recorded", result)``, ``("unknown",
        why)`` for a call that started and never finished, or None: run it."""
        before = self._before.get((agent_id, call_id))
        if before is None or self.reuse == "none" or (self.reuse == "side_effects"
                                                      and not tool.side_effects):
            return None
        if before["phase"] == "intent":
            return "unknown", ToolResult(False, UNFINISHED)
        return "recorded", ToolResult(before["ok"], before["output"])

    def intent(self, agent_id: str, call_id: str, tool: str, arguments: Any) -> None:
        """Record that a call is about to run, on disk. Raises `OSError` if it cannot."""
        self._write({"phase": "intent", "agent_id": agent_id, "call_id": call_id,
                     "tool": tool, "arguments": arguments}, durable=True)

    def result(self, agent_id: str, call_id: str, tool: str, status: str, ok: bool,
               output: str) -> None:
        self._write({"phase": "result", "agent_id": agent_id, "call_id": call_id,
                     "tool": tool, "status": status, "ok": ok, "output": output})

    def on_event(self, event: Event) -> None:
        """The model's replies, so a crashed run can be replayed. Best effort: a reply that
        cannot be written is only missing from the replay (the calls' intents are what
        must be on disk, and a call whose intent cannot be written does not run)."""
        if event.type == "model_reply":
            with suppress(OSError):
                self._write({"phase": "reply", "agent_id": event.agent_id,
                             "message": event.message, "usage": event.usage})

    def replies(self) -> list[dict]:
        """The model's logged replies, as steps for ``ScriptedModel`` (to replay a run)."""
        return [{**e["message"], **({} if e["usage"].get("estimated") else {"usage": e["usage"]})}
                for e in self.entries if e["phase"] == "reply"]

    def unfinished(self) -> list[dict]:
        """Calls whose intent was logged but whose result never came: report, never retry."""
        return [e for e in _outcomes(self.entries).values() if e["phase"] == "intent"]

    def _write(self, entry: dict, *, durable: bool = False) -> None:
        if self.path:
            line = json.dumps(entry, ensure_ascii=False, default=str) + "\n"
            with self.path.open("a", encoding="utf-8") as f:
                f.write(line)
                if durable:
                    f.flush()
                    os.fsync(f.fileno())
        self.entries.append(entry)


def _outcomes(entries: list[dict]) -> dict[tuple[str, str], dict]:
    """The last intent or result of each call, by (agent_id, call_id)."""
    last: dict[tuple[str, str], dict] = {}
    for entry in entries:
        if entry["phase"] in ("intent", "result"):
            last[(entry["agent_id"], entry["call_id"])] = entry
    return last
