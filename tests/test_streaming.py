"""Streaming over real HTTP: server-sent events chunk by chunk, from a local server.

What arrives is reported as it arrives (``model_delta`` events, never stored), a
streamed reply ends up exactly as the same reply sent whole, a broken stream is an
error and never a half tool call, and cancel or ``max_seconds`` close the connection
within 100 ms, keeping what arrived.
"""

from __future__ import annotations

import json
import threading
import time

import pytest

from harness import Agent, Event, OpenAIModel, tool
from harness.ui.panel import PanelState
from harness.live.stream_reader import StreamReader
from tests.fake_openai import FakeOpenAI, reply, streamed

pytest_plugins = ("tests.fake_openai",)

KEY = "sk-test-streaming-0123456789"
ADD = {"id": "call_add", "type": "function",
       "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'}}
MUL = {"id": "call_mul", "type": "function",
       "function": {"name": "mul", "arguments": '{"a": 4, "b": 5}'}}
LONG = " ".join(f"word{i}" for i in range(200))


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def mul(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


class Deltas:
    """An observer that keeps every model_delta with the time it arrived."""

    def __init__(self) -> None:
        self.seen: list[tuple[float, Event]] = []

    def __call__(self, event: Event) -> None:
        if event.type == "model_delta":
            self.seen.append((time.monotonic(), event))

    def text(self, kind: str = "text") -> str:
        return "".join(e.text for _, e in self.seen if e.kind == kind)


def model_for(server: FakeOpenAI, **settings: object) -> OpenAIModel:
    return OpenAIModel("m", base_url=server.base_url, api_key=KEY, max_retries=0,
                       settings=settings or None)


def test_text_is_reported_word_by_word_while_the_server_is_still_sending() -> None:
    deltas = Deltas()
    with FakeOpenAI([streamed(reply(content="The sum of two and three is five."),
                              interval=0.03)]) as server:
        result = Agent(model_for(server), observers=[deltas]).run("2 + 3?")
        last_sent = server.sent[-1]

    words = [e.text for _, e in deltas.seen if e.kind == "text"]
    assert words == ["The ", "sum ", "of ", "two ", "and ", "three ", "is ", "five."]
    assert deltas.seen[0][0] < last_sent  # the first word was out before the last chunk
    assert result.final == "The sum of two and three is five."
    assert not [e for e in result.events if e.type == "model_delta"]
    assert "model_delta" not in json.dumps(result.to_dict())


def test_a_streamed_reply_is_exactly_the_same_reply_sent_whole() -> None:
    message = {"content": "Let me work both out.", "reasoning_content": "Two sums.",
               "tool_calls": [ADD, MUL]}
    usage = {"prompt_tokens": 40, "completion_tokens": 20, "total_tokens": 60,
             "completion_tokens_details": {"reasoning_tokens": 5}}
    messages = [{"role": "user", "content": "2 + 3 and 4 * 5?"}]
    with FakeOpenAI([reply(message, usage=usage)] * 2) as server:
        whole = model_for(server, stream=False).complete(messages, [add.schema()], "auto")
        parts = model_for(server).complete(messages, [add.schema()], "auto")

    assert parts == whole
    assert parts.tool_calls == [ADD, MUL]
    assert parts.usage["reasoning_tokens"] == 5


def test_call_pieces_interleaved_between_two_calls_are_assembled_by_index() -> None:
    def piece(index: int, **fields: object) -> dict:
        return {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": index, **fields}]},
                             "finish_reason": None}]}

    chunks = [piece(0, id="call_add", type="function",
                    function={"name": "add", "arguments": ""}),
              piece(1, id="call_mul", type="function",
                    function={"name": "mul", "arguments": '{"a": 4'}),
              piece(0, function={"arguments": '{"a": 2, '}),
              piece(1, function={"arguments": ', "b": 5}'}),
              piece(0, function={"arguments": '"b": 3}'}),
              {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}]
    with FakeOpenAI([streamed(chunks=chunks)]) as server:
        reply_ = model_for(server).complete([{"role": "user", "content": "?"}], [add.schema()])

    assert reply_.tool_calls == [ADD, MUL]


