"""A long scripted run: does memory stay linear and does a round stay as fast at the end?

    python benchmarks/long_run.py                 # 2,000 rounds
    python benchmarks/long_run.py --rounds 5000

Each round the `ScriptedModel` calls a small tool; every 10th round it updates the
plan, every 25th it sends broken arguments, every 40th it makes two calls at once, so
reminders fire and refusals happen as in a real run. The planning agent ends with the
plan completed and a final answer. Three figures:

- time: an observer stamps each model request with ``time.perf_counter()``; the
  first 200 rounds are compared with the last 200. The transcript grows, so only
  the work that grows with it (the one message copy a callable step or ``requests``
  makes) may slow a round down. Target: median ratio <= 2. The totals are printed
  too, with the slowest round and each full garbage collection: such a pass walks
  every live object, so the round it lands in pays for the whole transcript, and when
  that round falls in the last window the total ratio jumps while the median does not.
- memory: peak RSS (``resource.getrusage``) and the tracemalloc peak of the run,
  per round; and the peak at N rounds over the peak at N/2 (2 means linear: the
  transcript has to be kept, nothing else may grow). Target: <= 2.5.
- size: the run's saved JSON, per round.

Exits 0 either way and prints PASS or FAIL, like the other benchmarks.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import resource
import statistics
import sys
import time
import tracemalloc
from dataclasses import dataclass

from harness import Agent, RunResult, ScriptedModel, parallel, say, tool, tool_call

WINDOW = 200
MAX_TIME_RATIO = 2.0
MAX_MEMORY_RATIO = 2.5


@tool
def bump(n: int) -> int:
    """Return n + 1."""
    return n + 1


def _plan(done: int, total: int = 5) -> dict:
    todos = [{"content": f"Step {i + 1}",
              "status": "completed" if i < done else "in_progress" if i == done else "pending"}
             for i in range(total)]
    return {"todos": todos}


def script(rounds: int) -> list[dict]:
    """``rounds`` tool rounds, then the plan completed and a final answer."""
    steps = []
    for i in range(rounds):
        if i % 10 == 0:
            steps.append(tool_call("todo_write", _plan(min(i * 5 // rounds, 4)), id=f"c{i}"))
        elif i % 25 == 0:
            steps.append(tool_call("bump", '{"n": "not a number"', id=f"c{i}"))
        elif i % 40 == 0:
            steps.append(parallel(tool_call("bump", id=f"c{i}a", n=i),
                                  tool_call("bump", id=f"c{i}b", n=-i)))
        else:
            steps.append(tool_call("bump", id=f"c{i}", n=i))
    return [*steps, tool_call("todo_write", _plan(5), id="done"),
            say(f"Finished {rounds} rounds.")]


@dataclass
class Figures:
    rounds: int
    seconds: float
    first_ms: float  # total of the first WINDOW rounds
    last_ms: float
    first_median_us: float
    last_median_us: float
    slowest_ms: float
    slowest_round: int
    full_gc_ms: list[float]  # each full (generation 2) garbage collection during the run
    rss_before_mb: float
    peak_rss_mb: float
    tracemalloc_peak_mb: float
    saved_kb: float

    @property
    def time_ratio(self) -> float:
        return self.last_ms / self.first_ms

    @property
    def median_ratio(self) -> float:
        return self.last_median_us / self.first_median_us


def run(rounds: int, *, observer: object = None) -> RunResult:
    agent = Agent(ScriptedModel(script(rounds)), [bump], planning=True, max_turns=rounds + 2,
                  max_requests=None, max_tool_calls=None,
                  observers=[observer] if observer else [])
    result = agent.run("Count for a long time.")
    if result.outcome != "completed" or result.turns != rounds + 2:
        raise RuntimeError(f"the long run went wrong: {result!r}")
    return result


def round_times(rounds: int) -> tuple[list[float], list[float]]:
    """Seconds per round, from one model request to the next; and the seconds of each
    full garbage collection that ran meanwhile."""
    stamps: list[float] = []
    collections: list[float] = []
    started: list[float] = []

    def stamp(event: object) -> None:
        if event.type == "model_request":
            stamps.append(time.perf_counter())

    def on_gc(phase: str, info: dict) -> None:
        if info["generation"] == 2:
            if phase == "start":
                started.append(time.perf_counter())
            elif started:
                collections.append(time.perf_counter() - started.pop())

    gc.callbacks.append(on_gc)
    try:
        run(rounds, observer=stamp)
    finally:
        gc.callbacks.remove(on_gc)
    return [b - a for a, b in itertools.pairwise(stamps)][:rounds], collections


def traced_peak(rounds: int) -> float:
    """The tracemalloc peak of one run, in bytes (the script is built before tracing)."""
    steps = script(rounds)
    agent = Agent(ScriptedModel(steps), [bump], planning=True, max_turns=rounds + 2,
                  max_requests=None, max_tool_calls=None)
    tracemalloc.start()
    try:
        agent.run("Count for a long time.")
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def peak_rss_mb() -> float:
    """The process's peak resident set size so far (``ru_maxrss``: KiB on Linux)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024  # bytes on macOS


