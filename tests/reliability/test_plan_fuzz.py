"""Plans under fuzzing: no update, however broken, changes the plan unless it is valid.

Invariant, for every update: an invalid one is refused and leaves the plan exactly as
it was; a valid one replaces it exactly; nothing raises out of the tool or the loop.
One hypothesis example feeds a batch of updates into one `todo_write` tool (the
parse + execute path the loop takes), so a run covers well over 10,000 updates in a
few seconds; fewer, whole `Agent` runs push the same raw strings through the loop.
"""

from __future__ import annotations

import json
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import Agent, ScriptedModel, TodoList, Tool, parallel, say, tool_call
from harness.todo import PlanError
from harness.tools import ToolArgumentError

from .plan_inputs import Updates, expected_items, expected_plan

FUZZ = settings(derandomize=True, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))
# Control characters come from plan_inputs' odd texts, at a rate that leaves both valid
# and invalid updates common; drawn freely they would make almost every update invalid.
WORDS = st.lists(st.text(st.characters(codec="utf-8", exclude_categories=("Cc",)),
                         max_size=16), min_size=4, max_size=8)
RECIPE = st.binary(min_size=1100, max_size=1100)  # about 70 updates each
MIN_UPDATES = 10_000


def plan_of(todos: TodoList) -> list[tuple[str, str]]:
    return [(item.content, item.status) for item in todos.snapshot()]


def apply_through_the_tool(raw: str, todo_write: Tool) -> bool:
    """Parse, then execute, exactly as the loop does; True if the plan accepted it."""
    try:
        args = todo_write.parse(raw)
    except ToolArgumentError as exc:
        assert str(exc).endswith("The plan was not changed."), str(exc)
        return False
    result = todo_write.execute(args)
    if not result.ok:
        assert result.output.startswith("Error:"), result.output
        assert result.output.endswith("The plan was not changed."), result.output
    return result.ok


def check_tool_batch(words: list[str], recipe: bytes, counts: dict[str, int]) -> None:
    todos, accepted, total, valid = TodoList(), [], 0, 0
    todos.update([{"content": "the plan before", "status": "in_progress"}])
    todo_write = todos.as_tool()
    for raw in Updates(words, recipe):
        before, want = plan_of(todos), expected_plan(raw)
        ok = apply_through_the_tool(raw, todo_write)
        accepted += [raw] if ok else []
        if want is None:
            assert not ok, f"an invalid update was accepted: {raw[:300]!r}"
            assert plan_of(todos) == before, f"a refused update changed the plan: {raw[:300]!r}"
        else:
            assert ok, f"a valid update was refused: {raw[:300]!r}"
            assert plan_of(todos) == want, f"the plan is not exactly the update: {raw[:300]!r}"
        total, valid = total + 1, valid + (want is not None)
    assert len(accepted) == valid  # the tool accepts exactly the valid updates
    counts["tool"] += total
    counts["valid"] += valid


def check_python_batch(words: list[str], recipe: bytes, counts: dict[str, int]) -> None:
    """`TodoList.update` with Python objects: the same rules, refused as `PlanError`."""
    todos = TodoList()
    maker = Updates(words, recipe)
    while maker.pos < len(maker.recipe):
        items = maker.items() if maker.pick(4) else maker.choose([None, "x", {}, 3, ("a",)])
        before, want = plan_of(todos), expected_items(items)
        try:
            todos.update(items)
            ok = True
        except PlanError:
            ok = False
        assert ok == (want is not None), f"update({items!r:.300}) gave ok={ok}"
        assert plan_of(todos) == (before if want is None else want)
        counts["python"] += 1


def test_ten_thousand_fuzzed_updates_keep_or_replace_the_plan_exactly() -> None:
    counts = {"tool": 0, "valid": 0, "python": 0}
    started = time.perf_counter()

    @settings(FUZZ, max_examples=150)
    @given(WORDS, RECIPE)
    def fuzz(words: list[str], recipe: bytes) -> None:
        check_tool_batch(words, recipe, counts)
        check_python_batch(words, recipe[:100], counts)

    fuzz()
    seconds = time.perf_counter() - started
    print(f"\nplan fuzz: {counts['tool']:,} tool updates ({counts['valid']:,} valid) and "
          f"{counts['python']:,} TodoList.update calls in {seconds:.2f} s")
    assert counts["tool"] >= MIN_UPDATES
    assert 0.2 < counts["valid"] / counts["tool"] < 0.8  # both sides are well exercised


@settings(FUZZ, max_examples=80)
@given(WORDS, st.binary(min_size=80, max_size=240), st.booleans())
def test_fuzzed_todo_write_calls_in_a_run_leave_the_last_valid_plan(
        words: list[str], recipe: bytes, two_per_reply: bool) -> None:
    raws = list(Updates(words, recipe))
    per_reply = 2 if two_per_reply else 1
    steps = [parallel(*(tool_call("todo_write", raw, id=f"c{i + j}")
                        for j, raw in enumerate(raws[i:i + per_reply])))
             for i in range(0, len(raws), per_reply)]
    steps += [say("done"), say("done, really")]
    accepted = [expected_plan(raw) is not None for raw in raws]
    want: list[tuple[str, str]] = []  # the plan of the last update that must be accepted
    for raw, ok in zip(raws, accepted, strict=True):
        want = expected_plan(raw) if ok else want

    result = Agent(ScriptedModel(steps), planning=True, max_turns=len(steps)).run("Plan it")

    assert [(i.content, i.status) for i in result.plan] == want
    assert result.outcome == ("open_items" if any(s != "completed" for _, s in want)
                              else "completed")
    answers = [m["content"] for m in result.messages if m["role"] == "tool"]
    assert [a.startswith("Plan updated") for a in answers] == accepted
    assert sum(e.type == "plan_update" for e in result.events) == sum(accepted)
    json.dumps(result.to_dict())  # the result stays serialisable whatever went in
