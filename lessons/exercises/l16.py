"""Checks for lesson 16 (memory that changes only on evidence, answers that say what was found).

`check_kind_for` hands your function batches of operation records, each with the records a
change cites, and compares what you judge with what the harness judges. For each batch it
also archives a change of the kind you chose (`harness.memory.archive`, the remember tool
really runs): when you are wrong, the hint quotes what the harness said to it.

`check_unsupported` runs the support agent on a fresh copy of the sample workspace with
your function as the check of its answer: the tools really run (two reads that work, one
that fails, a command the permissions block), then the scripted model answers with a
`final_answer` built from what they returned, a good one or one with a flaw. Your
function sees every answer the run gives; a flawed one must be pushed back, a good one
must complete the run.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Callable
from typing import Any, NamedTuple

from course import check
from pydantic import BaseModel, model_validator

from harness import Agent, Hooks, Permissions, ScriptedModel, Workspace, parallel, say, tool_call
from harness.memory import Memory, Record, archive

KINDS = ("rule", "one-off", "refused")
RULE = "Opened headphones that work are refused a return"
ONE_OFF = "A return of opened headphones that work was refused"


def _op(id: str, item: str, action: str = "outcome", detail: str = "return refused: opened, "
        "works", **more: Any) -> Record:
    return Record(id, action, item, detail, date="2024-05-21", **more)


OP1 = _op("op-1", "MSG-17", "status", "-> no action needed")
OP2, OP3 = _op("op-2", "ORD-1001"), _op("op-3", "ORD-1002")
OP4 = _op("op-4", "ORD-1002", "status", "-> waiting for the customer")
FAILED = _op("op-5", "ORD-1003", ok=False)
UNDO3 = _op("op-8", "ORD-1002", "undo", "", undoes="op-3")
# (what the batch is, the batch, the records a change cites, what they support, why)
BATCHES = [
    ("two outcomes, on ORD-1001 and ORD-1002", [OP2, OP3], ["op-2", "op-3"], "rule",
     "two records about two items are two cases, whatever their actions: a lasting rule "
     "may rest on them"),
    ("one status change, on MSG-17", [OP1], ["op-1"], "one-off",
     "one record is one case: what happened once, never a rule"),
    ("one record, cited twice", [OP1], ["op-1", "op-1"], "one-off",
     "the same record twice is still one case"),
    ("an outcome and a status change, both on ORD-1002", [OP3, OP4], ["op-3", "op-4"],
     "one-off", "both records are about ORD-1002: one case (count items, not records or "
     "actions)"),
    ("two outcomes, one of which failed", [OP2, FAILED], ["op-2", "op-5"], "refused",
     "op-5 did not succeed (ok=False): a failed operation is not evidence, and a change "
     "that cites one is refused whole"),
    ("two outcomes, one undone later in the batch", [OP2, OP3, UNDO3], ["op-2", "op-3"],
     "refused", "op-8 undid op-3: an undone operation is not evidence (judge the whole batch)"),
    ("two outcomes, and an undo of one of them that failed",
     [OP2, OP3, _op("op-8", "ORD-1002", "undo", "", undoes="op-3", ok=False)],
     ["op-2", "op-3"], "rule", "the undo op-8 failed, so op-3 stands"),
    ("two outcomes, and an undo of another record of ORD-1002",
     [OP2, OP3, OP4, _op("op-8", "ORD-1002", "undo", "", undoes="op-4")],
     ["op-2", "op-3"], "rule", "op-8 undid op-4, not op-3: an undo reverts the record it "
     "names in 'undoes', not everything about its item"),
    ("two outcomes, citing a record that is not in the batch", [OP2, OP3], ["op-2", "op-9"],
     "refused", "op-9 is not a record of this batch: cite only records it holds"),
    ("nothing cited", [OP2, OP3], [], "refused", "a change cites at least one record"),
    ("three records about two orders", [OP2, OP3, OP4], ["op-2", "op-3", "op-4"], "rule",
     "ORD-1001 and ORD-1002: two cases"),
    ("two outcomes, the failed one cited first", [OP2, FAILED], ["op-5", "op-2"], "refused",
     "op-5 did not succeed: check every cited record, not only the last one"),
    ("two outcomes, the one undone later cited first", [OP2, OP3, UNDO3], ["op-3", "op-2"],
     "refused", "op-8 undid op-3: check every cited record, not only the last one"),
    ("two outcomes, citing first a record that is not in the batch", [OP2, OP3],
     ["op-9", "op-3"], "refused", "op-9 is not a record of this batch: check every cited "
     "record, not only the last one"),
]


def _harness_says(batch: list[Record], cited: list[str], kind: str) -> str:
    """What the remember tool answers when an archiving run proposes ``kind`` from ``cited``."""
    folder = tempfile.mkdtemp(prefix="l16-")
    try:
        change = tool_call("remember", entry=RULE if kind == "rule" else ONE_OFF, kind=kind,
                           sources=cited)
        result = archive(Memory(folder, today=lambda: "2024-05-22"), batch,
                         ScriptedModel([change, say("done")]))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return next(e.output for e in result.events if e.type == "tool_result")


@check
def check_kind_for(kind_for: Callable[[list[str], list[Record]], str]) -> str:
    """Judge what the cited records support: a rule, a one-off, or nothing (refused)."""
    for what, batch, cited, want, why in BATCHES:
        got = kind_for(list(cited), list(batch))
        if got not in KINDS:
            raise AssertionError(f"kind_for returned {got!r}; return one of {KINDS}")
        if got == want:
            continue
        hint = f"for a change citing {cited} in a batch of {what}, kind_for said {got!r}, " \
               f"not {want!r}: {why}."
        if got != "refused":
            said = _harness_says(batch, cited, got)
            hint += f" The harness, given your {got!r}: {said}"
        raise AssertionError(hint)
    for what, batch, cited, want, _ in BATCHES:  # the harness agrees with every verdict
        said = _harness_says(batch, cited, "one-off" if want == "refused" else want)
        assert said.startswith("Refused") == (want == "refused"), (what, said)
    return (f"{len(BATCHES)} batches judged as the harness judges them: a rule from two items "
            "or more, one item a one-off, a failed, undone or unknown record refused")


# -- exercise 2 ------------------------------------------------------------------------------

NAMES = re.compile(r"\b[A-Z]{3}-\d+\b|\b\d{4}-\d{2}-\d{2}\b")  # ORD-1002, RET-002, 2024-05-06
RECORD, RETURNS, GONE = "data/records/ORD-1002.json", "docs/policies/returns.md", \
    "data/messages/MSG-31.md"


class Call(NamedTuple):
    """One call of the run, as your function sees it."""

    name: str  # the tool: read_file, run_shell, ...
    status: str  # "ok": it ran and worked; else "error", "blocked", ...
    output: str  # the result the model read


DELIVERED = "ORD-1002 was delivered on 2024-05-06"
POLICY = "RET-002: opened in-ear headphones that are not defective cannot be returned"
BOTH = "ORD-1002 (in-ear headphones) falls under RET-002's hygiene rule"
FAULT = "Ben reported no fault"
TRANSIT = "ORD-1003 is still in transit"
WRONG_DATE = "ORD-1002 was delivered on 2024-05-08"
TWO_ORDERS = "ORD-1002 and ORD-1003 were both delivered"
# (what the answer is, its found items as (claim, the calls it cites), the claims unsupported)
ANSWERS = [
    ("a good answer", [(DELIVERED, ["record"]), (POLICY, ["policy"])], []),
    ("a claim with two sources, each showing part of it", [(BOTH, ["record", "policy"])], []),
    ("a found item without sources", [(DELIVERED, ["record"]), (FAULT, [])], [FAULT]),
    ("a source that is no call of the run", [(FAULT, ["call_9_9"])], [FAULT]),
    ("a source that failed (a file that does not exist)", [(DELIVERED, ["record"]),
                                                           (FAULT, ["gone"])], [FAULT]),
    ("a source the permissions blocked", [(TRANSIT, ["shell"])], [TRANSIT]),
    ("a good source, then one that failed", [(POLICY, ["policy", "gone"])], [POLICY]),
    ("the wrong call cited (the policy, for a delivery date)", [(DELIVERED, ["policy"])],
     [DELIVERED]),
    ("a date its source does not show", [(WRONG_DATE, ["record"])], [WRONG_DATE]),
    ("an order id its source does not show", [(TWO_ORDERS, ["record"])], [TWO_ORDERS]),
    ("two flawed items", [(FAULT, []), (DELIVERED, ["policy"]), (POLICY, ["policy"])],
     [FAULT, DELIVERED]),
    ("two flawed items, not in alphabetical order", [(WRONG_DATE, ["record"]),
                                                     (POLICY, ["policy"]), (FAULT, [])],
     [WRONG_DATE, FAULT]),
]
GOOD = ANSWERS[0][1]


def _ids(messages: list[dict]) -> dict[str, str]:
    """The run's calls by role in the script: record, policy, gone (failed), shell (blocked)."""
    asked = {c["id"]: json.loads(c["function"]["arguments"]) for m in messages
             if m["role"] == "assistant" for c in m.get("tool_calls") or ()}
    role = {RECORD: "record", RETURNS: "policy", GONE: "gone"}
    return {role.get(args.get("path"), "shell"): i for i, args in asked.items()
            if "path" in args or "command" in args}


