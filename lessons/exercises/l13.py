"""Checks for lesson 13 (what the model sees when the run outgrows the window).

Both checks run one long scripted run with your mechanism: the model reads the sample
workspace file by file (two of its replies read two files at once, so their rounds hold
two tool messages), then says which file it read last. The tools really run. The same
run without your mechanism gives the transcript at each request, and from it what each
request should have sent; the checks compare, request by request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from course import check

from harness import Agent, Mechanism, RunResult, ScriptedModel, Workspace, parallel, say, tool_call
from harness.context import request_tokens

TASK = "Read the support repository file by file, then say which file you read last."
READS = [  # one reply each; a reply with two paths reads both at once
    ["README.md"],
    ["docs/faq.md"],
    ["docs/policies/returns.md", "docs/policies/warranty.md"],
    ["docs/policies/shipping.md"],
    ["data/records/ORD-1001.json"],
    ["data/records/ORD-1002.json", "data/records/ORD-1003.json"],
    ["src/orders.py"],
    ["src/pricing.py"],
    ["tools/query_record.py"],
    ["tests/test_pricing.py"],
]


def _answer(messages: list[dict]) -> dict:
    """The last reply: built from the last result the model can see."""
    last = next(m for m in reversed(messages) if m["role"] == "tool")
    return say(f"The last file I read starts with: {last['content'].splitlines()[0]}")


def long_run(mechanism: Callable[[], Any] | None = None) -> tuple[RunResult, ScriptedModel]:
    """The checks' run (in a fresh copy of the sample workspace), with ``mechanism`` if given:
    ``long_run(lambda: KeepRounds(rounds=2))``. Returns the result and the model, whose
    ``requests`` are what was sent."""
    ws = Workspace.sample()
    steps = [parallel(*(tool_call("read_file", path=p) for p in paths)) for paths in READS]
    model = ScriptedModel([*steps, _answer])
    tools = [t for t in ws.tools if t.name in ("read_file", "list_files")]
    agent = Agent(model, tools, max_turns=len(steps) + 1,
                  mechanisms=[mechanism] if mechanism else [])
    return agent.run(TASK), model


def gated_run(mechanism: Callable[[], Any] | None = None) -> tuple[RunResult, ScriptedModel]:
    """The same reading with a plan (lessons 04 and 05), so user messages come mid-run: the
    reminder after three reads without a plan update, and the stop gate's push-back after an
    answer given while the plan is open (an assistant message with no calls). A round still
    starts at an assistant message; those user messages belong to the round before them."""
    ws = Workspace.sample()
    items = ["Read the files", "Say which file was read last"]

    def plan(*statuses: str) -> dict:
        return tool_call("todo_write", todos=[{"content": c, "status": s}
                                              for c, s in zip(items, statuses, strict=True)])

    reads = [parallel(*(tool_call("read_file", path=p) for p in paths)) for paths in READS]
    steps = [plan("in_progress", "pending"), *reads[:4], say("I have read enough."),
             *reads[4:7], plan("completed", "in_progress"), plan("completed", "completed"),
             say("I read them all, src/orders.py last.")]
    model = ScriptedModel(steps)
    tools = [t for t in ws.tools if t.name in ("read_file", "list_files")]
    agent = Agent(model, tools, planning=True, max_turns=len(steps),
                  mechanisms=[mechanism] if mechanism else [])
    return agent.run(TASK), model


_PLAIN: dict[Callable[..., Any], tuple[RunResult, ScriptedModel]] = {}


def _plain(run: Callable[..., Any] = long_run) -> tuple[RunResult, ScriptedModel]:
    if run not in _PLAIN:
        _PLAIN[run] = run()
    return _PLAIN[run]


def _make(mechanism_class: Callable[..., Any], **kwargs: Any) -> Callable[[], Any]:
    """A maker for the run, tried once here so a wrong signature gets a clear hint."""
    name, given = getattr(mechanism_class, "__name__", "your class"), ", ".join(
        f"{k}={v}" for k, v in kwargs.items())
    try:
        made = mechanism_class(**kwargs)
    except TypeError as exc:
        raise AssertionError(f"{name}({given}) failed ({exc}): give __init__ the parameter "
                             f"{', '.join(kwargs)}") from None
    if not callable(getattr(made, "before_request", None)):
        raise AssertionError(f"{name} has no before_request(messages) method: subclass "
                             "harness.Mechanism and override before_request")
    return lambda: mechanism_class(**kwargs)


def _tokens(model: ScriptedModel) -> list[int]:
    return [request_tokens(r["messages"], r["tools"]) for r in model.requests]


def _name(messages: list[dict], call_id: str) -> str:
    return next((c["function"]["name"] for m in messages for c in m.get("tool_calls") or ()
                 if c["id"] == call_id), "a tool")


def _assert_head(n: int, sent: list[dict], transcript: list[dict]) -> None:
    """The system prompt first, once, then the task."""
    if not sent or sent[0] != transcript[0]:
        first = sent[0]["role"] if sent else "nothing"
        raise AssertionError(f"request {n} starts with {first}, not the system prompt: keep "
                             "messages[0] first")
    systems = sum(m.get("role") == "system" for m in sent)
    if systems != 1:
        raise AssertionError(f"request {n} has {systems} system messages: when the run is "
                             "still short, the tail you keep overlaps messages[:2]. Take the "
                             "tail from messages[2:], after the task")
    if len(sent) < 2 or sent[1] != transcript[1]:
        raise AssertionError(f"request {n}: its second message is not the task: keep "
                             "messages[1], the task, right after the system prompt")
    tasks = sum(m == transcript[1] for m in sent)
    if tasks != 1:
        raise AssertionError(f"request {n} sends the task {tasks} times: take the tail from "
                             "messages[2:], after the task")


def _assert_pairs(n: int, sent: list[dict], transcript: list[dict], advice: str) -> None:
    """Every tool message answers a call of the assistant message before it, and every
    call of a sent assistant message is answered."""
    open_calls: list[str] = []
    for message in sent:
        if message.get("role") == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in open_calls:
                raise AssertionError(
                    f"request {n} sends the result of {_name(transcript, call_id)} ({call_id}) "
                    f"without the assistant message that called it: {advice}")
            open_calls.remove(call_id)
            continue
        if open_calls:
            raise AssertionError(f"request {n} sends a call ({open_calls[0]}) without its "
                                 f"result: {advice}")
        open_calls = [c["id"] for c in message.get("tool_calls") or ()]


def _compare(n: int, sent: list[dict], transcript: list[dict], start: int, kept: str,
             fewer: str, more: str) -> None:
    """What follows the task is exactly transcript[start:]."""
    tail, want = sent[2:], transcript[start:]
    if tail == want:
        return
    if len(tail) < len(want):
        raise AssertionError(f"request {n} sent {len(tail)} messages after the task; {kept} "
                             f"are {len(want)}: {fewer}")
    if len(tail) > len(want):
        raise AssertionError(f"request {n} sent {len(tail)} messages after the task; {kept} "
                             f"are {len(want)}: {more}")
    raise AssertionError(f"request {n} changed or reordered messages after the task: send "
                         "the transcript's own messages, in their order")


def _assert_transcript_whole(result: RunResult, run: Callable[..., Any]) -> None:
    plain, _ = _plain(run)
    if result.messages != plain.messages:
        raise AssertionError(f"the run's transcript has {len(result.messages)} messages, "
                             f"without your mechanism {len(plain.messages)}: before_request "
                             "edited the list it was given. Build a new list and return it")


def _savings(model: ScriptedModel) -> str:
    _, plain = _plain()
    mine, theirs = _tokens(model), _tokens(plain)
    if sum(mine) >= sum(theirs):
        raise AssertionError(f"your requests add up to ~{sum(mine):,} tokens, no fewer than "
                             f"~{sum(theirs):,} without your mechanism: drop the old rounds")
    return (f"~{sum(mine):,} input tokens instead of ~{sum(theirs):,}, the largest request "
            f"~{max(mine):,} instead of ~{max(theirs):,}")


def _requests(mechanism: Callable[[], Any], run: Callable[..., Any] = long_run,
              ) -> tuple[ScriptedModel, list[tuple[int, list, list]]]:
    """Run with ``mechanism``; each request's number, what it sent, the transcript then."""
    result, model = run(mechanism)
    plain, plain_model = _plain(run)
    _assert_transcript_whole(result, run)
    if result.outcome != plain.outcome or len(model.requests) != len(plain_model.requests):
        raise AssertionError(f"the run ended {result.outcome} after {len(model.requests)} "
                             f"requests ({result.error or 'no error'}); without your mechanism "
                             f"it ends {plain.outcome} after {len(plain_model.requests)}")
    return model, [(n, mine["messages"], theirs["messages"]) for n, (mine, theirs)
                   in enumerate(zip(model.requests, plain_model.requests, strict=True), 1)]


