"""What a durable run on DBOS with SQLite adds to each step (issue 30).

The same 20-call run (a scripted model, a trivial tool), plain and as a DBOS workflow
(harness/durable/dbos.py) on a SQLite file in a temporary folder, alternating, several
times each, in one run of this script. A run of 20 calls is 41 steps: 21 model requests
and 20 tool calls, each recorded before the run goes on; with a tool that has side
effects, 61 (each call records its intent first). Printed: the medians, and what DBOS
adds per call and per step. Target: at most 5 ms a step on SQLite. Prints PASS or FAIL;
exits 0 either way::

    python benchmarks/durable_overhead.py [--calls 20] [--tries 7]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from harness import Agent, ScriptedModel, say, tool, tool_call

TARGET_MS = 5.0


@tool
def echo(n: int) -> int:
    """Return n."""
    return n


@tool(side_effects=True)
def record(n: int) -> int:
    """Record n (a call with side effects: its intent is a step of its own)."""
    return n


def agent(name: str, calls: int) -> Agent:
    steps = [tool_call(name, n=i) for i in range(calls)] + [say("done")]
    return Agent(ScriptedModel(steps), [echo, record], max_turns=calls + 1)


def timed(run: Any) -> float:
    start = time.perf_counter()
    result = run()
    took = time.perf_counter() - start
    assert result.outcome == "completed", (result.outcome, result.error)
    return took


def compare(durable: Any, tool_name: str, calls: int, tries: int) -> tuple[float, float, int]:
    """Medians of the plain run and of the durable one (seconds), and the durable one's steps."""
    from dbos import DBOS

    plain, durable_runs, steps = [], [], 0
    for n in range(tries + 1):  # the first of each is a warm-up
        durable.agent = agent(tool_name, calls)  # a fresh script: each workflow copies it
        took = timed(lambda n=n: durable.run("count", workflow_id=f"{tool_name}-{n}"))
        plain_took = timed(lambda: agent(tool_name, calls).run("count"))
        if n:
            durable_runs.append(took)
            plain.append(plain_took)
        steps = len(DBOS.list_workflow_steps(f"{tool_name}-{n}"))
    return statistics.median(plain), statistics.median(durable_runs), steps


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--calls", type=int, default=20)
    options.add_argument("--tries", type=int, default=7)
    args = options.parse_args()
    from dbos import DBOS

    from harness.durable.dbos import DBOSAgent

    with tempfile.TemporaryDirectory() as folder:
        DBOS(config={"name": "durable-overhead", "log_level": "ERROR",
                     "system_database_url": f"sqlite:///{Path(folder) / 'bench.sqlite'}"})
        durable = {name: DBOSAgent(agent(name, args.calls), name=f"bench-{name}")
                   for name in ("echo", "record")}  # made before launch, as recovery needs
        DBOS.launch()
        try:
            rows = [(name, *compare(durable[name], name, args.calls, args.tries))
                    for name in durable]
        finally:
            DBOS.destroy()
    print(f"a run of {args.calls} calls, median of {args.tries}; DBOS on SQLite")
    print(f"{'tool':<8} {'plain':>8} {'durable':>9} {'steps':>6} {'per call':>9} {'per step':>9}")
    ok = True
    for name, plain, durable, steps in rows:
        per_call = (durable - plain) / args.calls * 1000
        per_step = (durable - plain) / steps * 1000
        ok &= per_step <= TARGET_MS
        print(f"{name:<8} {plain * 1000:>6.1f}ms {durable * 1000:>7.1f}ms {steps:>6} "
              f"{per_call:>7.2f}ms {per_step:>7.2f}ms")
    print(f"target: at most {TARGET_MS:g} ms a step")
    print("PASS" if ok else "FAIL")


if __name__ == "__main__":
    main()
