"""What the harness costs per tool round, next to a hand-written floor loop.

Each round the `ScriptedModel` replies with one call to a trivial tool; the harness
records the request, validates the arguments, runs the tool, emits the events and
appends the assistant and tool messages. The floor loop does only the list appends
and a direct call with ``json.loads`` of the arguments. The script is built before the
clock starts; each N runs many times, the sizes taking turns (a burst of noise from a
neighbour on a shared machine then hits every size alike), and the best time counts::

    python benchmarks/loop_overhead.py
    python benchmarks/loop_overhead.py --profile 2000     # where the time goes, at N=2000

Targets (issue 9): at most 20 µs a round at N=200, and a round at N=2000 costs at most
1.3 times a round at N=20 (no work that grows with the history: `ScriptedModel` copies
each message once, when it first sees it). Exits 0 either way and prints PASS or FAIL.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import sys
import time

from harness import Agent, ScriptedModel, say, tool, tool_call

ROUNDS = (20, 200, 2000)
REPEATS = {20: 60, 200: 30, 2000: 8}
TARGET_US_AT_200 = 20.0
MAX_GROWTH = 1.3
SYSTEM, TASK = "You are a counter.", "Count up."


@tool
def bump(n: int) -> int:
    """Return n + 1."""
    return n + 1


def script(rounds: int) -> list[dict]:
    """``rounds`` replies that each call `bump` once, then a final answer."""
    return [*(tool_call("bump", id=f"call_{i}", n=i) for i in range(rounds)), say("done")]


def harness_seconds(rounds: int) -> float:
    agent = Agent(ScriptedModel(script(rounds)), [bump], system=SYSTEM, max_turns=rounds + 1,
                  max_requests=None, max_tool_calls=None)
    start = time.process_time()
    result = agent.run(TASK)
    elapsed = time.process_time() - start
    if result.outcome != "completed" or len(result.messages) != 2 * rounds + 3:
        raise RuntimeError(f"the benchmark run went wrong: {result!r}")
    return elapsed


def floor_seconds(rounds: int) -> float:
    """The least any loop can do: append the messages and call the function."""
    steps = script(rounds)
    start = time.process_time()
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK}]
    for reply in steps:
        message = {"role": "assistant", "content": reply["content"]}
        calls = reply.get("tool_calls")
        if not calls:
            messages.append(message)
            break
        message["tool_calls"] = calls
        messages.append(message)
        for call in calls:
            output = bump.fn(**json.loads(call["function"]["arguments"]))
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": str(output)})
    return time.process_time() - start


def best_us_per_round(measure, sizes=ROUNDS) -> dict[int, float]:
    """The best time per round of each size, the sizes measured in turn."""
    best = dict.fromkeys(sizes, float("inf"))
    for repeat in range(max(REPEATS[n] for n in sizes)):
        for rounds in sizes:
            if repeat < REPEATS[rounds]:
                best[rounds] = min(best[rounds], measure(rounds))
    return {rounds: seconds / rounds * 1e6 for rounds, seconds in best.items()}


def profile(rounds: int) -> None:
    profiler = cProfile.Profile()
    profiler.runcall(harness_seconds, rounds)
    pstats.Stats(profiler).strip_dirs().sort_stats("tottime").print_stats(15)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", type=int, metavar="N",
                        help="print a cProfile of one harness run of N rounds instead")
    args = parser.parse_args(argv)
    if args.profile:
        profile(args.profile)
        return 0
    harness_seconds(ROUNDS[0])  # warm up: imports, schema, pydantic validators
    harness, floor = best_us_per_round(harness_seconds), best_us_per_round(floor_seconds)
    print(f"{'rounds':>7}  {'harness µs/round':>17}  {'floor µs/round':>15}  {'overhead':>9}")
    for rounds in ROUNDS:
        print(f"{rounds:>7}  {harness[rounds]:>17.1f}  {floor[rounds]:>15.2f}  "
              f"{harness[rounds] - floor[rounds]:>9.1f}")
    growth = harness[ROUNDS[-1]] / harness[ROUNDS[0]]
    per_round_ok = harness[200] <= TARGET_US_AT_200
    growth_ok = growth <= MAX_GROWTH
    print(f"{'PASS' if per_round_ok else 'FAIL'}: {harness[200]:.1f} µs a round at N=200 "
          f"(target <= {TARGET_US_AT_200:.0f})")
    print(f"{'PASS' if growth_ok else 'FAIL'}: a round at N={ROUNDS[-1]} costs {growth:.2f}x "
          f"a round at N={ROUNDS[0]} (target <= {MAX_GROWTH:g}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
