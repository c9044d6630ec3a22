"""A run as OpenTelemetry spans, named as the GenAI semantic conventions name them, so
Phoenix, Jaeger, Langfuse or Logfire draw it with the rest of a service's traces.

    run_start ........................................ run_end   invoke_agent main   AGENT
      model_request ... model_reply                              chat <model>        LLM
      tool_call ....... tool_result                              execute_tool <name> TOOL
        subagent_start (call_id)
          run_start ... run_end                                  invoke_agent main.sub1,
                                                                 inside its delegate_task call
      reminder, stop_gate, compaction, approvals, a pause        span events

An observer sees each event as it happens (events.py), so a span starts at one event and
ends at another, with the event's own time (``event.at``): the same code exports a saved
run afterwards (`OTelObserver.export`). Each span also carries ``openinference.span.kind``,
the attribute Phoenix reads to tell an agent from a model request from a tool.

No text of the conversation leaves the run unless you ask (``capture_content=True``, the
conventions' opt-in): by default a span holds names, ids, counts, token usage, outcomes.

Where the spans hang: a run's span is a child of whatever span is current when the run
starts (your service's request, say). While a request is out, its ``chat`` span is the
current span of the run's thread, and the thread that waits for the reply (a run with
``max_seconds``: harness/waiting/) carries that context, so the spans an instrumented HTTP
client makes for the request land under it, in the run's trace. Calls that run at once
(rounds.py) each get a span; their results come in order after the last ends, so each of
their spans ends with the round.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from ..events import Event

try:
    from opentelemetry import context as otel_context
    from opentelemetry import trace
    from opentelemetry.trace import Span, SpanKind, Status, StatusCode
except ImportError as exc:  # the core never imports this module: only who traces does
    raise ImportError("harness.trace.OTelObserver needs OpenTelemetry: pip install "
                      "opentelemetry-api opentelemetry-sdk (or pip install \".[trace]\")"
                      ) from exc

FINE = ("completed", "awaiting_approval")  # other outcomes mark the agent's span ERROR
# strings of an event's data that are names, not text (an error may quote the answer)
SAFE_TEXT = ("tool_name", "outcome", "status", "child_id", "call_id", "purpose", "hook", "kind")
MAX_TEXT = 8_000  # characters of one captured attribute


@dataclass
class _Agent:
    """One agent's open spans within a run: its own, its request's, its calls'."""

    span: Span
    model: str | None
    token: Any = None  # the context attached on its thread while it runs
    chat: Span | None = None
    chat_token: Any = None
    calls: dict[str, Span] = field(default_factory=dict)  # open execute_tool spans by id
    delegations: list[str] = field(default_factory=list)  # its delegate_task call ids
    seen: list[dict] = field(default_factory=list)  # messages the events carry (content)


@dataclass
class _Trace:
    """A top-level run and its sub-agents: their spans, and where each child hangs."""

    agents: dict[str, _Agent] = field(default_factory=dict)
    parents: dict[str, Span] = field(default_factory=dict)  # child_id -> delegation's span