ROUNDS = ("a round is an assistant message and every tool message that answers it (a reply "
          "with two calls has two): cut where a round starts, at an assistant message")


@check
def check_keep_rounds(mechanism_class: Callable[..., Any]) -> str:
    """Your rule sends the system prompt, the task and the last N rounds whole."""
    shown = ""
    for keep, run in ((2, long_run), (3, long_run), (2, gated_run), (3, gated_run)):
        model, requests = _requests(_make(mechanism_class, rounds=keep), run)
        gated = " (in the run with a reminder and a stop-gate push-back)" if run is gated_run \
            else ""
        for n, sent, transcript in requests:
            _assert_head(n, sent, transcript)
            _assert_pairs(n, sent, transcript, ROUNDS)
            starts = [i for i in range(2, len(transcript))
                      if transcript[i]["role"] == "assistant"]
            start = starts[-keep] if len(starts) >= keep else 2
            _compare(n, sent, transcript, start, f"the last {keep} rounds",
                     f"keep every message from the assistant message {keep} rounds from the "
                     "end (count assistant messages, not messages: a user message mid-run, "
                     f"a reminder or a push-back, starts no round){gated}",
                     f"drop every round before the last {keep} (rounds=N is the number of "
                     f"assistant messages kept: a round starts at an assistant message, and "
                     f"only there){gated}")
        shown = shown or _savings(model)
    return f"every request keeps each call with its result and the last N rounds whole: {shown}."


