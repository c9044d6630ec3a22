"""``python -m harness doctor --live``: what the configured endpoint can do, asked live.

Providers differ in what the harness relies on: tool calls, forcing a tool
(``tool_choice``), usage at the end of a stream, reasoning fields. A few tiny requests
find out, before a lesson depends on it:

    1. tools, tool_choice "auto"     does the model call a tool at all?
    2. a named tool_choice           refused by DeepSeek's thinking mode, some hosts
    3. tool_choice "required"        refused by some servers (older vLLM)
    4. a stream with usage           stream_options.include_usage: usage at the end?
    5. a reasoning field             reasoning_content / reasoning / <think> / parts

The requests are read as a run reads them (the reply's size limit, the harness's own
reading of the bytes) but not through `OpenAIModel.complete`, whose fallbacks would hide
what the server refuses. Each is given `PROBE_SECONDS` at most (or the model's own
``max_reply_seconds``, when shorter), however busy a server keeps the line with
keep-alive comments, and all of them `PROBE_TOTAL_SECONDS`: then the probe stops, and
says which checks it could not finish (their settings stay as the model has them). `probe`
returns the checks and the settings the harness will use; `print_probe` prints them as a
table.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from ..models import parse_reply
from .openai_model import OpenAIModel, Reading, Within
from .settings import TOOL_CHOICES

ECHO = {"type": "function", "function": {
    "name": "echo", "description": "Say a word back.",
    "parameters": {"type": "object", "properties": {"word": {"type": "string"}},
                   "required": ["word"]}}}
ASK = [{"role": "user", "content": "Call the echo tool with the word 'ping'."}]
NAMED = {"type": "function", "function": {"name": "echo"}}
PROBE_SECONDS = 30.0  # the most one probe request may take (a local server loads its model)
PROBE_TOTAL_SECONDS = 60.0  # the most the whole probe may take
NAMED_CHECK, REQUIRED_CHECK = "named tool_choice", 'tool_choice "required"'


@dataclass
class Check:
    """One thing asked of the endpoint, and what it answered."""

    name: str
    ok: bool
    note: str = ""
    finished: bool = True
    """False: the probe's time ran out before this check had its answer."""


class _OutOfTime(Exception):
    """The probe's ``total`` seconds are spent: nothing more is asked."""


class _Clock:
    """The probe's time: ``each`` seconds at most for one request, ``total`` for all."""

    def __init__(self, each: float, total: float) -> None:
        self.each, self.total = each, total
        self.end = time.monotonic() + total

    def within(self) -> Within:
        """The limits of the next request: ``each``, or the time left when shorter."""
        left = self.end - time.monotonic()
        if left <= 0:
            raise _OutOfTime
        if left < self.each:
            name = f"the probe's {self.total:g} s in all"
            return left, None, (name, name)
        return self.each, None, ("the probe's limit", "the probe's limit")

    def over(self) -> bool:
        return time.monotonic() >= self.end


def probe(model: OpenAIModel, seconds: float | None = None, total: float | None = None
          ) -> tuple[list[Check], dict[str, Any]]:
    """Ask the endpoint; return the checks and the settings the harness will use.
    ``seconds``: the most each request may take (`PROBE_SECONDS`, or the model's own
    ``max_reply_seconds`` when shorter); ``total``: the most the whole probe may take
    (`PROBE_TOTAL_SECONDS`). A check the time cut short is ``finished=False``, and the
    settings it would have decided stay as the model has them."""
    each = min(s for s in (PROBE_SECONDS if seconds is None else seconds,
                           model.settings.max_reply_seconds) if s is not None)
    clock = _Clock(each, PROBE_TOTAL_SECONDS if total is None else total)
    found: list[dict] = []  # every reply message, to look for reasoning in
    checks = [_tools(model, choice, label, found, clock) for choice, label in (
        ("auto", "tool calls (auto)"), (NAMED, NAMED_CHECK), ("required", REQUIRED_CHECK))]
    checks += _stream(model, found, clock)
    fields = sorted({key for m in found for key in ("reasoning_content", "reasoning",
                                                   "reasoning_details") if m.get(key)})
    thought = any(parse_reply(m).reasoning for m in found)
    seen = bool(fields) or thought
    checks.append(Check("reasoning field", seen,
                        ", ".join(fields) or ("in the content" if thought else "none seen"),
                        finished=seen or all(check.finished for check in checks)))
    ok = {check.name: check.ok for check in checks if check.finished}
    now = model.settings
    settings = {**now.shown(), "forced_tool_choice": _forced(ok, now.forced_tool_choice),
                "stream": ok.get("streaming", now.stream),
                "stream_usage": ok.get("usage in a stream", now.stream_usage)}
    return checks, settings