def test_calls_streamed_without_index_or_id_get_ids_unique_in_the_run() -> None:
    def piece(**fields: object) -> dict:
        return {"choices": [{"index": 0, "delta": {"tool_calls": [fields]},
                             "finish_reason": None}]}

    calls = [piece(function={"name": "add", "arguments": '{"a": 2, "b": 3}'}),
             piece(function={"name": "mul", "arguments": '{"a": 4, '}),
             piece(function={"arguments": '"b": 5}'}),
             {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}]
    with FakeOpenAI([streamed(chunks=calls), streamed(chunks=calls),
                     reply(content="5 and 20")]) as server:
        result = Agent(model_for(server), [add, mul]).run("2 + 3 and 4 * 5, twice")

    outputs = [(e.call_id, e.output) for e in result.events if e.type == "tool_result"]
    assert [output for _, output in outputs] == ["5", "20", "5", "20"]
    assert len({call_id for call_id, _ in outputs}) == 4
    assert result.outcome == "completed"


def test_reasoning_and_call_arguments_are_reported_as_what_they_are() -> None:
    deltas = Deltas()
    with FakeOpenAI([reply({"reasoning_content": "I will add them.", "tool_calls": [ADD]}),
                     reply(content="<think>It is 5.</think>Five.")]) as server:
        result = Agent(model_for(server), [add], observers=[deltas]).run("2 + 3?")

    args = [(e.index, e.name) for _, e in deltas.seen if e.kind == "tool_call"]
    assert deltas.text("reasoning") == "I will add them.It is 5."
    assert "".join(e.text for _, e in deltas.seen if e.kind == "tool_call") == \
        ADD["function"]["arguments"]
    assert set(args) == {(0, "add")}
    assert deltas.text() == "Five."
    assert result.final == "Five."


def test_usage_comes_from_the_end_of_the_stream() -> None:
    usage = {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}
    with FakeOpenAI([reply(content="Hi", usage=usage)]) as server:
        result = Agent(model_for(server)).run("Hi")

    assert result.usage == {**usage, "estimated": False}


def test_a_stream_that_never_sends_usage_is_estimated_and_marked_so() -> None:
    with FakeOpenAI([reply(content="Hello there, how are you?")],
                    stream_usage=False) as server:
        result = Agent(model_for(server)).run("Hi")

    assert server.bodies[0]["stream_options"] == {"include_usage": True}  # asked, not given
    assert result.usage["estimated"] is True
    assert result.usage["prompt_tokens"] > 0 and result.usage["completion_tokens"] > 0


def test_a_stream_dropped_inside_a_calls_arguments_runs_no_tool() -> None:
    ran: list[int] = []

    @tool
    def record(a: int) -> str:
        """Record a number."""
        ran.append(a)
        return "ok"

    call = {"id": "c1", "type": "function",
            "function": {"name": "record", "arguments": '{"a": 1234567890}'}}
    with FakeOpenAI([streamed(reply(tool_calls=[call]), drop_after=4)]) as server:
        model = model_for(server)
        result = Agent(model, [record]).run("Record it")

    assert result.outcome == "model_error"
    assert "stream broke off" in result.error and "record" in result.error
    assert ran == [] and not [e for e in result.events if e.type == "tool_call"]
    assert model.partial.tool_calls[0]["function"]["arguments"] == '{"a": 12345678'


def test_a_stream_that_ends_without_a_finish_reason_is_not_taken_as_complete() -> None:
    with FakeOpenAI([streamed(reply(content="An answer that was cut"), finish=False,
                              done=False)]) as server:  # no finish_reason and no [DONE]
        result = Agent(model_for(server)).run("Hi")

    assert result.outcome == "model_error"
    assert "ended before the reply was finished" in result.error


def test_content_parts_are_streamed_as_reasoning_then_text() -> None:
    deltas = Deltas()
    parts = [{"type": "thinking", "thinking": [{"type": "text", "text": "Easy."}]},
             {"type": "text", "text": "4"}]
    with FakeOpenAI([reply({"content": parts})]) as server:
        result = Agent(model_for(server), observers=[deltas]).run("2 + 2?")

    assert (deltas.text("reasoning"), deltas.text(), result.final) == ("Easy.", "4", "4")


def press_after(deltas: int, button: threading.Event) -> tuple[list[float], object]:
    """An observer that sets ``button`` once ``deltas`` text pieces have arrived."""
    pressed: list[float] = []

    def watch(event: Event) -> None:
        if event.type == "model_delta" and event.kind == "text" and not pressed:
            watch.count = getattr(watch, "count", 0) + 1
            if watch.count == deltas:
                pressed.append(time.monotonic())
                button.set()

    return pressed, watch