class OTelObserver:
    """Turns a run's events into spans: ``Agent(..., observers=[OTelObserver()])``.

    ``tracer_provider``: where the spans go (None: OpenTelemetry's global provider, as
    ``trace.set_tracer_provider`` set it). ``capture_content``: also record the task, the
    messages, tool arguments and results, the answer (off by default: they may hold what
    your users typed)."""

    def __init__(self, tracer_provider: Any = None, *, capture_content: bool = False) -> None:
        self.tracer_provider = tracer_provider
        self.capture_content = capture_content
        self._lock = threading.Lock()
        self._key = otel_context.create_key("harness.trace.run")  # this observer's runs
        self._last: _Trace | None = None  # for an event from a thread that lost the context

    def export(self, events: Any) -> None:
        """Send a finished run as spans: a `RunResult` (a saved one too) or its events,
        with the times they were recorded at (a run saved before events had times gets
        spans of no length)."""
        for event in getattr(events, "events", events):
            self.on_event(event)
        with self._lock:  # events cut off before their run ended: end what is still open
            run = self._run()
            for agent_id in reversed(list(run.agents) if run else []):  # children first
                end = Event("run_end", agent_id, data={"outcome": "cut_off"})
                self._run_end(run, run.agents[agent_id], end)

    def on_event(self, event: Any) -> None:
        with self._lock:  # runs of one agent in two threads of a service: their own traces
            if event.type == "run_start":
                return self._run_start(event)
            run = self._run()
            if run is None or event.agent_id not in run.agents:
                return None  # an observer added mid-run: nothing to hang the event on
            agent = run.agents[event.agent_id]
            handle = {"run_end": self._run_end, "model_request": self._model_request,
                      "model_reply": self._model_reply, "tool_call": self._tool_call,
                      "tool_result": self._tool_result,
                      "subagent_start": self._subagent_start}.get(event.type)
            if handle is not None:
                return handle(run, agent, event)
            if event.type != "model_delta":  # streamed text: too many, and text
                self._note(agent, event)
            return None

    # -- the run's own span ---------------------------------------------------------------

    def _run_start(self, event: Any) -> None:
        run = self._run() if event.depth else None
        if run is None:  # a top-level run, under the span current when it starts
            run = self._last = _Trace()
        parent = run.parents.pop(event.agent_id, None)
        where = otel_context.get_current()
        if parent is not None:
            where = trace.set_span_in_context(parent, where)
        model = event.get("model")
        span = self._tracer().start_span(
            f"invoke_agent {event.agent_id}", context=where, kind=SpanKind.INTERNAL,
            start_time=_ns(event), attributes=_clean({
                "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": event.agent_id,
                "gen_ai.agent.id": event.agent_id, "gen_ai.request.model": model,
                "openinference.span.kind": "AGENT", "harness.depth": event.depth,
                "harness.tools": [str(t) for t in event.get("tools") or ()]}))
        agent = run.agents[event.agent_id] = _Agent(span, model)
        if self.capture_content:
            span.set_attribute("input.value", _text(event.get("task")))
            agent.seen.append({"role": "user", "parts": [_part(event.get("task"))]})
        agent.token = otel_context.attach(otel_context.set_value(
            self._key, run, trace.set_span_in_context(span, where)))

    def _run_end(self, run: _Trace, agent: _Agent, event: Any) -> None:
        outcome = event.get("outcome")
        if agent.chat is not None:  # a request that never came back
            self._end_chat(agent, event, error=outcome)
        for call_id, span in list(agent.calls.items()):  # waiting for a person, or cut off
            waiting = outcome == "awaiting_approval"
            span.set_attribute("harness.tool.status", "pending" if waiting else "not_run")
            if not waiting:
                span.set_status(Status(StatusCode.ERROR, f"not run: the run ended {outcome}"))
            span.end(end_time=_ns(event))
            del agent.calls[call_id]
        if outcome == "awaiting_approval":
            agent.span.add_event("awaiting_approval", timestamp=_ns(event))
        agent.span.set_attributes(_clean({"harness.outcome": outcome,
                                          "harness.turns": event.get("turns")}))
        if outcome not in FINE:
            why = f"{outcome}: {event.get('error')}" if event.get("error") else outcome
            agent.span.set_status(Status(StatusCode.ERROR, str(why)[:300]))
        if self.capture_content and event.get("final") is not None:
            agent.span.set_attribute("output.value", _text(event.get("final")))
        agent.span.end(end_time=_ns(event))
        self._detach(agent.token)
        del run.agents[event.agent_id]

    # -- requests -------------------------------------------------------------------------

    def _model_request(self, run: _Trace, agent: _Agent, event: Any) -> None:
        if agent.chat is not None:  # a summary request that failed (the run went on)
            self._end_chat(agent, event, error="summary_failed")
        name = f"chat {agent.model}" if agent.model else "chat"
        agent.chat = self._tracer().start_span(
            name, context=trace.set_span_in_context(agent.span), kind=SpanKind.CLIENT,
            start_time=_ns(event), attributes=_clean({
                "gen_ai.operation.name": "chat", "gen_ai.request.model": agent.model,
                "llm.model_name": agent.model, "openinference.span.kind": "LLM",
                "harness.turn": event.get("turn"), "harness.purpose": event.get("purpose"),
                "harness.n_messages": event.get("n_messages"),
                "harness.tool_choice": _json(event.get("tool_choice"))}))
        if self.capture_content and not event.get("purpose"):
            messages = _json(agent.seen)
            agent.chat.set_attributes({"gen_ai.input.messages": messages,
                                       "input.value": messages,
                                       "input.mime_type": "application/json"})
        # the thread that waits for the reply copies this context: the model's own spans
        # (an instrumented HTTP client) land under this request
        current = otel_context.get_current()
        agent.chat_token = otel_context.attach(trace.set_span_in_context(agent.chat, current))

    def _model_reply(self, run: _Trace, agent: _Agent, event: Any) -> None:
        if agent.chat is None:
            return
        usage, reason = event.get("usage") or {}, event.get("finish_reason")
        message = event.get("message") or {}
        agent.chat.set_attributes(_clean({
            "gen_ai.usage.input_tokens": usage.get("prompt_tokens"),
            "gen_ai.usage.output_tokens": usage.get("completion_tokens"),
            "gen_ai.usage.cache_read.input_tokens": usage.get("cached_tokens"),
            "llm.token_count.prompt": usage.get("prompt_tokens"),
            "llm.token_count.completion": usage.get("completion_tokens"),
            "llm.token_count.total": usage.get("total_tokens"),
            "harness.usage.estimated": bool(usage.get("estimated")),
            "gen_ai.response.finish_reasons": [reason] if reason else None,
            "harness.tool_calls": len(message.get("tool_calls") or ())}))
        if self.capture_content:
            said = {"role": "assistant", "parts": _parts(message), "finish_reason": reason}
            agent.chat.set_attributes({"gen_ai.output.messages": _json([said]),
                                       "output.value": _text(message.get("content") or "")})
            if not event.get("purpose"):
                agent.seen.append({k: v for k, v in said.items() if k != "finish_reason"})
        self._end_chat(agent, event)

    def _end_chat(self, agent: _Agent, event: Any, error: str | None = None) -> None:
        if error is not None:
            agent.chat.set_status(Status(StatusCode.ERROR, f"no reply ({error})"))
            agent.chat.set_attribute("error.type", str(error))
        agent.chat.end(end_time=_ns(event))
        self._detach(agent.chat_token)
        agent.chat = agent.chat_token = None

    # -- tool calls and sub-agents --------------------------------------------------------

    def _tool_call(self, run: _Trace, agent: _Agent, event: Any) -> None:
        name, call_id = event.get("tool_name"), event.get("call_id")
        span = self._tracer().start_span(
            f"execute_tool {name}", context=trace.set_span_in_context(agent.span),
            kind=SpanKind.INTERNAL, start_time=_ns(event), attributes=_clean({
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
                "gen_ai.tool.call.id": call_id, "gen_ai.tool.type": "function",
                "tool.name": name, "openinference.span.kind": "TOOL",
                "harness.runnable": event.get("runnable")}))
        if self.capture_content:
            arguments = _json(event.get("arguments"))
            span.set_attributes({"gen_ai.tool.call.arguments": arguments,
                                 "input.value": arguments})
        agent.calls[call_id] = span
        if name == "delegate_task" and event.get("runnable"):
            agent.delegations.append(call_id)

    def _tool_result(self, run: _Trace, agent: _Agent, event: Any) -> None:
        span = agent.calls.pop(event.get("call_id"), None)
        if span is None:
            return
        status = event.get("status")
        span.set_attribute("harness.tool.status", str(status))
        if not event.get("ok"):
            span.set_status(Status(StatusCode.ERROR, f"the call failed: {status}"))
            span.set_attribute("error.type", str(status))
        if self.capture_content:
            output = _text(event.get("output"))
            span.set_attributes({"gen_ai.tool.call.result": output, "output.value": output})
            agent.seen.append({"role": "tool", "parts": [{
                "type": "tool_call_response", "id": event.get("call_id"), "response": output}]})
        span.end(end_time=_ns(event))

    def _subagent_start(self, run: _Trace, agent: _Agent, event: Any) -> None:
        """Where the child's span will hang: its delegation's call, by id (or, from a run
        recorded before events named it, the call its number says: main.sub2, the second)."""
        child = str(event.get("child_id"))
        call_id = event.get("call_id")
        if call_id is None:
            number = int(child.rsplit("sub", 1)[-1]) if child[-1:].isdigit() else 0
            found = agent.delegations[number - 1:number]
            call_id = found[0] if found else None
        span = agent.calls.get(call_id) or agent.span
        run.parents[child] = span
        span.add_event("subagent_start", {"child_id": child}, timestamp=_ns(event))

    # -- everything else: an event on the span it belongs to -----------------------------

    def _note(self, agent: _Agent, event: Any) -> None:
        """Reminders, the stop gate, compaction, approvals, a hook's failure...: a span
        event, with the numbers, names and flags of its data (its text when asked)."""
        span = agent.span
        if event.type in ("approval_request", "approval_result"):
            span = next((s for s in reversed(agent.calls.values())
                         if s.name == f"execute_tool {event.get('tool_name')}"), span)
        elif event.type in ("model_partial", "tool_choice_fallback") and agent.chat:
            span = agent.chat
        elif event.type == "subagent_end":
            span = agent.calls.get(event.get("call_id")) or span
        span.add_event(event.type, self._attributes(event.data), timestamp=_ns(event))
        if self.capture_content and event.type == "reminder":
            agent.seen.append({"role": "user", "parts": [_part(event.get("text"))]})

    def _attributes(self, data: dict) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for key, value in data.items():
            if isinstance(value, (bool, int, float)):
                found[key] = value
            elif isinstance(value, str) and (key in SAFE_TEXT or self.capture_content):
                found[key] = value[:MAX_TEXT]
            elif isinstance(value, (list, tuple, dict)):
                found[f"{key}.count"] = len(value)
                if self.capture_content:
                    found[key] = _json(value)
        return found

    # -- plumbing -------------------------------------------------------------------------

    def _tracer(self) -> Any:  # asked each time: a global provider set later still counts
        return trace.get_tracer("harness", tracer_provider=self.tracer_provider)

    def _run(self) -> _Trace | None:
        return otel_context.get_value(self._key) or self._last

    @staticmethod
    def _detach(token: Any) -> None:
        if token is not None:
            otel_context.detach(token)


def _ns(event: Any) -> int:
    at = getattr(event, "at", 0.0)
    return int(at * 1e9) if at else time.time_ns()


def _clean(attributes: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in attributes.items() if v is not None}


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)[:MAX_TEXT]


def _text(value: Any) -> str:
    return (value if isinstance(value, str) else _json(value))[:MAX_TEXT]


def _part(text: Any) -> dict:
    return {"type": "text", "content": _text(text)}


def _parts(message: dict) -> list[dict]:
    """A wire-format assistant message as the conventions' parts: its text, its calls."""
    parts = [_part(message["content"])] if message.get("content") else []
    for call in message.get("tool_calls") or ():
        function = call.get("function", {})
        parts.append({"type": "tool_call", "id": call.get("id"), "name": function.get("name"),
                      "arguments": function.get("arguments")})
    return parts
