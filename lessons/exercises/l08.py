"""Checks for lesson 08, reading a run: each one reads the `RunResult` of real runs.

The runs are scripted, so their shape is known: who made which calls, how many reminders
and push backs there were, which sub-agents ran and how many requests each sent. The
tools really run, on a fresh copy of the sample shop. `check_summarize` includes answers
that are not push backs (one a stop hook refused, one cut off) and a run that compacted
its history; `check_tokens_by_agent` a run whose model reports its usage, as a live one
does, with a `total_tokens` that counts its reasoning too (lesson 12), so its numbers are
exact.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable

import headphones
from course import check

from harness import (
    Agent,
    Hooks,
    Permissions,
    RunResult,
    ScriptedModel,
    Workspace,
    say,
    tool_call,
)

__all__ = ["check_summarize", "check_tokens_by_agent"]

SUMMARY_KEYS = ("outcome", "turns", "tool_calls_ok", "tool_calls_failed", "reminders",
                "pushbacks", "delegations")
SUB = {"subagents": True, "subagent_tools": ("read_file", "search_docs")}


def _run(steps: list | ScriptedModel, settings: dict, task: str) -> RunResult:
    """Play ``steps`` on a fresh sample workspace; ``plan_first`` when planning is on."""
    model = steps if isinstance(steps, ScriptedModel) else ScriptedModel(steps)
    with tempfile.TemporaryDirectory() as tmp:
        agent = Agent(model, Workspace.sample(tmp).tools, **settings)
        return agent.run(task, plan_first=settings.get("planning", False))


# -- exercise 1: summarize ------------------------------------------------------------

def _summary_runs() -> list[tuple[str, list, dict, dict, str]]:
    """(label, script, Agent settings, expected summary, task) for runs of known shape."""
    def todos(*statuses: str) -> dict:
        return tool_call("todo_write", todos=[{"content": c, "status": s} for c, s
                                              in zip(("Find the rule", "Save a note"), statuses,
                                                     strict=True)])

    whole = [todos("in_progress", "pending"),
             tool_call("search_docs", query="return opened in-ear headphones", max_results=2),
             tool_call("delegate_task", task="How long does a refund take? Quote returns.md."),
             tool_call("search_docs", query="refund business days", max_results=1),  # sub1
             say("5 business days (docs/policies/returns.md:23)."),                 # sub1
             todos("completed", "in_progress"),
             say("Only if defective; refunds take 5 business days."),  # pushed back
             tool_call("write_file", path="notes/reply.md", content="Only if defective."),
             todos("completed", "completed"),
             say("Only if defective; refunds take 5 business days.")]
    failing = [tool_call("run_shell", command="grep -rn refund docs"),     # denied
               tool_call("grep", pattern="refund"),                        # unknown tool
               tool_call("search_docs", query="refund", limit=2),          # bad arguments
               tool_call("delegate_task", task=" "),                       # bad arguments
               tool_call("delegate_task", task="Write the refund rule to notes/refund.md."),
               tool_call("write_file", path="notes/refund.md", content="x"),  # sub1: unknown
               say("I could not write it."),                               # main.sub1
               tool_call("search_docs", query="refund"),
               say("Refunds take 5 business days.")]
    ignores = [todos("in_progress", "pending"), say("Yes."), say("Yes, really.")]
    loops = [tool_call("list_files", pattern="docs/*")] * 3
    perms = Permissions({"read_file": "allow", "search_docs": "allow", "list_files": "allow",
                         "write_file": "allow", "run_shell": "deny"})

    refund = tool_call("search_docs", query="refund business days", max_results=1)
    hooks = Hooks()  # a stop hook (lesson 11): an answer without a path:line is refused
    hooks.on("stop", lambda event: None if "returns.md:" in event.final
             else "cite the policy, with its path:line.")
    refused = [refund, say("5 business days."),                    # refused by the hook
               say("Refunds take 5 business days (docs/policies/returns.md:23).")]
    cut = [todos("in_progress", "pending"), refund,
           {**say("Refunds take 5 busi"), "finish_reason": "length"}]  # cut off: truncated
    gate_then_turns = [todos("in_progress", "pending"), say("Yes."),   # pushed back
                       tool_call("list_files", pattern="docs/*"),
                       tool_call("list_files", pattern="docs/*")]        # out of turns
    compacts = ScriptedModel([  # lesson 08's run with a small window: one summary request
        refund, tool_call("search_docs", query="warranty year", max_results=1),
        tool_call("search_docs", query="standard shipping", max_results=1),
        tool_call("compact"), say("Refunds: within 5 business days.")],
        summaries=[say("Searched the policies: refunds take 5 business days.")])

    def shape(*values: object) -> dict:
        return dict(zip(SUMMARY_KEYS, values, strict=True))

    return [
        ("a run like lesson 07's", whole, {**SUB, "planning": True, "reminder_after": 2},
         shape("completed", 8, 7, 0, 1, 1, 1), "Can I return opened in-ear headphones?"),
        ("a run with refused calls", failing, {**SUB, "permissions": perms},
         shape("completed", 7, 2, 5, 0, 0, 1), "Save the refund rule."),
        ("a model that ignores the push back", ignores, {"planning": True},
         shape("open_items", 3, 1, 0, 0, 1, 0), "Can I return them?"),
        ("a run out of turns", loops, {"max_turns": 3},
         shape("turn_limit", 3, 3, 0, 0, 0, 0), "List the docs forever."),
        ("a run whose stop hook refused an answer", refused, {"hooks": hooks},
         shape("completed", 3, 1, 0, 0, 0, 0), "How long does a refund take?"),
        ("a run whose answer was cut off, its plan open", cut, {"planning": True},
         shape("truncated", 3, 2, 0, 0, 0, 0), "How long does a refund take?"),
        ("a run pushed back, then out of turns", gate_then_turns,
         {"planning": True, "max_turns": 4},
         shape("turn_limit", 4, 3, 0, 0, 1, 0), "Can I return them?"),
        ("a run that compacted its history", compacts, {"context_window": 3_000},
         shape("completed", 5, 4, 0, 0, 0, 0), "What do the policies say?"),
    ]


HINTS = {
    "turns": ("turns is result.turns: the main agent's model requests, not the sub-agents', "
              "nor a summary request a mechanism made (result.requests counts those too)"),
    "tool_calls_ok": "count tool_result events with ok=True, the sub-agents' (depth 1) too",
    "tool_calls_failed": ("count tool_result events with ok=False: denied, unknown and "
                          "invalid calls fail too, and so do the sub-agents'"),
    "reminders": "count the reminder events",
    "pushbacks": ("a push back is a stop_gate event: count those. A stop event fires on every "
                  "answer: pushed back, refused by a stop hook, cut off, or accepted; and a "
                  "run may end with no answer at all, so stop events, less one or not, are "
                  "not push backs; nor are answers with open items (a cut-off one is not "
                  "pushed back)"),
    "delegations": ("count the sub-agents that ran (result.delegations): a delegate_task call "
                    "the harness refused started none"),
}


@check
def check_summarize(summarize: Callable[[RunResult], dict]) -> str:
    """Summaries of four runs whose shape is known, key by key."""
    for label, steps, settings, expected, task in _summary_runs():
        got = summarize(_run(steps, settings, task))
        if not isinstance(got, dict):
            raise AssertionError(f"summarize should return a dict, not {type(got).__name__}")
        missing = [k for k in expected if k not in got]
        if missing:
            raise AssertionError(f"your dict has no key {missing[0]!r}; the keys are "
                                 f"{', '.join(expected)}")
        for key, value in expected.items():
            if got[key] != value:
                hint = HINTS.get(key, "it is result.outcome")
                raise AssertionError(f"{label}: {key} should be {json.dumps(value)}, yours is "
                                     f"{json.dumps(got[key], default=str)} ({hint})")
    return ("your summaries match eight runs: completed, refused calls, open_items, "
            "turn_limit, a refused answer, a cut-off answer, a push back then turn_limit, and "
            "a compacted history.")


# -- exercise 2: tokens by agent ------------------------------------------------------

def _reported(step: dict, prompt: int, completion: int, reasoning: int = 0) -> dict:
    """``step`` with the usage a live model would report for it. A reasoning model's
    ``total_tokens`` may count its thinking, which ``completion_tokens`` leaves out (lesson 12)."""
    return {**step, "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                              "total_tokens": prompt + completion + reasoning}}


def _token_runs() -> list[tuple[str, Callable[[], RunResult]]]:
    """(label, a function that plays the run) for runs whose agents are known."""
    refund = "Quote the refund rule in docs/policies/returns.md, with its path:line."
    two_subs = [tool_call("delegate_task", task=refund),
                tool_call("read_file", path="docs/policies/returns.md"),   # main.sub1
                say("Refunds take 5 business days (docs/policies/returns.md:23)."),  # sub1
                tool_call("delegate_task", task=" "),                      # refused: no agent
                tool_call("delegate_task", task="Write a one-line greeting for a customer."),
                say("Hello, and thank you for writing to Larkspur Audio!"),  # main.sub2
                say("Refunds take 5 business days.")]
    reported = [_reported(tool_call("search_docs", query="warranty claim", max_results=1),
                          1000, 50, 120),
                _reported(tool_call("delegate_task", task="How do I claim the warranty? "
                                                          "Quote the policy."), 1200, 60),
                _reported(tool_call("search_docs", query="warranty claim email"),
                          400, 30, 90),                                     # main.sub1
                _reported(say("Email warranty@larkspur-audio.example."), 600, 40),  # sub1
                _reported(say("Email warranty@larkspur-audio.example."), 1500, 80, 200)]
    at_once = [say("Yes, within 30 days.")]
    return [
        ("this lesson's run", lambda: headphones.run().result),
        ("a run with two sub-agents, one that made no tool call",
         lambda: _run(two_subs, SUB, "How long does a refund take? And greet the customer.")),
        ("a run whose model reported its usage, reasoning tokens in its total",
         lambda: _run(reported, SUB, "How do I claim the warranty?")),
        ("a model that answers at once", lambda: _run(at_once, {}, "Can I return them?")),
    ]


def _per_agent(result: RunResult, key: str = "total_tokens", *,
               last: bool = False) -> dict[str, int]:
    """``usage[key]`` of each agent's model replies: summed, or the last one's."""
    tokens: dict[str, int] = {}
    for e in result.events:
        if e.type == "model_reply":
            before = 0 if last else tokens.get(e.agent_id, 0)
            tokens[e.agent_id] = before + e.usage[key]
    return tokens


def _what_went_wrong(got: dict, expected: dict[str, int], result: RunResult) -> str:
    """The likeliest mistake behind ``got``, as a hint; "" when no known one fits."""
    if any(isinstance(k, int) for k in got):
        return ("your keys are depths. Key by event.agent_id ('main', 'main.sub1', ...): two "
                "sub-agents share depth 1 but not their tokens")
    if any(not isinstance(v, int) or isinstance(v, bool) for v in got.values()):
        return "each value should be an int: the agent's total_tokens, added up"
    both = {agent: _per_agent(result, "prompt_tokens")[agent] + n
            for agent, n in _per_agent(result, "completion_tokens").items()}
    if got == both:
        return ("you added prompt_tokens and completion_tokens. A reasoning model's "
                "total_tokens also counts its thinking, which its completion_tokens may leave "
                "out (lesson 12): add up usage['total_tokens'], the provider's own total")
    for key in ("prompt_tokens", "completion_tokens"):
        if got == _per_agent(result, key):
            return (f"those are {key} only. A request costs what it sent and what the model "
                    "wrote: add up usage['total_tokens']")
    if got == _per_agent(result, "prompt_tokens", last=True):
        return ("each agent has the context of its last request (its prompt_tokens): what "
                "it held at the end, not what it spent. Add up usage['total_tokens'] of all "
                "of an agent's model_reply events")
    if got == _per_agent(result, last=True):
        return ("each agent has its last request's tokens. Every request sends the whole "
                "conversation again and is paid for again: add up all of an agent's "
                "model_reply events")
    missing = [k for k in expected if k not in got]
    called = {e.agent_id for e in result.events if e.type == "tool_call"}
    if missing and all(k not in called for k in missing):
        return (f"{missing[0]} made no tool call, but it made requests and spent tokens: "
                "take the agents from the model_reply events, not from tool_call events")
    if "main" not in got:
        return ("there is no 'main'. result.delegations records the sub-agents only; the main "
                "agent's own requests are the model_reply events with agent_id 'main'")
    if len(expected) > 1 and got["main"] == result.usage["total_tokens"]:
        return ("'main' has the whole run's tokens: result.usage (and main's run_end event) "
                "include the sub-agents'. Give each agent its own requests only")
    if missing and set(got) == {"main"}:
        return ("only the main agent is there. The sub-agents' model_reply events are in "
                "result.events too (depth 1), each with its own agent_id")
    return ""


@check
def check_tokens_by_agent(tokens_by_agent: Callable[[RunResult], dict]) -> str:
    """Four runs with known agents: each agent's own tokens, adding up to result.usage."""
    for label, play in _token_runs():
        result = play()
        expected = _per_agent(result)
        got = tokens_by_agent(result)
        if not isinstance(got, dict):
            raise AssertionError(f"tokens_by_agent should return a dict, not "
                                 f"{type(got).__name__}")
        if got == expected:
            continue
        shown = json.dumps({str(k): v for k, v in got.items()}, default=str)
        hint = _what_went_wrong(got, expected, result)
        extra = sorted(set(map(str, got)) - set(expected))
        if not hint and extra:
            hint = f"{extra[0]} made no request in this run: only agents that did have tokens"
        total = result.usage["total_tokens"]
        raise AssertionError(f"{label}: expected {json.dumps(expected)} (together "
                             f"{total:,}, result.usage), yours is {shown}"
                             + (f": {hint}" if hint else ""))
    return ("every agent's own tokens, in four runs: with one sub-agent, two, a model that "
            "reported its usage (reasoning included), and none; each time they add up to "
            "result.usage.")
