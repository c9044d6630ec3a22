"""What the plan panel costs a long scripted run, and how many widget updates it sends.

    python benchmarks/panel_overhead.py                 # 2,000 rounds
    python benchmarks/panel_overhead.py --rounds 500 --interval 0

The run is like long_run.py's: 2,000 tool rounds on a `ScriptedModel` with planning,
the plan updated every 10th round, broken arguments every 25th, two calls every 40th,
so plan updates, reminders and refusals happen as in a real run. It is timed without an
observer, then with a `PlanPanel` (best of a few runs each, CPU time of this thread and
the panel's timer thread both count: ``time.process_time``). Every message the widgets
send to the browser is counted on its way out (``Widget._send``: outside a kernel the
message goes nowhere, but it is built and serialised just the same), with its size.

Targets: the run with the panel costs at most 2x the run without it; the panel sends
at most ~20 redraws a second of run time (each redraw sends one message per widget
that changed). Before coalescing this run sent 8,640 messages (8.5 MB) and cost 7.9x.
Exits 0 either way and prints PASS or FAIL.
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
import time

import ipywidgets.widgets.widget as widget_module

from harness import Agent, ScriptedModel, parallel, say, tool, tool_call
from harness.ui import PlanPanel

MAX_RATIO = 2.0
MAX_DRAWS_PER_SECOND = 22.5  # one redraw every 45 ms at most (~20 a second)
REPEATS = 5


@tool
def bump(n: int) -> int:
    """Return n + 1."""
    return n + 1


def _plan(done: int, total: int = 5) -> dict:
    return {"todos": [{"content": f"Step {i + 1}", "status": "completed" if i < done else
                       "in_progress" if i == done else "pending"} for i in range(total)]}


def script(rounds: int) -> list[dict]:
    """``rounds`` tool rounds, then the plan completed and a final answer."""
    steps = []
    for i in range(rounds):
        if i % 10 == 0:
            steps.append(tool_call("todo_write", _plan(min(i * 5 // rounds, 4))))
        elif i % 25 == 0:
            steps.append(tool_call("bump", '{"n": "not a number"'))
        elif i % 40 == 0:
            steps.append(parallel(tool_call("bump", n=i), tool_call("bump", n=-i)))
        else:
            steps.append(tool_call("bump", n=i))
    return [*steps, tool_call("todo_write", _plan(5)), say(f"Finished {rounds} rounds.")]


def unlimited() -> dict:
    """No run budget but the turns (an Agent may cap requests and tool calls by default)."""
    names = inspect.signature(Agent).parameters
    return {name: None for name in ("max_requests", "max_tool_calls") if name in names}


class Outbox:
    """Counts what the widgets send (``Widget._send``), and how many bytes of JSON."""

    def __init__(self) -> None:
        self.messages, self.bytes = 0, 0
        self._send = widget_module.Widget._send

    def __enter__(self) -> Outbox:
        outbox = self

        def counted(widget, msg, buffers=None):
            outbox.messages += 1
            outbox.bytes += len(json.dumps(msg, default=str))
            return outbox._send(widget, msg, buffers)

        widget_module.Widget._send = counted
        return self

    def __exit__(self, *exc: object) -> None:
        widget_module.Widget._send = self._send


def timed_run(rounds: int, observer: object = None) -> tuple[float, float]:
    """CPU seconds and wall seconds of one run."""
    steps = script(rounds)
    agent = Agent(ScriptedModel(steps), [bump], planning=True, max_turns=rounds + 2,
                  observers=[observer] if observer else [], **unlimited())
    cpu, wall = time.process_time(), time.perf_counter()
    result = agent.run("Count for a long time.")
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    if result.outcome != "completed":
        raise RuntimeError(f"the run went wrong: {result!r}")
    return cpu, wall


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--interval", type=float, default=None,
                        help="the panel's redraw interval in seconds (default: its own)")
    args = parser.parse_args(argv)
    options = {} if args.interval is None else {"interval": args.interval}
    timed_run(20, PlanPanel(**options))  # warm up: imports, schemas, widgets
    bare = min(timed_run(args.rounds)[0] for _ in range(REPEATS))
    with_panel, draws, outbox, wall = float("inf"), 0, Outbox(), 0.0
    for _ in range(REPEATS):
        panel = PlanPanel(**options)
        with Outbox() as counted:
            cpu, seconds = timed_run(args.rounds, panel)
            time.sleep(0.1)  # a trailing redraw due after the run is counted too
        if cpu < with_panel:
            with_panel, draws, outbox, wall = cpu, panel.throttle.draws, counted, seconds
    ratio = with_panel / bare
    per_second = draws / max(wall, 1e-9)
    print(f"{args.rounds:,} rounds: {bare * 1e6 / args.rounds:.1f} µs a round without a "
          f"panel, {with_panel * 1e6 / args.rounds:.1f} µs with one ({ratio:.2f}x)")
    print(f"panel: {draws} redraws in {wall:.3f} s of run ({per_second:.1f} a second), "
          f"{outbox.messages:,} widget messages, {outbox.bytes / 1e6:.2f} MB")
    print(f"{'PASS' if ratio <= MAX_RATIO else 'FAIL'}: the panel costs {ratio:.2f}x "
          f"(target <= {MAX_RATIO:g}x; 7.9x before coalescing)")
    allowed = int(wall * MAX_DRAWS_PER_SECOND) + 2  # and the first, and the final one
    ok = draws <= allowed
    print(f"{'PASS' if ok else 'FAIL'}: {draws} redraws in {wall:.3f} s (target <= ~20 a "
          f"second: at most {allowed} here, counting the first and the final one)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
