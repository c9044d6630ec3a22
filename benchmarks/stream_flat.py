"""A 2,000-chunk stream into the plan panel: does a chunk cost the same at the end?

    python benchmarks/stream_flat.py                 # 2,000 chunks, as fast as possible
    python benchmarks/stream_flat.py --chunks 5000

The local fake server streams an answer of ``--chunks`` words with no pause, over real
HTTP; an `OpenAIModel` reads it into an `Agent` watched by a `PlanPanel`. An observer
after the panel stamps each ``model_delta``: the gap between two stamps is what one
chunk costs (SSE parsing, assembling, the event, the panel), since the reader is the
bottleneck. Two figures, beside their targets:

- the mean gap among the last 200 chunks over the mean among the first 200 (after
  20 chunks of warm-up): flat means at most 1.2x;
- the widget redraws a second while the stream runs: at most ~20 (one every 45 ms,
  plus the final one), however fast chunks come.

Exits 0 either way and prints PASS or FAIL.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.fake_openai

from harness import Agent, OpenAIModel
from harness.ui import PlanPanel
from tests.fake_openai import FakeOpenAI, reply

WINDOW, WARM_UP = 200, 20
MAX_RATIO = 1.2
MAX_DRAWS_PER_SECOND = 22.5


def run(chunks: int) -> tuple[list[float], int, float]:
    """Seconds between chunks, the panel's redraws, and how long the stream took."""
    stamps: list[float] = []

    def stamp(event: object) -> None:
        if event.type == "model_delta" and event.kind == "text":
            stamps.append(time.perf_counter())

    panel = PlanPanel()
    text = " ".join(f"word{i}" for i in range(chunks))
    with FakeOpenAI([reply(content=text)]) as server:
        model = OpenAIModel("m", base_url=server.base_url, api_key="sk-bench", max_retries=0)
        result = Agent(model, observers=[panel, stamp]).run("Count")
    if result.outcome != "completed" or len(stamps) != chunks:
        raise RuntimeError(f"the run went wrong: {result!r}, {len(stamps)} chunks")
    gaps = [b - a for a, b in itertools.pairwise(stamps)]
    return gaps, panel.throttle.draws, stamps[-1] - stamps[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    run(200)  # warm up
    results = [run(args.chunks) for _ in range(args.repeats)]
    ratios = [statistics.fmean(g[-WINDOW:]) / statistics.fmean(g[WARM_UP:WARM_UP + WINDOW])
              for g, _, _ in results]
    ratio = statistics.median(ratios)
    gaps, draws, seconds = results[ratios.index(ratio)]
    first = statistics.fmean(gaps[WARM_UP:WARM_UP + WINDOW]) * 1e6
    last = statistics.fmean(gaps[-WINDOW:]) * 1e6
    per_second = draws / seconds
    print(f"{args.chunks:,} chunks in {seconds:.2f} s: first {WINDOW} {first:.0f} µs a chunk, "
          f"last {WINDOW} {last:.0f} µs a chunk ({ratio:.2f}x; each run: "
          f"{', '.join(f'{r:.2f}x' for r in ratios)})")
    print(f"{'PASS' if ratio <= MAX_RATIO else 'FAIL'}: the last {WINDOW} chunks cost "
          f"{ratio:.2f}x the first {WINDOW} (median of {args.repeats} runs; target <= "
          f"{MAX_RATIO:g}x)")
    ok = draws <= seconds * MAX_DRAWS_PER_SECOND + 2
    print(f"{'PASS' if ok else 'FAIL'}: {draws} panel redraws in {seconds:.2f} s "
          f"({per_second:.1f} a second; target <= ~20)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
