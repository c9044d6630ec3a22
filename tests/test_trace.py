"""A run as OpenTelemetry spans (harness/trace/otel.py), read back from the SDK's in-memory
exporter: names, who hangs under whom, tokens, errors, what text leaves the run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from opentelemetry import trace
from opentelemetry.trace import StatusCode

import harness
from harness import (
    Agent,
    Permissions,
    RunResult,
    ScriptedModel,
    parallel,
    say,
    tool,
    tool_call,
)
from harness.models import parse_reply
from harness.subagent import SUBAGENT_SYSTEM
from harness.trace import OTelObserver

ROOT = Path(__file__).resolve().parent.parent
TASK = "Look up the secret word for order ORD-7 please"


@tool
def lookup(order: str) -> str:
    """Look an order up."""
    return f"order {order}: the secret word is marmalade"


@tool
def broken(order: str) -> str:
    """A tool that fails."""
    raise RuntimeError("the database is down")


@tool(parallel=True)
def slow_read(name: str) -> str:
    """Read a file slowly (it only reads: it may run beside others)."""
    time.sleep(0.05)
    return f"contents of {name}"


def usage(prompt: int, completion: int) -> dict:
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}


def with_usage(step: dict, prompt: int, completion: int) -> dict:
    return {**step, "usage": usage(prompt, completion)}


def traced(capture_content: bool = False) -> tuple[OTelObserver, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return OTelObserver(tracer_provider=provider, capture_content=capture_content), exporter


def named(spans, name: str):
    found = [s for s in spans if s.name == name]
    assert len(found) == 1, [s.name for s in spans]
    return found[0]


def parent_of(span, spans):
    return next((s for s in spans if span.parent and s.context.span_id == span.parent.span_id),
                None)


def delegating_run(observer: OTelObserver) -> RunResult:
    """main: lookup, then a delegation whose sub-agent calls lookup too, then an answer."""
    model = ScriptedModel([
        with_usage(tool_call("lookup", order="ORD-7", id="main_lookup"), 100, 10),
        with_usage(tool_call("delegate_task", task="Check ORD-8", id="delegation"), 150, 12),
        with_usage(tool_call("lookup", order="ORD-8", id="sub_lookup"), 40, 5),  # sub-agent
        with_usage(say("ORD-8 checked"), 60, 4),  # sub-agent
        with_usage(say("The secret word is marmalade."), 200, 8),
    ])
    agent = Agent(model, [lookup], subagents=True, subagent_tools=("lookup",),
                  observers=[observer])
    return agent.run(TASK)


def test_a_run_is_one_trace_of_agent_chat_and_tool_spans_with_the_sub_agent_inside():
    observer, exporter = traced()
    result = delegating_run(observer)
    spans = exporter.get_finished_spans()

    assert result.outcome == "completed"
    assert sorted(s.name for s in spans) == sorted([
        "invoke_agent main", "invoke_agent main.sub1", *["chat scripted"] * 5,
        "execute_tool lookup", "execute_tool lookup", "execute_tool delegate_task"])
    assert len({s.context.trace_id for s in spans}) == 1
    main = named(spans, "invoke_agent main")
    sub = named(spans, "invoke_agent main.sub1")
    delegation = named(spans, "execute_tool delegate_task")
    assert main.parent is None
    assert parent_of(delegation, spans) is main
    assert parent_of(sub, spans) is delegation  # under the call that started it
    by_call = {s.attributes["gen_ai.tool.call.id"]: s for s in spans
               if s.name == "execute_tool lookup"}
    assert parent_of(by_call["main_lookup"], spans) is main
    assert parent_of(by_call["sub_lookup"], spans) is sub
    chats = [s for s in spans if s.name.startswith("chat")]
    assert [parent_of(c, spans).name for c in sorted(chats, key=lambda s: s.start_time)] == [
        "invoke_agent main", "invoke_agent main", "invoke_agent main.sub1",
        "invoke_agent main.sub1", "invoke_agent main"]


def test_spans_carry_the_conventions_attributes_and_the_kinds_phoenix_reads():
    observer, exporter = traced()
    delegating_run(observer)
    spans = exporter.get_finished_spans()
    main = named(spans, "invoke_agent main")
    call = named(spans, "execute_tool delegate_task")
    chat = min((s for s in spans if s.name.startswith("chat")), key=lambda s: s.start_time)

    assert main.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert main.attributes["gen_ai.agent.name"] == "main"
    assert main.attributes["openinference.span.kind"] == "AGENT"
    assert chat.attributes["gen_ai.operation.name"] == "chat"
    assert chat.attributes["gen_ai.request.model"] == "scripted"
    assert chat.attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert chat.attributes["openinference.span.kind"] == "LLM"
    assert call.attributes["gen_ai.operation.name"] == "execute_tool"
    assert call.attributes["gen_ai.tool.name"] == "delegate_task"
    assert call.attributes["gen_ai.tool.call.id"] == "delegation"
    assert call.attributes["openinference.span.kind"] == "TOOL"


def test_each_chat_span_carries_its_requests_tokens():
    observer, exporter = traced()
    result = delegating_run(observer)
    chats = sorted((s for s in exporter.get_finished_spans() if s.name.startswith("chat")),
                   key=lambda s: s.start_time)

    assert [(c.attributes["gen_ai.usage.input_tokens"],
             c.attributes["gen_ai.usage.output_tokens"]) for c in chats] == [
        (100, 10), (150, 12), (40, 5), (60, 4), (200, 8)]
    assert sum(c.attributes["gen_ai.usage.input_tokens"] for c in chats) == \
        result.usage["prompt_tokens"]
    assert chats[0].attributes["llm.token_count.prompt"] == 100


def test_a_failed_call_has_status_error_and_a_good_one_does_not():
    observer, exporter = traced()
    model = ScriptedModel([tool_call("lookup", order="ORD-7"), tool_call("broken", order="X"),
                           tool_call("no_such_tool"), say("done")])
    Agent(model, [lookup, broken], observers=[observer]).run(TASK)
    spans = {s.name: s for s in exporter.get_finished_spans()}

    assert spans["execute_tool lookup"].status.status_code == StatusCode.UNSET
    assert spans["execute_tool broken"].status.status_code == StatusCode.ERROR
    assert spans["execute_tool broken"].attributes["error.type"] == "error"
    assert spans["execute_tool no_such_tool"].status.status_code == StatusCode.ERROR
    assert spans["execute_tool no_such_tool"].attributes["error.type"] == "unknown_tool"
    assert spans["invoke_agent main"].status.status_code == StatusCode.UNSET


def test_a_run_that_fails_marks_its_agent_span_and_its_open_request():
    observer, exporter = traced()
    Agent(ScriptedModel([]), observers=[observer]).run(TASK)  # no step: a model error
    spans = {s.name: s for s in exporter.get_finished_spans()}

    assert spans["invoke_agent main"].status.status_code == StatusCode.ERROR
    assert spans["invoke_agent main"].attributes["harness.outcome"] == "model_error"
    assert spans["chat scripted"].status.status_code == StatusCode.ERROR


def every_value(spans) -> str:
    """Everything a span holds as text: attributes, events' attributes, status, names."""
    found = []
    for s in spans:
        found += [s.name, str(s.status.description)]
        found += [json.dumps(v, default=str) for v in s.attributes.values()]
        found += [e.name + json.dumps(dict(e.attributes), default=str) for e in s.events]
    return "\n".join(found)