def _answer(found: list[tuple[str, list[str]]]) -> Callable[[list[dict]], dict]:
    def step(messages: list[dict]) -> dict:
        ids = _ids(messages)
        return tool_call("final_answer", found=[
            {"claim": claim, "sources": [ids.get(s, s) for s in sources]}
            for claim, sources in found], inferred=["ORD-1002's return is refused if they work"],
            missing=["whether the headphones are defective"])
    return step


def _run(unsupported: Callable, found: list[tuple[str, list[str]]]) -> tuple[Any, list]:
    """One run whose answer is checked by ``unsupported``; what it returned, answer by answer."""
    calls: dict[str, Call] = {}
    judged: list[Any] = []

    class Answer(BaseModel):
        found: list[dict]
        inferred: list[str] = []
        missing: list[str] = []

        @model_validator(mode="after")
        def _supported(self) -> Answer:
            items = [{"claim": i.get("claim"), "sources": list(i.get("sources") or [])}
                     for i in self.found]
            try:
                got = unsupported(items, dict(calls))
            except Exception as exc:  # said in the hint, not as a broken run
                judged.append(exc)
                raise ValueError(f"the check raised {type(exc).__name__}") from None
            judged.append(got)
            if got:
                raise ValueError(f"not supported: {got}")
            return self

    hooks = Hooks()
    hooks.on("tool_result", lambda e: calls.update({e.call_id: Call(e.tool_name, e.status,
                                                                    e.output)}))
    reads = parallel(*(tool_call("read_file", path=p) for p in (RECORD, RETURNS, GONE)),
                     tool_call("run_shell", command="cat data/records/ORD-1003.json"))
    model = ScriptedModel([reads, _answer(found), *[_answer(GOOD)] * 3, say("done")])
    agent = Agent(model, Workspace.sample().tools, hooks=hooks,
                  permissions=Permissions({"read_file": "allow"}))
    return agent.run("MSG-31, Ben Sample (ORD-1002): 'I opened my Wren headphones and want to "
                     "return them.' Look up what you can.", output=Answer), judged


