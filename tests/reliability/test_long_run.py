"""A long run, small enough for every test run: 300 rounds of `benchmarks/long_run.py`.

The benchmark itself runs 2,000 rounds and prints the figures; here the same script
checks that the run completes with a valid transcript, that the last rounds are not
slower than the first beyond noise, and that memory grows linearly with the rounds.
"""

from __future__ import annotations

from benchmarks.long_run import measure, run, traced_peak

ROUNDS = 300


def test_three_hundred_rounds_complete_with_the_plan_done() -> None:
    result = run(ROUNDS)
    assert result.final == f"Finished {ROUNDS} rounds."
    assert [i.status for i in result.plan] == ["completed"] * 5
    assert len(result.messages) > 2 * ROUNDS
    assert sum(e.type == "reminder" for e in result.events) > 0  # refusals and reminders ran


def test_late_rounds_are_as_fast_as_early_ones() -> None:
    run(20)  # warm up
    figures = measure(ROUNDS, window=50)
    print(f"\nlong run, {ROUNDS} rounds: last 50 / first 50 = {figures.time_ratio:.2f}x "
          f"(median {figures.median_ratio:.2f}x), tracemalloc peak "
          f"{figures.tracemalloc_peak_mb:.2f} MB, peak RSS {figures.peak_rss_mb:.0f} MB")
    assert figures.median_ratio < 3  # generous: a shared CI machine is noisy


def test_memory_grows_linearly_with_the_rounds() -> None:
    half, full = traced_peak(ROUNDS // 2), traced_peak(ROUNDS)
    assert full / half < 2.6
    assert full / ROUNDS < 20_000  # bytes a round: the transcript and events, nothing more