def measure(rounds: int, window: int = WINDOW) -> Figures:
    window = min(window, rounds // 3)
    rss_before = peak_rss_mb()
    started = time.perf_counter()
    times, collections = round_times(rounds)
    seconds = time.perf_counter() - started
    first, last = times[:window], times[-window:]
    slowest = max(range(len(times)), key=times.__getitem__)
    result = run(rounds)
    saved_kb = len(json.dumps(result.to_dict())) / 1024
    del result
    peak = traced_peak(rounds)
    return Figures(rounds, seconds, sum(first) * 1e3, sum(last) * 1e3,
                   statistics.median(first) * 1e6, statistics.median(last) * 1e6,
                   times[slowest] * 1e3, slowest + 1, [c * 1e3 for c in collections],
                   rss_before, peak_rss_mb(), peak / 2**20, saved_kb)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000)
    args = parser.parse_args(argv)
    run(20)  # warm up: imports, schemas, validators
    f = measure(args.rounds)
    half = traced_peak(args.rounds // 2)
    memory_ratio = f.tracemalloc_peak_mb * 2**20 / half
    print(f"{f.rounds:,} rounds in {f.seconds:.2f} s ({f.seconds / f.rounds * 1e6:.0f} µs a round)")
    print(f"first {WINDOW} rounds: {f.first_ms:.1f} ms (median {f.first_median_us:.0f} µs); "
          f"last {WINDOW}: {f.last_ms:.1f} ms (median {f.last_median_us:.0f} µs)")
    per_round_kb = f.tracemalloc_peak_mb * 1024 / f.rounds
    print(f"peak RSS {f.peak_rss_mb:.1f} MB ({f.rss_before_mb:.1f} MB before the run); "
          f"tracemalloc peak {f.tracemalloc_peak_mb:.2f} MB ({per_round_kb:.1f} KB a round); "
          f"saved run {f.saved_kb:,.0f} KB")
    gcs = ", ".join(f"{ms:.1f}" for ms in f.full_gc_ms) or "none"
    print(f"slowest round: #{f.slowest_round:,}, {f.slowest_ms:.1f} ms; full garbage "
          f"collections: {gcs} ms; total of the last {WINDOW} / first {WINDOW}: "
          f"{f.time_ratio:.2f}x")
    time_ok = f.median_ratio <= MAX_TIME_RATIO
    memory_ok = memory_ratio <= MAX_MEMORY_RATIO
    print(f"{'PASS' if time_ok else 'FAIL'}: a round among the last {WINDOW} takes "
          f"{f.median_ratio:.2f}x one among the first {WINDOW} (medians; target <= "
          f"{MAX_TIME_RATIO:g}x)")
    print(f"{'PASS' if memory_ok else 'FAIL'}: tracemalloc peak at {f.rounds:,} rounds is "
          f"{memory_ratio:.2f}x the peak at {f.rounds // 2:,} (linear is 2; "
          f"target <= {MAX_MEMORY_RATIO:g}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