@check
def check_unsupported(unsupported: Callable[[list[dict], dict[str, Call]], list[str]]) -> str:
    """Every found item has sources, each a call that succeeded and shows what it names."""
    for what, found, want in ANSWERS:
        result, judged = _run(unsupported, found)
        first = judged[0] if judged else None
        if isinstance(first, NotImplementedError):
            raise first
        if isinstance(first, Exception):
            tip = (" A source may be no call of the run at all: calls.get(source), not "
                   "calls[source]") if isinstance(first, KeyError) else ""
            raise AssertionError(f"for {what}, unsupported raised {type(first).__name__}: "
                                 f"{first}.{tip}")
        if not isinstance(first, list):
            raise AssertionError(f"unsupported returned {first!r}; return a list of claims "
                                 "(the empty list when every found item is supported)")
        if first != want:
            raise AssertionError(f"for {what}, unsupported returned {first}; it should return "
                                 f"{want}: the claims whose sources do not hold them up, in "
                                 "the answer's order")
        pushbacks = sum(e.type == "answer_pushback" for e in result.events)
        if result.outcome != "completed" or pushbacks != (1 if want else 0):
            raise AssertionError(f"for {what}, the run ended {result.outcome} after "
                                 f"{pushbacks} push backs; the good answer that follows must "
                                 f"pass: return [] when every item is supported "
                                 f"(it returned {judged[1:]})")
    return (f"{len(ANSWERS)} answers judged: each found item has sources, each a call of this "
            "run that succeeded and whose result shows the ids and dates it names; the "
            "flawed answers were pushed back once, the good ones completed the run")
