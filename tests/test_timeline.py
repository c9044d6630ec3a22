"""The timeline of a run (harness/trace/timeline.py, svg.py): what its text says of the
order and the overlaps, for a saved run too, and that the same run always reads the same."""

from __future__ import annotations

import json
import re
import time
import xml.etree.ElementTree as ET

import pytest

import harness
from harness import Agent, Permissions, RunResult, ScriptedModel, parallel, say, tool, tool_call
from harness.trace import Timeline, timeline


@tool(parallel=True)
def slow_read(name: str) -> str:
    """Read a file slowly (it only reads: it may run beside others)."""
    time.sleep(0.02)
    return f"contents of {name}"


@tool(side_effects=True)
def refund(order: str) -> str:
    """Refund an order."""
    return f"refunded {order}"


def used(step: dict, prompt: int, completion: int) -> dict:
    return {**step, "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                              "total_tokens": prompt + completion}}


def play() -> RunResult:
    """Three reads at once, one alone, a delegation whose sub-agent reads, an answer."""
    model = ScriptedModel([
        used(parallel(tool_call("slow_read", name="a"), tool_call("slow_read", name="b"),
                      tool_call("slow_read", name="c")), 100, 30),
        used(tool_call("slow_read", name="d"), 160, 10),
        used(tool_call("delegate_task", task="read e"), 190, 12),
        used(tool_call("slow_read", name="e"), 50, 8),  # the sub-agent
        used(say("e says: contents of e"), 70, 6),  # the sub-agent
        used(say("All five read."), 230, 5),
    ])
    return Agent(model, [slow_read], subagents=True, subagent_tools=("slow_read",)).run(
        "Read a to e")


def rows(text: str) -> list[tuple[str, str, int, int, str]]:
    """Each row of the text: agent, what, first and last column of its bar, tokens."""
    lines = text.splitlines()
    header = lines[1]
    what_at, bar_at, tokens_at = (header.index(h) for h in ("what", "steps →", "tokens"))
    found = []
    for line in lines[2:]:
        if line.startswith("Tokens of all requests"):
            break
        bar = line[bar_at:tokens_at]
        marks = [i for i, c in enumerate(bar) if c in "█◆"]
        found.append((line[:what_at].strip(), line[what_at:bar_at].strip(), marks[0], marks[-1],
                      line[tokens_at:].strip()))
    return found


def overlap(a: tuple, b: tuple) -> bool:
    return a[2] <= b[3] and b[2] <= a[3]


def test_a_saved_run_draws_its_order_and_its_overlaps(tmp_path):
    result = play()
    loaded = RunResult.load(result.save(tmp_path / "run.json"))
    found = rows(timeline(loaded).text())

    assert [(who, what) for who, what, *_ in found] == [
        ("main", "run (completed)"), ("main", "request 1"),
        ("main", "slow_read"), ("main", "slow_read"), ("main", "slow_read"),
        ("main", "request 2"), ("main", "slow_read"), ("main", "request 3"),
        ("main", "delegate_task"), ("main.sub1", "run (completed)"),
        ("main.sub1", "request 1"), ("main.sub1", "slow_read"), ("main.sub1", "request 2"),
        ("main", "request 4")]
    at_once, alone = found[2:5], found[6]
    assert all(overlap(x, y) for x in at_once for y in at_once)  # side by side
    assert not any(overlap(x, alone) for x in at_once)
    assert max(x[3] for x in at_once) < found[5][2] and found[5][3] < alone[2]  # request 2
    delegation, sub_rows = found[8], found[9:13]
    assert all(delegation[2] <= r[2] and r[3] <= delegation[3] for r in sub_rows)
    assert found[13][2] > delegation[3]


def test_each_request_shows_its_tokens_in_and_out():
    found = rows(timeline(play()).text())

    assert [tokens for _, what, _, _, tokens in found if what.startswith("request")] == [
        "100 → 30", "160 → 10", "190 → 12", "50 → 8", "70 → 6", "230 → 5"]


def test_the_same_run_reads_and_draws_the_same_every_time():
    first, second = timeline(play()), timeline(play())

    assert first.axis == "steps"  # a scripted run takes well under a second
    assert first.text() == second.text()
    assert first.svg() == second.svg()
    assert not re.search(r"\d\s?(s|ms)\b", first.text())  # no time in the text


def stretched(result: RunResult, tmp_path, factor: float) -> RunResult:
    """The run as if every step had taken ``factor`` times as long (a live model's pace)."""
    data = json.loads(result.save(tmp_path / "run.json").read_text(encoding="utf-8"))
    t0 = data["events"][0]["at"]
    for event in data["events"]:
        event["at"] = t0 + (event["at"] - t0) * factor
    (tmp_path / "slow.json").write_text(json.dumps(data), encoding="utf-8")
    return RunResult.load(tmp_path / "slow.json")


def test_a_run_that_took_seconds_is_drawn_on_the_clock_and_reads_the_same(tmp_path):
    result = play()
    slow = stretched(result, tmp_path, 1_000)
    clock, steps = timeline(slow), timeline(result)

    assert clock.axis == "time" and clock.seconds >= 1
    assert "0 s</text>" in clock.svg() and "steps (the order" not in clock.svg()
    assert clock.text().splitlines()[1:] == steps.text().splitlines()[1:]
    assert timeline(slow, axis="steps").svg() != clock.svg()


def test_a_run_saved_before_events_had_times_is_drawn_in_steps(tmp_path):
    data = json.loads(play().save(tmp_path / "run.json").read_text(encoding="utf-8"))
    for event in data["events"]:
        event.pop("at", None)
    (tmp_path / "old.json").write_text(json.dumps(data), encoding="utf-8")
    old = RunResult.load(tmp_path / "old.json")

    assert timeline(old).axis == "steps"
    assert rows(timeline(old).text()) == rows(timeline(play()).text())
    with pytest.raises(ValueError, match="axis='steps'"):
        timeline(old, axis="time")


def test_a_wait_for_a_person_sits_inside_its_call_and_a_pause_is_marked():
    asked = ScriptedModel([tool_call("refund", order="ORD-1"), say("Refunded.")])
    yes = Agent(asked, [refund], permissions=Permissions(
        {"refund": "ask"}, approve=lambda name, arguments: True)).run("Refund ORD-1")
    paused = Agent(ScriptedModel([tool_call("refund", order="ORD-1")]), [refund],
                   permissions=Permissions({"refund": "ask"}, approve="pause")).run("Refund")
    found = rows(timeline(yes).text())
    call = next(r for r in found if r[1] == "refund")
    wait = next(r for r in found if r[1] == "approval: refund (yes)")

    assert call[2] <= wait[2] and wait[3] <= call[3]
    assert [what for _, what, *_ in rows(timeline(paused).text())][-3:] == [
        "refund (waits for a person)", "approval: refund (waiting)", "paused: awaits approval"]


def test_a_compaction_and_its_summary_request_are_on_the_timeline():
    model = ScriptedModel([
        tool_call("search_docs", query="refund business days", max_results=1),
        tool_call("search_docs", query="warranty year", max_results=1),
        tool_call("search_docs", query="standard shipping", max_results=1),
        tool_call("compact"),
        say("Done."),
    ], summaries=[say("Searched the policies.")])
    result = Agent(model, harness.Workspace.sample().tools, context_window=3_000).run("Policies?")
    found = rows(timeline(result).text())
    compaction = next(r for r in found if r[1].startswith("compaction ~"))
    summary = next(r for r in found if r[1] == "summary")

    assert compaction[2] <= summary[2] and summary[3] <= compaction[3]


def test_in_a_notebook_it_is_a_picture_with_its_text_as_the_fallback():
    failing = ScriptedModel([tool_call("nothing_here"), say("no")])
    drawn = timeline(Agent(failing).run("go"))
    bundle = drawn._repr_mimebundle_()
    svg = ET.fromstring(bundle["image/svg+xml"])

    assert bundle["text/plain"] == drawn.text() == str(drawn)
    assert svg.get("class") == "harness-timeline"
    assert 'fill="#e15759"' in bundle["image/svg+xml"]  # the failed call, in red
    assert "nothing_here (unknown_tool)" in drawn.text()


def test_an_unknown_axis_is_refused_with_the_ones_there_are():
    with pytest.raises(ValueError, match="'auto', 'time' or 'steps'"):
        Timeline([], axis="seconds")
