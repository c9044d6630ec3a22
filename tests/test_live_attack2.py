"""Issue 17, second outside attack: the live model's findings, each against a local server.

Whatever a provider (or something posing as one) sends, a run ends with a `RunResult`
in bounded time and memory, keeps a finished answer, and sends back exactly what the
provider needs. Each test names its finding (M5, M6, M11: mediums; Low; Real: the
recorded provider traffic, tests/fixtures/live_attack2, see NOTICE.md there).
"""

from __future__ import annotations

import base64
import gzip
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from harness import Agent, OpenAIModel, tool
from harness.live.probe import probe
from harness.live.settings import ModelSettings
from harness.live.wire import ThinkSplitter, parse_reply
from harness.models import ModelError
from tests.fake_openai import (DEFAULT_USAGE, FakeOpenAI, Scripted, keep_alive, raw_sse, reply,
                               streamed, unauthorized)

pytest_plugins = ("tests.fake_openai",)

KEY = "sk-test-attack2-5c0f1e2d3c4b5a69"
FIXTURES = Path(__file__).parent / "fixtures" / "live_attack2"
ADD = {"id": "call_add", "type": "function",
       "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'}}


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def model_for(server: FakeOpenAI, **settings: Any) -> OpenAIModel:
    return OpenAIModel("m", base_url=server.base_url, api_key=KEY, max_retries=0,
                       settings=settings or None)


def chunk(delta: dict | None = None, finish: str | None = None, **top: Any) -> dict:
    return {"choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}], **top}


def whole(message: dict, finish: Any = "stop", usage: dict | None = DEFAULT_USAGE) -> Scripted:
    """A whole completion exactly as given (``reply`` would replace a falsy finish_reason)."""
    return Scripted(choices=[{"index": 0, "message": {"role": "assistant", **message},
                              "finish_reason": finish}], usage=usage)


def wait_for(condition: Any, seconds: float = 3.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.01)
    return bool(condition())


def load(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


def served(interaction: dict) -> Scripted:
    """A recorded response as it went over the wire (streamed bodies as recorded)."""
    response = interaction["response"]
    headers = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
    kind = (headers.get("content-type") or ["application/json"])[0]
    body = (json.dumps(response["parsed_body"]) if "parsed_body" in response
            else response["body"]["string"])
    return Scripted(status=response["status"]["code"], body=body.encode(),
                    headers={"Content-Type": kind})


# -- M5: no size cap on a reply -----------------------------------------------------------

CAP = 100_000
PIECE = "x" * 1000
BIG = 2_000_000  # what each attack below sends: 20 times the cap it is given
TOO_BIG = {  # attack: (the answer queued, the cap set)
    "text in pieces": lambda: (streamed(chunks=[chunk({"content": PIECE})
                                                for _ in range(BIG // 1000)]
                                        + [chunk(finish="stop")]), CAP),
    "one huge chunk": lambda: (streamed(chunks=[chunk({"content": "y" * BIG}),
                                                chunk(finish="stop")]), CAP),
    "tool-call arguments": lambda: (streamed(chunks=[
        chunk({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                               "function": {"name": "add", "arguments": '{"a": "'}}]})]
        + [chunk({"tool_calls": [{"index": 0, "function": {"arguments": PIECE}}]})
           for _ in range(BIG // 1000)] + [chunk(finish="tool_calls")]), CAP),
    "reasoning in pieces": lambda: (streamed(chunks=[chunk({"reasoning_content": PIECE})
                                                     for _ in range(BIG // 1000)]
                                             + [chunk(finish="stop")]), CAP),
    "reasoning blocks": lambda: (streamed(chunks=[
        chunk({"reasoning_details": [{"type": "reasoning.text", "text": PIECE, "index": i}]})
        for i in range(BIG // 1000)] + [chunk(finish="stop")]), CAP),
    "chunks that carry nothing": lambda: (streamed(chunks=[chunk({})] * 20_000
                                                   + [chunk(finish="stop")]), 5_000),
    "a whole reply": lambda: (reply(content="z" * BIG), CAP),
    "a whole reply, gzipped": lambda: (Scripted(body=gzip.compress(json.dumps({
        "id": "x", "object": "chat.completion", "choices": [{
            "index": 0, "message": {"role": "assistant", "content": "g" * BIG},
            "finish_reason": "stop"}]}).encode()), headers={"Content-Encoding": "gzip"}), CAP),
}


@pytest.mark.parametrize("attack", sorted(TOO_BIG))
def test_m5_a_reply_over_max_reply_chars_is_a_model_error_naming_the_cap(attack: str) -> None:
    stream = "whole" not in attack
    answer, cap = TOO_BIG[attack]()
    with FakeOpenAI([answer]) as server:
        model = model_for(server, stream=stream, max_reply_chars=cap)
        started = time.monotonic()
        result = Agent(model, [add]).run("Hi")
        seconds = time.monotonic() - started

    assert result.outcome == "model_error", (result.outcome, result.final and len(result.final))
    assert "max_reply_chars" in result.error and str(cap) in result.error.replace(",", "")
    assert seconds < 5
    assert not [e for e in result.events if e.type == "tool_call"]


def test_m5_the_default_cap_is_a_few_megabytes_of_text_and_a_reply_under_it_is_whole() -> None:
    assert 1_000_000 <= ModelSettings().max_reply_chars <= 4_000_000
    text = "w" * 90_000
    with FakeOpenAI([reply(content=text), reply(content=text)]) as server:
        streamed_ = Agent(model_for(server, max_reply_chars=CAP)).run("Hi")
        whole_ = Agent(model_for(server, max_reply_chars=CAP, stream=False)).run("Hi")

    assert (streamed_.outcome, streamed_.final) == ("completed", text)
    assert (whole_.outcome, whole_.final) == ("completed", text)
    with pytest.raises(ValueError, match="max_reply_chars"):
        ModelSettings.resolve({"max_reply_chars": 0})


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
def test_m5_reasoning_sent_back_on_later_requests_is_capped(stream: bool) -> None:
    reasoning = "r" * 150_000
    with FakeOpenAI([reply({"reasoning_content": reasoning, "tool_calls": [ADD]}),
                     reply(content="5"), reply(content="6")]) as server:
        model = model_for(server, stream=stream, max_echoed_reasoning_chars=10_000)
        result = Agent(model, [add]).run("2 + 3?")
        again = Agent(model, [add]).run("and now?", messages=result.messages)
        bodies = server.bodies

    assert (result.outcome, result.final, again.outcome) == ("completed", "5", "completed")
    for body in bodies[1:]:
        sent = next(m for m in body["messages"] if m.get("tool_calls"))["reasoning_content"]
        assert sent.startswith("r" * 9_000) and len(sent) <= 10_200
    shown = next(e for e in result.events if e.type == "model_reply").reasoning
    assert shown == reasoning  # what the run shows is whole; only what goes back is cut
    assert ModelSettings().max_echoed_reasoning_chars < ModelSettings().max_reply_chars


# -- M6: <think> in quadratic time; the thread left behind ---------------------------------

THINKS = "<think></think>" * 100_000 + "The answer."


def test_m6_think_blocks_are_split_in_linear_time() -> None:
    started = time.perf_counter()
    parsed = parse_reply({"content": THINKS})
    one_piece = ThinkSplitter().feed(THINKS)
    splitter = ThinkSplitter()
    spaced = [kind_text for _ in range(100_000) for kind_text in splitter.feed("  ")]
    spaced += splitter.feed("<think>why</think>  so.")
    open_ = ThinkSplitter()
    unclosed = open_.feed("<think>")
    unclosed += [kt for _ in range(50_000) for kt in open_.feed("still thinking </thi")]
    seconds = time.perf_counter() - started

    assert parsed.content == "The answer."
    assert "".join(t for k, t in one_piece if k == "text") == "The answer."
    assert ("reasoning", "why") in spaced and "".join(
        t for k, t in spaced if k == "text").strip() == "so."
    assert len("".join(t for _, t in unclosed)) >= 50_000 * 15  # passed on, never held
    assert seconds < 3, f"{seconds:.2f} s"  # quadratic, the first alone took 11 s


def test_m6_a_reply_of_many_think_blocks_is_answered_in_time() -> None:
    with FakeOpenAI([streamed(chunks=[chunk({"content": THINKS}), chunk(finish="stop")]),
                     reply(content=THINKS)]) as server:
        started = time.monotonic()
        streamed_ = Agent(model_for(server), max_seconds=5).run("Hi")
        whole_ = Agent(model_for(server, stream=False), max_seconds=5).run("Hi")
        seconds = time.monotonic() - started

    assert (streamed_.outcome, streamed_.final) == ("completed", "The answer.")
    assert (whole_.outcome, whole_.final) == ("completed", "The answer.")
    assert seconds < 4


def streaming_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "harness-stream" and t.is_alive()]


def test_m6_after_max_seconds_nothing_keeps_reading_the_stream() -> None:
    """Chunks that carry nothing, every 2 ms for 12 s: no delta is reported and the
    queue is never empty for long, so only a regular check can tell the reading to stop
    once the run has given up."""
    flood = [chunk({})] * 6000
    with FakeOpenAI([streamed(chunks=flood, interval=0.002)]) as server:
        result = Agent(model_for(server), max_seconds=0.3).run("Hi")
        ended = time.monotonic()
        left = wait_for(lambda: server.disconnects, 2.0)
        quiet = wait_for(lambda: not streaming_threads(), 2.0)
        disconnects = list(server.disconnects)

    assert result.outcome == "time_limit"
    assert left and disconnects[0] - ended < 1.0, "the client kept reading after the run ended"
    assert quiet


# -- M11: keep-alive comments forever --------------------------------------------------------

def test_m11_a_stream_of_only_keep_alive_comments_ends_in_a_model_error() -> None:
    with FakeOpenAI([keep_alive(0.05)]) as server:
        started = time.monotonic()
        result = Agent(model_for(server, max_idle_seconds=0.4)).run("Hi")  # no max_seconds
        seconds = time.monotonic() - started

    assert result.outcome == "model_error"
    assert "max_idle_seconds" in result.error and "keep-alive" in result.error
    assert seconds < 3


def test_m11_chunks_that_carry_nothing_do_not_count_as_a_reply_arriving() -> None:
    with FakeOpenAI([streamed(chunks=[chunk({})] * 500, interval=0.05)]) as server:
        started = time.monotonic()
        result = Agent(model_for(server, max_idle_seconds=0.4)).run("Hi")

    assert result.outcome == "model_error" and "max_idle_seconds" in result.error
    assert time.monotonic() - started < 3


def test_m11_a_reply_that_keeps_coming_is_cut_at_max_reply_seconds() -> None:
    words = " ".join(f"w{i}" for i in range(2000))
    with FakeOpenAI([streamed(reply(content=words), interval=0.01)]) as server:
        model = model_for(server, max_reply_seconds=0.5)
        started = time.monotonic()
        result = Agent(model).run("Hi")
        seconds = time.monotonic() - started

    assert result.outcome == "model_error" and "max_reply_seconds" in result.error
    assert seconds < 2.5
    assert model.partial is not None and words.startswith(model.partial.content)


def test_m11_a_whole_reply_that_only_sends_blank_lines_is_cut_at_max_reply_seconds() -> None:
    with FakeOpenAI([keep_alive(0.05, whole=True)]) as server:
        started = time.monotonic()
        result = Agent(model_for(server, stream=False, max_reply_seconds=0.5)).run("Hi")
        seconds = time.monotonic() - started

    assert result.outcome == "model_error" and "max_reply_seconds" in result.error
    assert seconds < 2.5


def test_m11_the_probe_ends_against_a_server_that_only_keeps_the_line_busy() -> None:
    with FakeOpenAI([*[keep_alive(0.05, whole=True)] * 3, keep_alive(0.05)]) as server:
        started = time.monotonic()
        checks, settings = probe(model_for(server), seconds=0.4)
        seconds = time.monotonic() - started

    assert seconds < 5
    by_name = {c.name: c for c in checks}
    assert not any(c.ok for c in checks)
    assert "keep-alive" in by_name["streaming"].note
    assert "0.4" in by_name["tool calls (auto)"].note
    assert settings["stream"] is False


def test_m11_doctor_live_ends_with_the_models_own_time_limits(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    from harness import doctor

    with FakeOpenAI([*[keep_alive(0.05, whole=True)] * 3, keep_alive(0.05)]) as server:
        monkeypatch.setenv("HARNESS_MODEL", "m")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("HARNESS_MODEL_SETTINGS",
                           '{"max_reply_seconds": 0.4, "max_idle_seconds": 0.4}')
        started = time.monotonic()
        doctor(live=True)
        seconds = time.monotonic() - started

    assert seconds < 6
    assert "streaming" in capsys.readouterr().out


# -- Low: finish reasons -----------------------------------------------------------------------

@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
@pytest.mark.parametrize(("sent", "outcome", "finish"), [
    ("max_tokens", "truncated", "length"),
    ("MAX_TOKENS", "truncated", "length"),
    ("model_length", "truncated", "length"),
    ("content_filter", "refused", "content_filter"),
    ("SAFETY", "refused", "content_filter"),
    ("end_turn", "completed", "stop"),
    ("", "completed", None),
])
def test_low_a_providers_finish_reason_is_read_for_what_it_means(
        stream: bool, sent: str, outcome: str, finish: str | None) -> None:
    with FakeOpenAI([whole({"content": "Part of an answer"}, finish=sent)]) as server:
        result = Agent(model_for(server, stream=stream)).run("Hi")

    assert result.outcome == outcome, result.error
    assert [e.finish_reason for e in result.events if e.type == "model_reply"] == [finish]
    assert result.final == "Part of an answer"
    assert "refusal" not in result.messages[-1]  # nothing the provider did not say goes back


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
@pytest.mark.parametrize("sent", ["error", "abort", "insufficient_system_resource"])
def test_low_a_reply_ended_by_an_error_is_a_model_error(stream: bool, sent: str) -> None:
    with FakeOpenAI([whole({"content": "Half an ans"}, finish=sent)]) as server:
        model = model_for(server, stream=stream)
        result = Agent(model).run("Hi")

    assert result.outcome == "model_error"
    assert f"finish_reason {sent!r}" in result.error
    assert model.partial is not None and model.partial.content == "Half an ans"
    with pytest.raises(ModelError, match="finish_reason"):
        parse_reply({"content": "x"}, finish_reason=sent)


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
def test_low_impossible_usage_numbers_keep_the_answer(stream: bool) -> None:
    usage = {"prompt_tokens": float("inf"), "completion_tokens": float("nan"),
             "total_tokens": -5, "prompt_tokens_details": {"cached_tokens": float("inf")},
             "completion_tokens_details": {"reasoning_tokens": 10 ** 400}}
    with FakeOpenAI([reply(content="kept", usage=usage)]) as server:
        result = Agent(model_for(server, stream=stream)).run("Hi")

    assert (result.outcome, result.final) == ("completed", "kept")
    assert all(isinstance(v, int) and v >= 0 for k, v in result.usage.items()
               if k != "estimated")


# -- Low: a <think> block that never closes ------------------------------------------------------

@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
def test_low_a_think_block_that_never_closes_keeps_its_text_as_the_answer(stream: bool) -> None:
    text = "<think>The user wants 6 x 7. So the answer is 42."
    with FakeOpenAI([reply(content=text)]) as server:
        result = Agent(model_for(server, stream=stream)).run("6 x 7?")

    assert (result.outcome, result.final) == ("completed",
                                               "The user wants 6 x 7. So the answer is 42.")
    assert parse_reply({"content": "<think>a</think>\n<think>b"}).content == "b"
    assert parse_reply({"content": "<think>a</think>\n\nb"}).content == "b"
    assert parse_reply({"content": "<think>a</think>b"}).reasoning == "a"


# -- Low: settings ---------------------------------------------------------------------------------

def nested(depth: int) -> str:
    return '{"extra_body": ' + '{"a": ' * depth + "1" + "}" * depth + "}"


@pytest.mark.parametrize("depth", [100, 100_000])
def test_low_deeply_nested_settings_are_a_clear_value_error(
        depth: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    from harness.ui.cli import main

    monkeypatch.setenv("HARNESS_MODEL_SETTINGS", nested(depth))
    with pytest.raises(ValueError, match="HARNESS_MODEL_SETTINGS"):
        OpenAIModel("m", base_url="http://127.0.0.1:9/v1")
    monkeypatch.setenv("HARNESS_MODEL", "m")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert main(["run", "Hi"]) == 2
    assert "Cannot start a live run" in capsys.readouterr().err
    monkeypatch.delenv("HARNESS_MODEL_SETTINGS")
    with pytest.raises(ValueError, match="nested"):
        OpenAIModel("m", base_url="http://127.0.0.1:9/v1",
                    settings=json.loads(nested(100)))


@pytest.mark.parametrize("key", ["model", "messages", "tools", "tool_choice", "stream",
                                 "stream_options", "n"])
def test_low_extra_body_may_not_set_what_the_harness_sends(
        key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match=key):
        OpenAIModel("m", base_url="http://127.0.0.1:9/v1",
                    settings={"extra_body": {key: "x"}})
    monkeypatch.setenv("HARNESS_MODEL_SETTINGS", json.dumps({"extra_body": {key: "x"}}))
    with pytest.raises(ValueError, match=key):
        OpenAIModel("m", base_url="http://127.0.0.1:9/v1")


def test_low_extra_body_that_is_not_an_object_is_refused() -> None:
    with pytest.raises(ValueError, match="extra_body"):
        OpenAIModel("m", base_url="http://127.0.0.1:9/v1", settings={"extra_body": [1]})


# -- Low: secrets in headers and in the base URL ------------------------------------------------

def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


@pytest.mark.parametrize("password", ["p4!", "x", "s3cr%2Ft%40!"],
                         ids=["three", "one", "escaped"])
def test_low_secret_headers_and_a_url_password_of_any_length_are_redacted(
        password: str, capsys: pytest.CaptureFixture) -> None:
    from urllib.parse import quote, unquote

    azure, token, service = ("azk-" + "Q7" * 14, "tok-" + "Z9" * 14, "svc-pass-31")
    plain = unquote(password)
    secrets = [azure, token, service, b64(f"svc:{service}"), b64(f"me:{plain}")]
    echo = (f"refused api-key {azure}, bearer {token}, basic {b64('svc:' + service)} "
            f"(svc:{service}), url basic {b64('me:' + plain)}, password '{plain}' and "
            f"{quote(plain, safe='')}.")
    with FakeOpenAI([unauthorized(echo)] * 6) as server:
        url = server.base_url.replace("http://", f"http://me:{password}@")
        model = OpenAIModel("m", base_url=url, api_key=KEY, max_retries=0, settings={
            "extra_headers": {"api-key": azure, "X-Auth-Token": f"Bearer {token}",
                              "Proxy-Authorization": f"Basic {b64('svc:' + service)}",
                              "OpenAI-Beta": "assistants=v2"}})
        result = Agent(model).run("Hi")
        checks, _ = probe(model, seconds=1)

    shown = "\n".join([str(result.error), repr(result), str(result.events), repr(model),
                       json.dumps(result.to_dict()), *(c.note for c in checks),
                       *capsys.readouterr()])
    assert result.outcome == "model_error" and "***" in result.error
    for secret in secrets:
        assert secret not in shown, secret
    assert f"password '{plain}'" not in shown and f"and {quote(plain, safe='')}." not in shown
    assert "refused api-key" in result.error  # the rest of the message is still readable


# -- Real provider traffic ------------------------------------------------------------------------

def test_real_snowflake_streams_without_a_finish_reason_and_its_reply_is_finished() -> None:
    recording = load("snowflake_stream_no_finish_reason")
    with FakeOpenAI([served(i) for i in recording["interactions"]]) as server:
        result = Agent(model_for(server)).run("What is 2 + 2? Reply with just the number.")

    assert (result.outcome, result.final) == ("completed", "4"), result.error
    assert result.usage["total_tokens"] == 27 and result.usage["estimated"] is False
    assert "refusal" not in result.messages[-1]
    assert [e.refusal for e in result.events if e.type == "model_reply"] == [None]


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
def test_real_an_empty_finish_reason_and_an_empty_refusal_are_a_plain_answer(
        stream: bool) -> None:
    with FakeOpenAI([whole({"content": "4", "refusal": ""}, finish="")]) as server:
        result = Agent(model_for(server, stream=stream)).run("2 + 2?")

    assert (result.outcome, result.final) == ("completed", "4")
    assert result.messages[-1] == {"role": "assistant", "content": "4"}


def test_real_a_stream_that_ends_with_neither_finish_reason_nor_done_is_cut_off() -> None:
    with FakeOpenAI([streamed(reply(content="An answer that was cut"), finish=False,
                              done=False)]) as server:
        result = Agent(model_for(server)).run("Hi")

    assert result.outcome == "model_error"
    assert "ended before the reply was finished" in result.error


def openrouter_blocks() -> list[dict]:
    recording = load("openrouter_reasoning_details")
    message = recording["interactions"][0]["response"]["parsed_body"]["choices"][0]["message"]
    return message["reasoning_details"]


def test_real_openrouter_reasoning_blocks_that_share_an_index_stream_back_exactly() -> None:
    blocks = openrouter_blocks()
    summary, encrypted = blocks
    assert (summary["index"], encrypted["index"]) == (0, 0)
    text = summary["summary"]
    pieces = [text[i:i + 200] for i in range(0, len(text), 200)]
    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({"reasoning_details": [{"type": "reasoning.summary", "summary": piece,
                                             "format": summary["format"], "index": 0}]})
               for piece in pieces]
    chunks += [chunk({"reasoning_details": [encrypted]}),
               chunk({"tool_calls": [{**ADD, "index": 0}]}), chunk(finish="tool_calls")]
    with FakeOpenAI([streamed(chunks=chunks), reply(content="5")]) as server:
        result = Agent(model_for(server), [add]).run("2 + 3?")
        sent = server.bodies[1]["messages"]

    assert result.outcome == "completed"
    back = next(m for m in sent if m.get("tool_calls"))
    assert back["reasoning_details"] == blocks


def test_real_openrouter_reasoning_blocks_of_a_whole_reply_go_back_as_received() -> None:
    recording = load("openrouter_reasoning_details")
    with FakeOpenAI([served(recording["interactions"][0]), reply(content="Yes.")]) as server:
        model = model_for(server, stream=False)
        first = Agent(model).run("Tell me about Venus")
        Agent(model).run("Is it hot?", messages=first.messages)
        sent = server.bodies[1]["messages"]

    assert first.outcome == "completed" and first.final.startswith("Brief summary")
    back = next(m for m in sent if m["role"] == "assistant")
    assert back["reasoning_details"] == openrouter_blocks()


def test_real_an_anthropic_signature_streamed_in_a_later_piece_goes_back_whole() -> None:
    signature = "EqQBCkgIARABGAIiQL" + "s1g" * 40
    chunks = [chunk({"reasoning_details": [{"type": "reasoning.text", "text": "Add them.",
                                            "signature": "", "format": "anthropic-claude-v1",
                                            "index": 0}]}),
              chunk({"reasoning_details": [{"type": "reasoning.text", "text": " Easy.",
                                            "index": 0}]}),
              chunk({"reasoning_details": [{"type": "reasoning.text",
                                            "signature": signature[:30], "index": 0}]}),
              chunk({"reasoning_details": [{"type": "reasoning.text",
                                            "signature": signature[30:], "index": 0}]}),
              chunk({"tool_calls": [{**ADD, "index": 0}]}), chunk(finish="tool_calls")]
    with FakeOpenAI([streamed(chunks=chunks), reply(content="5")]) as server:
        result = Agent(model_for(server), [add]).run("2 + 3?")
        back = next(m for m in server.bodies[1]["messages"] if m.get("tool_calls"))

    assert result.outcome == "completed"
    assert back["reasoning_details"] == [{"type": "reasoning.text", "text": "Add them. Easy.",
                                          "signature": signature,
                                          "format": "anthropic-claude-v1", "index": 0}]


def test_real_mistral_cached_tokens_are_counted() -> None:
    recording = load("mistral_cached_tokens_tool_call")

    @tool
    def get_weather(city: str) -> str:
        """Get the current weather for a city."""
        return "Sunny, 22C in Paris"

    with FakeOpenAI([served(i) for i in recording["interactions"]]) as server:
        result = Agent(model_for(server, stream=False), [get_weather]).run(
            "What's the weather in Paris?")

    assert result.outcome == "completed" and "Paris" in result.final
    assert result.usage["cached_tokens"] == 76 + 99
    assert result.usage["estimated"] is False


@pytest.mark.parametrize("where", ["x_groq", "choice"])
def test_real_usage_where_a_provider_puts_it_in_a_stream_is_read(where: str) -> None:
    usage = {"prompt_tokens": 41, "completion_tokens": 9, "total_tokens": 50}
    last = (chunk(finish="stop", x_groq={"id": "req_01", "usage": {**usage, "queue_time": 0.1}})
            if where == "x_groq" else
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop", "usage": usage}]})
    with FakeOpenAI([streamed(chunks=[chunk({"content": "Hi there."}), last])]) as server:
        result = Agent(model_for(server)).run("Hi")

    assert result.final == "Hi there."
    assert {k: result.usage[k] for k in usage} == usage and result.usage["estimated"] is False


CITATION = {"type": "url_citation", "url_citation": {
    "start_index": 0, "end_index": 5, "title": "Paris", "url": "https://example.org/paris"}}


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
def test_real_citations_are_kept_on_the_answer_and_not_sent_back(stream: bool) -> None:
    message = {"content": "Paris is the capital.", "annotations": [CITATION]}
    with FakeOpenAI([reply(message), reply(content="Yes.")]) as server:
        model = model_for(server, stream=stream)
        first = Agent(model).run("Capital of France?")
        Agent(model).run("Sure?", messages=first.messages)
        sent = server.bodies[1]["messages"]

    assert first.messages[-1]["annotations"] == [CITATION]
    reply_event = next(e for e in first.events if e.type == "model_reply")
    assert reply_event.message["annotations"] == [CITATION]
    assert all("annotations" not in m for m in sent)


def test_real_streamed_citations_in_several_deltas_are_joined() -> None:
    other = {**CITATION, "url_citation": {**CITATION["url_citation"], "url": "https://b.org"}}
    chunks = [chunk({"content": "Paris."}), chunk({"annotations": [CITATION]}),
              chunk({"annotations": [other]}), chunk(finish="stop")]
    with FakeOpenAI([streamed(chunks=chunks)]) as server:
        result = Agent(model_for(server)).run("Capital of France?")

    assert result.messages[-1]["annotations"] == [CITATION, other]


NOT_A_COMPLETION = {
    "html": (b"<html><body>502 Bad Gateway</body></html>", "text/html"),
    "a JSON list": (b"[1, 2]", "application/json"),
    "a JSON string": (b'"just text"', "application/json"),
    "empty": (b"", "application/json"),
    "choices not a list": (b'{"choices": "nope"}', "application/json"),
    "nested too deep": (b"[" * 100_000, "application/json"),
    "plain text": (b"OK", "text/plain"),
}


@pytest.mark.parametrize("name", sorted(NOT_A_COMPLETION))
def test_real_a_200_whose_body_is_not_a_completion_is_a_model_error(name: str) -> None:
    body, kind = NOT_A_COMPLETION[name]
    with FakeOpenAI([Scripted(body=body, headers={"Content-Type": kind})] * 2) as server:
        model = model_for(server, stream=False)
        result = Agent(model).run("Hi")
        with pytest.raises(ModelError):
            model.complete([{"role": "user", "content": "Hi"}], [])

    assert result.outcome == "model_error"
    assert "AttributeError" not in result.error and "RecursionError" not in result.error
    assert "reply" in result.error


def test_real_an_error_event_in_a_stream_is_a_model_error_with_its_message() -> None:
    chunks = [chunk({"content": "Hel"}), {"error": {"message": "overloaded, try later"}}]
    with FakeOpenAI([streamed(chunks=chunks)]) as server:
        result = Agent(model_for(server)).run("Hi")

    assert result.outcome == "model_error" and "overloaded, try later" in result.error


def test_real_comments_and_crlf_line_endings_in_a_stream_are_read() -> None:
    pieces = [raw_sse(": OPENROUTER PROCESSING\r\n\r\n"),
              raw_sse('data: {"choices": [{"index": 0, "delta": {"content": "Hel"}}]}\r\n\r\n'),
              raw_sse('data: {"choices": [{"index": 0, "delta": {"content": "lo"},'
                      ' "finish_reason": "stop"}]}\r\r')]
    with FakeOpenAI([streamed(chunks=pieces)]) as server:
        result = Agent(model_for(server)).run("Hi")

    assert (result.outcome, result.final) == ("completed", "Hello")


def test_real_a_stream_labelled_as_json_is_read_as_the_stream_it_is() -> None:
    body = (b'data: {"choices": [{"index": 0, "delta": {"content": "Hi"}}]}\n\n'
            b'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}\n\n'
            b"data: [DONE]\n\n")
    with FakeOpenAI([Scripted(body=body)]) as server:  # Content-Type: application/json
        result = Agent(model_for(server)).run("Hi")

    assert (result.outcome, result.final) == ("completed", "Hi")


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
def test_high4_a_transcript_holding_a_lone_surrogate_can_be_sent_again(stream: bool) -> None:
    """Valid JSON (``"\\udc80"``) that UTF-8 cannot carry: kept as the provider sent it
    (the core's writes must take it), but sent back as U+FFFD, so the next request
    can still be encoded."""
    call = {"id": "c1", "type": "function",
            "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'}}
    with FakeOpenAI([reply({"content": "\ud800", "tool_calls": [call],
                            "reasoning_content": "x\udfff"}),
                     reply(content="done \udc80")]) as server:
        result = Agent(model_for(server, stream=stream), [add]).run("Hi")
        sent = server.bodies

    assert (result.outcome, result.final) == ("completed", "done \udc80"), result.error
    assert result.messages[2]["reasoning_content"] == "x\udfff"  # as received
    back = next(m for m in sent[1]["messages"] if m.get("tool_calls"))
    assert (back["content"], back["reasoning_content"]) == ("\ufffd", "x\ufffd")