def test_no_text_of_the_conversation_by_default():
    observer, exporter = traced()
    delegating_run(observer)
    held = every_value(exporter.get_finished_spans())

    for text in ("secret word", "ORD-7", "Check ORD-8", "marmalade", "ORD-8 checked"):
        assert text not in held


def test_the_text_is_there_when_asked_for():
    observer, exporter = traced(capture_content=True)
    delegating_run(observer)
    spans = exporter.get_finished_spans()
    main = named(spans, "invoke_agent main")
    call = next(s for s in spans if s.attributes.get("gen_ai.tool.call.id") == "main_lookup")
    last_chat = max((s for s in spans if s.name.startswith("chat")), key=lambda s: s.start_time)

    assert main.attributes["input.value"] == TASK
    assert main.attributes["output.value"] == "The secret word is marmalade."
    assert json.loads(call.attributes["gen_ai.tool.call.arguments"]) == {"order": "ORD-7"}
    assert call.attributes["gen_ai.tool.call.result"] == \
        "order ORD-7: the secret word is marmalade"
    said = json.loads(last_chat.attributes["gen_ai.output.messages"])
    assert said[0]["parts"] == [{"type": "text", "content": "The secret word is marmalade."}]
    asked = json.loads(last_chat.attributes["gen_ai.input.messages"])
    assert asked[0]["parts"][0]["content"] == TASK