def _forced(ok: dict[str, bool], now: str) -> str:
    """The strongest forcing the server accepted; from a check not finished on, what the
    model has now (never stronger than a forcing the server refused)."""
    for level, name in (("named", NAMED_CHECK), ("required", REQUIRED_CHECK)):
        if name not in ok:
            return max(now, level, key=TOOL_CHOICES.index)  # the weaker of the two
        if ok[name]:
            return level
    return "auto"


def print_probe(checks: list[Check], settings: dict[str, Any], model: OpenAIModel) -> None:
    from ..ui.display import escape  # what a server says is shown, never obeyed

    print(escape(f"\nlive checks against {model!r}:", lines=True))
    print(f"  {'check':<24} {'result':<7} note")
    for check in checks:
        result = ("yes" if check.ok else "no") if check.finished else "?"
        print(escape(f"  {check.name:<24} {result:<7} {check.note}"))
    unknown = [check.name for check in checks if not check.finished]
    if unknown:
        print(escape(f"stopped: the probe ran out of time; not known (\"?\"): "
                     f"{', '.join(unknown)}. The settings for those stay as they are: ask "
                     "again when the server answers sooner."))
    changed = {key: value for key, value in settings.items()
               if key in model.settings.request or value != getattr(model.settings, key, None)}
    print(escape(f"settings the harness will use: {json.dumps(settings)}"))
    if changed:
        print(escape(f"to use them every time: HARNESS_MODEL_SETTINGS='{json.dumps(changed)}'"))


def _ask(model: OpenAIModel, clock: _Clock, tools: list[dict] | None = None,
         choice: Any = None, **stream: Any) -> Reading:
    """One tiny request, built as a run builds it (`OpenAIModel._request`: the settings, the
    model name), streamed only as ``stream`` says, read within the probe's limits."""
    request = model._request(ASK, tools or [], choice, None)
    request.pop("stream", None)
    request.pop("stream_options", None)
    return model._read({**request, **stream}, _quiet, clock.within())


def _tools(model: OpenAIModel, choice: Any, label: str, found: list[dict],
           clock: _Clock) -> Check:
    try:
        message = _ask(model, clock, [ECHO], choice).message
    except Exception as exc:
        return _failed(label, model, exc, clock)
    found.append(message)
    calls = [(c.get("function") or {}).get("name") for c in message.get("tool_calls") or ()
             if isinstance(c, dict)]
    if choice == "auto":
        return Check(label, bool(calls), f"called {calls[0]}" if calls else
                     "answered in text instead of calling the tool")
    return Check(label, True, "accepted" + ("" if calls else ", but no tool was called"))


def _stream(model: OpenAIModel, found: list[dict], clock: _Clock) -> list[Check]:
    note = ""
    try:
        try:
            reading = _ask(model, clock, stream=True, stream_options={"include_usage": True})
        except Exception as exc:
            if "stream_options" not in str(exc):
                raise
            note = "stream_options refused: usage is estimated"
            reading = _ask(model, clock, stream=True)
    except Exception as exc:
        streaming = _failed("streaming", model, exc, clock)
        return [streaming, Check("usage in a stream", False, "not tried" if streaming.finished
                                 else streaming.note, finished=streaming.finished)]
    found.append(reading.message)
    return [Check("streaming", True, f"{reading.chunks} chunks"),
            Check("usage in a stream", reading.usage is not None,
                  note or ("" if reading.usage else "none sent: usage is estimated"))]


def _failed(name: str, model: OpenAIModel, exc: Exception, clock: _Clock) -> Check:
    """A check that got no answer: refused, or (``finished=False``) cut by the probe's time."""
    if clock.over():
        return Check(name, False, f"not known: the probe's {clock.total:g} s ran out",
                     finished=False)
    return Check(name, False, _said(model, exc))


def _said(model: OpenAIModel, exc: Exception) -> str:
    """A refusal in one short line, without the key."""
    text = " ".join(f"{type(exc).__name__}: {getattr(exc, 'message', exc)}".split())
    return model.redact(text)[:110]


def _quiet(event_type: str | None = None, **data: Any) -> None:
    """Nobody listens to a probe's stream."""