def wait_for(condition, within: float = 2.0) -> None:
    deadline = time.monotonic() + within
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.005)


def test_cancel_closes_the_stream_within_100_ms_and_keeps_what_arrived() -> None:
    cancel, state = threading.Event(), PanelState()
    pressed, watch = press_after(5, cancel)
    with FakeOpenAI([streamed(reply(content=LONG), interval=0.02)]) as server:
        model = model_for(server)
        result = Agent(model, observers=[watch, state]).run("Count", cancel=cancel)
        wait_for(lambda: server.disconnects)
        closed = server.disconnects[0]

    print(f"\nstream closed {1000 * (closed - pressed[0]):.0f} ms after cancel")
    assert result.outcome == "cancelled"
    assert closed - pressed[0] <= 0.1
    wait_for(lambda: model.partial is not None)
    assert LONG.startswith(model.partial.content) and len(model.partial.content) >= 30
    assert "Answer so far (stopped): word0 word1 word2 word3 word4" in state.text()


@pytest.mark.parametrize("stop", ["cancel", "max_seconds"])
def test_a_silent_stream_is_closed_within_100_ms_of_the_stop(stop: str) -> None:
    cancel = threading.Event()
    with FakeOpenAI([streamed(reply(content=LONG), stall_after=4)]) as server:
        model = model_for(server)
        agent = Agent(model, max_seconds=0.4 if stop == "max_seconds" else None)
        started = time.monotonic()
        if stop == "cancel":
            threading.Timer(0.4, cancel.set).start()
        result = agent.run("Count", cancel=cancel)
        wait_for(lambda: server.disconnects)
        closed = server.disconnects[0]

    print(f"\nsilent stream closed {1000 * (closed - started - 0.4):.0f} ms after the stop")
    assert result.outcome == ("cancelled" if stop == "cancel" else "time_limit")
    assert closed - (started + 0.4) <= 0.1
    wait_for(lambda: model.partial is not None)
    assert model.partial.content == "word0 word1 word2 "  # the role, 3 words, then silence


def test_a_stream_read_to_its_end_is_not_shut_down_so_its_connection_can_be_reused() -> None:
    """stop() shuts the socket only of a stream still being read: a finished one may go
    back to the connection pool, and shutting it would break the next request."""
    class Socket:
        shut = False

        def shutdown(self, how: int) -> None:
            self.shut = True

    class Network:
        def __init__(self, sock: Socket) -> None:
            self.sock = sock

        def get_extra_info(self, name: str) -> Socket:
            return self.sock

    class Stream(list):
        def __init__(self, chunks: list, sock: Socket) -> None:
            super().__init__(chunks)
            self.response = type("Response", (), {"headers": {}, "extensions": {
                "network_stream": Network(sock)}})()

        def close(self) -> None:
            pass

    finished, cut = Socket(), Socket()
    reader = StreamReader(lambda: Stream([{"choices": []}], finished))
    list(reader.chunks(lambda *a, **k: None))
    reader.stop()
    blocked = threading.Event()
    stuck = StreamReader(lambda: Stream([{"choices": []}], cut) if blocked.wait(5) else None)
    stuck.stream = Stream([], cut)  # as if connected and waiting for the next chunk
    stuck.stop()
    blocked.set()

    assert (finished.shut, cut.shut) == (False, True)


def test_what_was_streamed_before_a_stop_is_kept_in_the_runs_events() -> None:
    from harness.scripted import ScriptedModel, say

    cancel = threading.Event()
    _, watch = press_after(5, cancel)
    model = ScriptedModel([say(LONG)], stream=True, delay=0.01)
    result = Agent(model, observers=[watch]).run("Count", cancel=cancel)

    assert result.outcome == "cancelled"
    partial = [e for e in result.events if e.type == "model_partial"]
    assert len(partial) == 1, [e.type for e in result.events]
    assert partial[0].text.startswith("word0 word1 word2 word3 word4")
    assert LONG.startswith(partial[0].text) and partial[0].text != LONG
    assert not any(e.type == "model_delta" for e in result.events)  # deltas are never stored