def test_a_request_thread_of_a_run_with_max_seconds_stays_in_the_runs_trace():
    """The reply is waited for in another thread (harness/waiting/): a span the model's
    own code makes there (an instrumented HTTP client) lands under the request's span."""
    observer, exporter = traced()
    tracer = observer.tracer_provider.get_tracer("a model's http client")
    threads = []

    def reply(messages):
        with tracer.start_as_current_span("POST /v1/chat/completions"):
            threads.append(threading.current_thread())
        return say("done")

    result = Agent(ScriptedModel([reply]), max_seconds=30, observers=[observer]).run(TASK)
    spans = exporter.get_finished_spans()
    http = named(spans, "POST /v1/chat/completions")

    assert result.outcome == "completed"
    assert threads and threads[0] is not threading.current_thread()  # a request thread
    assert len({s.context.trace_id for s in spans}) == 1
    assert parent_of(http, spans) is named(spans, "chat scripted")
    assert parent_of(named(spans, "chat scripted"), spans) is named(spans, "invoke_agent main")


def test_a_run_hangs_under_the_span_current_when_it_starts():
    observer, exporter = traced()
    tracer = observer.tracer_provider.get_tracer("a service")
    with tracer.start_as_current_span("handle request"):
        Agent(ScriptedModel([say("hi")]), observers=[observer]).run(TASK)
    spans = exporter.get_finished_spans()

    assert parent_of(named(spans, "invoke_agent main"), spans) is named(spans, "handle request")


class ByTask:
    """A model that answers from what it is asked, so that sub-agents may ask at once:
    main delegates 'a' and 'b' in one reply; each sub-agent reads its file, then answers."""

    model = "by-task"

    def complete(self, messages: list[dict], tools: list[dict], tool_choice=None):
        if messages[0]["content"] == SUBAGENT_SYSTEM:
            task = messages[1]["content"]
            if messages[-1]["role"] == "user":
                return parse_reply(tool_call("slow_read", name=task, id=f"read_{task}"))
            return parse_reply(say(f"read {task}"))
        if messages[-1]["role"] == "user":
            return parse_reply(parallel(tool_call("delegate_task", task="a", id="del_a"),
                                        tool_call("delegate_task", task="b", id="del_b")))
        return parse_reply(say("both read"))


def parallel_delegations(observer: OTelObserver) -> RunResult:
    return Agent(ByTask(), [slow_read], subagents=True, subagent_tools=("slow_read",),
                 observers=[observer]).run("read a and b")


def children_by_delegation(spans) -> dict[str, str]:
    """For each sub-agent's read: the call id of the delegation its agent hangs under."""
    found = {}
    for read in (s for s in spans if s.name == "execute_tool slow_read"):
        agent = parent_of(read, spans)
        delegation = parent_of(agent, spans)
        found[read.attributes["gen_ai.tool.call.id"]] = delegation.attributes[
            "gen_ai.tool.call.id"]
    return found


def test_sub_agents_that_run_at_once_each_hang_under_their_own_delegation():
    observer, exporter = traced()
    result = parallel_delegations(observer)
    spans = exporter.get_finished_spans()
    calls = {s.attributes["gen_ai.tool.call.id"]: s for s in spans
             if s.name == "execute_tool delegate_task"}

    assert result.outcome == "completed"
    assert children_by_delegation(spans) == {"read_a": "del_a", "read_b": "del_b"}
    assert calls["del_a"].start_time < calls["del_b"].end_time  # they overlap
    assert calls["del_b"].start_time < calls["del_a"].end_time


def test_a_saved_run_exports_the_same_spans_with_its_recorded_times(tmp_path):
    observer, exporter = traced()
    result = delegating_run(observer)
    live = sorted((s.name, s.start_time, s.end_time) for s in exporter.get_finished_spans())
    loaded = RunResult.load(result.save(tmp_path / "run.json"))
    again, exported = traced()
    again.export(loaded)

    assert sorted((s.name, s.start_time, s.end_time)
                  for s in exported.get_finished_spans()) == live
    assert min(start for _, start, _ in live) == int(result.events[0].at * 1e9)


def test_events_cut_off_mid_run_still_end_every_span_and_leave_no_context_behind():
    observer, exporter = traced()
    result = delegating_run(traced()[0])
    cut = result.events[:result.events.index(next(e for e in result.events
                                                  if e.type == "run_end"))]  # in the sub-agent
    observer.export(cut)
    spans = {s.name: s for s in exporter.get_finished_spans()}

    assert {"invoke_agent main", "invoke_agent main.sub1"} <= set(spans)
    assert spans["invoke_agent main"].status.status_code == StatusCode.ERROR
    assert spans["execute_tool delegate_task"].status.status_code == StatusCode.ERROR
    assert not trace.get_current_span().is_recording()  # nothing left attached here