class LastMessages(Mechanism):
    """Sends the system prompt, the task and the last ``keep`` messages. It has a bug."""

    def __init__(self, keep: int = 6) -> None:
        self.keep = keep

    def before_request(self, messages: list[dict]) -> list[dict]:
        return [*messages[:2], *messages[2:][-self.keep:]]


def broken_request(model: ScriptedModel) -> int | None:
    """The number (1-based) of the first request that sent a tool message without the
    assistant message that called it, or None."""
    for n, request in enumerate(model.requests, 1):
        called = {c["id"] for m in request["messages"] for c in m.get("tool_calls") or ()}
        if any(m["role"] == "tool" and m["tool_call_id"] not in called
               for m in request["messages"]):
            return n
    return None


BACK = ("when the cut falls on a tool message, move it back to the assistant message that "
        "starts its round (in a reply with two calls, that can be two messages back)")


@check
def check_last_messages_fixed(mechanism_class: Callable[..., Any]) -> str:
    """Your fix sends the last `keep` messages, moving the cut back to its round's start."""
    shown = ""
    for keep, run in ((6, long_run), (5, long_run), (6, gated_run), (5, gated_run)):
        model, requests = _requests(_make(mechanism_class, keep=keep), run)
        gated = " (in the run with a reminder and a stop-gate push-back)" if run is gated_run \
            else ""
        for n, sent, transcript in requests:
            _assert_head(n, sent, transcript)
            _assert_pairs(n, sent, transcript, BACK)
            start = max(2, len(transcript) - keep)
            while start > 2 and transcript[start]["role"] == "tool":
                start -= 1
            _compare(n, sent, transcript, start,
                     f"the last {keep} and the rest of their first round",
                     "moving the cut forward drops results the model just asked for: keep "
                     f"the last {keep} messages and move the cut back instead",
                     "move the cut back only as far as the assistant message of the round it "
                     "falls in, and only over tool messages: a cut on a user message (a "
                     f"reminder, a push-back) stays where it is{gated}")
        shown = shown or _savings(model)
    return (f"no request splits a call from its result, and each keeps the last `keep` "
            f"messages: {shown}.")


__all__ = ["READS", "TASK", "LastMessages", "broken_request", "check_keep_rounds",
           "check_last_messages_fixed", "gated_run", "long_run"]
