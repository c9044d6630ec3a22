"""A round of calls: which of them run at once, and how each is answered however it ends.

    reply: read_file, read_file, write_file, search_docs, list_files
    runs:  [read_file, read_file]  [write_file]  [search_docs, list_files]
              at once                 alone          at once

Calls next to each other whose tools may run at once (``parallel=True`` and no side
effects: the workspace's readers, a server's tools you vouched for, delegations whose
sub-agents only read) form one run. A run is admitted call by call on the run's thread,
in the model's order (the harness's refusals, hooks, an approval, the call log's intent,
the tool-call budget), then its calls run together, each on a thread that carries the
run's context, then they are answered in the model's order. A call with side effects is
a run of its own, so it never overlaps another call, and a call after it sees what it
did. In a browser tab (no threads) every call runs alone, as it always did.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterator
from typing import Any

from . import browser
from .calls import Call, CallPath, Ticket
from .control import RunControl
from .models import ModelReply
from .outcomes import RunOver

# The call whose tool is running on a thread of a round: a delegation numbers its sub-agent
# by it (the second delegate_task call of a run is main.sub2, whichever thread goes first).
CURRENT: contextvars.ContextVar[Ticket | None] = contextvars.ContextVar("call", default=None)


def unique_ids(path: CallPath, reply: ModelReply) -> ModelReply:
    """Rename an id the harness made up (``call_3_0``) if the model used it already."""
    if not reply.made_ids:
        return reply
    here = {c["id"] for i, c in enumerate(reply.tool_calls) if i not in reply.made_ids}
    for i in reply.made_ids:
        call = reply.tool_calls[i]
        base, n = call["id"], 1
        while call["id"] in path.used_ids or call["id"] in here:
            call["id"] = f"{base}_{n}"
            n += 1
        here.add(call["id"])
    return reply


def play(path: CallPath, control: RunControl, calls: list[dict]) -> Iterator[tuple[dict, Call]]:
    """Each call of a round and how it ended, in the model's order, a run at a time: the
    caller answers each before the next run is admitted. Out of tool calls mid-run, the
    calls admitted before still run, then the stop is raised."""
    if len(calls) == 1:  # the usual round: one call, on this thread
        control.before_call()  # cancel, time, the tool-call budget: stop here
        ticket = path.admit(calls[0])
        verdict = execute(path, ticket)
        if verdict[0] != "pending":
            yield calls[0], path.finish(ticket, verdict)
    for group in groups(calls, lambda call: at_once(path, call)) if len(calls) > 1 else ():
        tickets, stop = admit(path, control, group)  # hooks, approvals, intents: in order
        verdicts = together(path, tickets)
        for i, ticket in enumerate(tickets):  # answered as the model asked
            if verdicts[i][0] != "pending":  # a call waiting for a person has no answer yet
                yield group[i][1], path.finish(ticket, verdicts[i])
        if stop is not None:
            raise stop
    if path.pending:  # the rest of the round is answered: now the run waits (pause.py)
        raise RunOver("awaiting_approval", pending=list(path.pending), held=set(path.held))


def at_once(path: CallPath, call: dict) -> bool:
    """Whether a call may run at the same time as its neighbours: its tool says it is
    safe beside others (``parallel=True``) and changes nothing."""
    tool = path.tools.get(call["function"]["name"])
    return bool(tool is not None and tool.parallel and not tool.side_effects)


def groups(calls: list[dict], parallel: Callable[[dict], bool]) -> list[list[tuple[int, dict]]]:
    """A round's calls, with their positions, in runs: neighbours that may run at once
    together, every other call alone."""
    runs: list[list[tuple[int, dict]]] = []
    for position, call in enumerate(calls):
        if runs and parallel(call) and parallel(runs[-1][-1][1]):
            runs[-1].append((position, call))
        else:
            runs.append([(position, call)])
    return runs


def admit(path: CallPath, control: RunControl,
          group: list[tuple[int, dict]]) -> tuple[list[Ticket], RunOver | None]:
    """The run's calls admitted in order, and the stop that came first, if one did: out
    of tool calls, those admitted still run; stopped by the clock or the cancel, none."""
    tickets: list[Ticket] = []
    try:
        for position, call in group:
            control.before_call()  # cancel, time, the tool-call budget: stop here
            tickets.append(path.admit(call, position))
    except RunOver as over:
        if control.stop_reason():
            raise
        return tickets, over
    return tickets, None


def together(path: CallPath, tickets: list[Ticket]) -> list[Any]:
    """The admitted calls' verdicts: one on this thread; several at once, each on a thread
    that carries this one's context. Each ends by itself (a long tool reads the run's
    cancel and clock, as it does alone); a delegation's KeyboardInterrupt comes back here."""
    running = [t for t in tickets if t.early is None]
    if len(running) < 2 or browser.IN_BROWSER:
        return [execute(path, t) for t in tickets]
    verdicts: dict[str, Any] = {}

    def work(ticket: Ticket) -> None:
        try:
            verdicts[ticket.id] = execute(path, ticket)
        except BaseException as exc:
            verdicts[ticket.id] = exc

    threads = [threading.Thread(target=contextvars.copy_context().run, args=(work, t),
                                daemon=True, name=f"call-{t.id}") for t in running]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    answers = [verdicts[t.id] if t.early is None else t.early for t in tickets]
    for answer in answers:
        if isinstance(answer, BaseException):
            raise answer
    return answers


def execute(path: CallPath, ticket: Ticket) -> Any:
    """``path.execute(ticket)``, with the ticket as `CURRENT` while its tool runs (a
    delegation is numbered by it, and a paused one resumed: subagent.py)."""
    token = CURRENT.set(ticket)
    try:
        return path.execute(ticket)
    finally:
        CURRENT.reset(token)


def not_run(calls: list[dict], since: list[dict], stop: BaseException) -> list[dict]:
    """The tool messages of a round's calls that a stop left unanswered (``since``: the
    messages the round added): the first, if an interrupt stopped it while it ran, has an
    unknown result. A call waiting for a person is not answered: it waits (pause.py)."""
    answered = {m.get("tool_call_id") for m in since} | {
        p["id"] for p in getattr(stop, "pending", ())} | getattr(stop, "held", set())
    calls = [call for call in calls if call["id"] not in answered]
    if isinstance(stop, RunOver):
        texts = [f"Not run: the run stopped ({stop.outcome})."] * len(calls)
    else:
        texts = ["Interrupted while running (KeyboardInterrupt): its result is unknown.",
                 *["Not run: interrupted."] * (len(calls) - 1)]
    return [{"role": "tool", "tool_call_id": call["id"], "content": text}
            for call, text in zip(calls, texts, strict=False)]
