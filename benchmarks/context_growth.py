"""What compaction buys a long run: input tokens, the window, and time per round.

A 300-round scripted run whose tool returns 4 kB each round, against a 32k-token window,
once without compaction (every request re-sends every result) and once with it, in the
same process::

    python benchmarks/context_growth.py

Targets (issue 18): with compaction no request passes the window; its total input
tokens are at most 15 % of the run without; a round costs the same late as early (the
last 50 rounds at most 1.3x the first 50). Prints the four figures and PASS or FAIL for
each; exits 0 either way.
"""

from __future__ import annotations

import sys
import time
from itertools import pairwise

from harness import Agent, ScriptedModel, say, tool, tool_call

ROUNDS, WINDOW, RESULT = 300, 32_000, 4_000
TARGET_SHARE, MAX_GROWTH, REPEATS = 0.15, 1.3, 5


@tool
def read_chunk(n: int) -> str:
    """Read one 4 kB chunk of a long log."""
    return f"chunk {n}: " + ("x" * 63 + "\n") * (RESULT // 64)


class Summary:
    """A summary model that answers at once: the benchmark measures the harness."""

    model, context_window = "summary", None

    def complete(self, messages, tools, tool_choice=None):
        from harness.models import parse_reply

        return parse_reply(say(f"Read {messages[-1]['content'].count('read_chunk(')} more "
                               "chunks; nothing unusual in them."))


def run(window: int | None) -> tuple[list[int], list[float]]:
    """The prompt tokens of each request, and the seconds each round took."""
    starts: list[float] = []

    def clock(event):
        if event.type == "model_request" and event.depth == 0:
            starts.append(time.perf_counter())

    script = [tool_call("read_chunk", n=i) for i in range(ROUNDS)] + [say("done")]
    agent = Agent(ScriptedModel(script), [read_chunk], max_turns=ROUNDS + 1, max_requests=None,
                  max_tool_calls=None, context_window=window, summary_model=Summary(),
                  observers=[clock])
    result = agent.run("Read the whole log.")
    if result.outcome != "completed":
        raise RuntimeError(f"the benchmark run went wrong: {result!r}")
    prompts = [e.usage["prompt_tokens"] for e in result.events
               if e.type == "model_reply" and not e.get("purpose")]
    return prompts, [b - a for a, b in pairwise(starts)]


def main() -> int:
    plain, _ = run(None)
    runs = [run(WINDOW) for _ in range(REPEATS)]  # the best of each slice: noise only adds
    compacted = runs[0][0]
    share = sum(compacted) / sum(plain)
    early = min(sum(rounds[:50]) for _, rounds in runs)
    late = min(sum(rounds[-50:]) for _, rounds in runs)
    print(f"without compaction: {sum(plain):>12,} input tokens, largest request {max(plain):,}")
    print(f"with compaction:    {sum(compacted):>12,} input tokens, largest request "
          f"{max(compacted):,} (window {WINDOW:,})")
    print(f"{'PASS' if max(compacted) <= WINDOW else 'FAIL'}: no request over the window")
    print(f"{'PASS' if share <= TARGET_SHARE else 'FAIL'}: input tokens with compaction are "
          f"{share:.1%} of without (target <= {TARGET_SHARE:.0%})")
    growth = late / early
    print(f"{'PASS' if growth <= MAX_GROWTH else 'FAIL'}: the last 50 rounds took {growth:.2f}x "
          f"the first 50 ({late * 1000:.1f} vs {early * 1000:.1f} ms; target <= {MAX_GROWTH}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