def test_a_run_recorded_before_subagent_start_named_its_call_still_nests(tmp_path):
    """Older saved runs have no call_id on subagent_start: the n-th delegation of the
    parent is sub-agent n's."""
    observer, _ = traced()
    result = parallel_delegations(observer)
    data = json.loads(result.save(tmp_path / "run.json").read_text(encoding="utf-8"))
    for event in data["events"]:
        if event["type"] == "subagent_start":
            event.pop("call_id", None)
    (tmp_path / "old.json").write_text(json.dumps(data), encoding="utf-8")
    again, exported = traced()
    again.export(RunResult.load(tmp_path / "old.json"))

    assert children_by_delegation(exported.get_finished_spans()) == {
        "read_a": "del_a", "read_b": "del_b"}


def test_reminders_pushbacks_approvals_and_pauses_become_span_events():
    observer, exporter = traced()
    model = ScriptedModel([tool_call("todo_write", todos=[{"content": "Look it up",
                                                            "status": "in_progress"}]),
                           tool_call("lookup", order="ORD-7"), tool_call("lookup", order="1"),
                           say("early"), tool_call("refund", order="ORD-7")])

    @tool(side_effects=True)
    def refund(order: str) -> str:
        """Refund an order."""
        return "refunded"

    permissions = Permissions({"lookup": "allow", "refund": "ask", "todo_write": "allow"},
                              approve="pause")
    result = Agent(model, [lookup, refund], planning=True, reminder_after=2,
                   permissions=permissions, observers=[observer]).run(TASK)
    spans = exporter.get_finished_spans()
    main = named(spans, "invoke_agent main")
    events = [e.name for e in main.events]
    waiting = named(spans, "execute_tool refund")

    assert result.outcome == "awaiting_approval"
    assert {"reminder", "stop_gate", "awaiting_approval"} <= set(events)
    assert [e.name for e in waiting.events] == ["approval_request"]
    assert waiting.attributes["harness.tool.status"] == "pending"
    assert main.status.status_code == StatusCode.UNSET
    gate = next(e for e in main.events if e.name == "stop_gate")
    assert gate.attributes["open_items.count"] == 1  # counted; its text is not there


def test_a_compaction_is_a_span_event_and_its_summary_a_chat_span():
    observer, exporter = traced()
    ws = harness.Workspace.sample()
    model = ScriptedModel([
        tool_call("search_docs", query="refund business days", max_results=1),
        tool_call("search_docs", query="warranty year", max_results=1),
        tool_call("search_docs", query="standard shipping", max_results=1),
        tool_call("compact"),
        say("Done."),
    ], summaries=[say("Searched the policies.")])
    Agent(model, ws.tools, context_window=3_000, observers=[observer]).run("Policies?")
    spans = exporter.get_finished_spans()
    main = named(spans, "invoke_agent main")
    compaction = next(e for e in main.events if e.name == "compaction")

    assert compaction.attributes["before_tokens"] > compaction.attributes["after_tokens"]
    assert [s.attributes.get("harness.purpose") for s in spans
            if s.name.startswith("chat")].count("summary") == 1


def test_the_global_tracer_provider_is_used_when_none_is_given():
    """In a fresh interpreter: OpenTelemetry lets a process set its global provider once."""
    code = textwrap.dedent("""
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        from harness import Agent, ScriptedModel, say
        from harness.trace import OTelObserver
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        observer = OTelObserver()  # made before the provider is set: still reaches it
        trace.set_tracer_provider(provider)
        Agent(ScriptedModel([say("hi")]), observers=[observer]).run("hello")
        print(sorted(s.name for s in exporter.get_finished_spans()))
    """)
    out = run_python(code)

    assert out == "['chat scripted', 'invoke_agent main']"


def run_python(code: str) -> str:
    env = {k: v for k, v in os.environ.items()
           if k not in ("HARNESS_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL")}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=False,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_core_and_the_timeline_import_without_opentelemetry():
    out = run_python(textwrap.dedent("""
        import sys
        sys.modules["opentelemetry"] = None  # any `import opentelemetry...` now fails
        import harness
        from harness.trace import timeline
        result = harness.Agent(harness.ScriptedModel([harness.say("hi")])).run("hello")
        print(timeline(result).text().splitlines()[0])
        try:
            from harness.trace import OTelObserver
        except ImportError as exc:
            print(exc)
    """))

    first, error = out.splitlines()
    assert first.startswith("Timeline: 1 request, 0 tool calls")
    assert "pip install opentelemetry-api opentelemetry-sdk" in error
