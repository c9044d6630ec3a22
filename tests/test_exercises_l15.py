"""Lesson 15's exercise checks accept the reference solutions and reject plausible mistakes,
each with a hint that says what to change; the browser edition's check (the in-flight rule
applied to the marks) finds what a real run killed in each call finds; the lesson's text
says what its outputs show."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
sys.path.insert(0, str(LESSONS))

import exercises.l15 as checks  # noqa: E402
from exercises.l15 import check_retry_marks, check_settle  # noqa: E402
from solutions import l15  # noqa: E402

from harness import RunResult  # noqa: E402

# -- exercise 1: settle a paused run from its file -------------------------------------------


def test_settle_accepts_the_reference(capsys):
    assert check_settle(l15.settle)
    assert "PASS" in capsys.readouterr().out


def approve_all(agent, path, person):
    result = RunResult.load(path)
    while result.outcome == "awaiting_approval":
        result = agent.resume(result, approvals={c["id"]: True for c in result.pending})
        result.save(path)
    return result


def resume_once(agent, path, person):
    result = RunResult.load(path)
    result = agent.resume(result, approvals={c["id"]: person(c) for c in result.pending})
    result.save(path)
    return result


def never_saves(agent, path, person):
    result = RunResult.load(path)
    while result.outcome == "awaiting_approval":
        result = agent.resume(result, approvals={c["id"]: person(c) for c in result.pending})
    return result


def saves_only_pauses(agent, path, person):
    result = RunResult.load(path)
    while result.outcome == "awaiting_approval":
        result = agent.resume(result, approvals={c["id"]: person(c) for c in result.pending})
        if result.outcome == "awaiting_approval":
            result.save(path)
    return result


def first_answer_for_all(agent, path, person):
    result = RunResult.load(path)
    while result.outcome == "awaiting_approval":
        yes = person(result.pending[0])
        result = agent.resume(result, approvals={c["id"]: yes for c in result.pending})
        result.save(path)
    return result


def by_tool_name(agent, path, person):
    result = RunResult.load(path)
    while result.outcome == "awaiting_approval":
        result = agent.resume(result, approvals={c["tool_name"]: person(c)
                                                 for c in result.pending})
        result.save(path)
    return result


def only_the_yeses(agent, path, person):
    result = RunResult.load(path)
    while result.outcome == "awaiting_approval":
        result = agent.resume(result, approvals={c["id"]: True for c in result.pending
                                                 if person(c)})
        result.save(path)
    return result


def asks_about_the_arguments(agent, path, person):
    result = RunResult.load(path)
    while result.outcome == "awaiting_approval":
        result = agent.resume(result, approvals={c["id"]: person(c["arguments"])
                                                 for c in result.pending})
        result.save(path)
    return result


def returns_nothing(agent, path, person):
    l15.settle(agent, path, person)


def two_resumes(agent, path, person):  # the check's two pauses, hard-coded
    result = RunResult.load(path)
    for _ in range(2):
        result = agent.resume(result, approvals={c["id"]: person(c) for c in result.pending})
        result.save(path)
    return result


def resumes_before_it_looks(agent, path, person):  # resume first, then ask if it still waits
    result = RunResult.load(path)
    while True:
        result = agent.resume(result, approvals={c["id"]: person(c) for c in result.pending})
        result.save(path)
        if result.outcome != "awaiting_approval":
            return result


@pytest.mark.parametrize("wrong, hint", [
    (approve_all, "the person said no to the 120 EUR refund of ORD-1003, and it ran"),
    (first_answer_for_all, "the person said no to the 120 EUR refund of ORD-1003, and it ran"),
    (resume_once, "a resumed run can pause again"),
    (never_saves, "save each run that pauses before you ask"),
    (saves_only_pauses, "the file still holds a run waiting for ['ORD-1001']"),
    (by_tool_name, "raised ValueError: call 'issue_refund' is not waiting"),
    (only_the_yeses, "raised ValueError: no answer for"),
    (asks_about_the_arguments, "ask about each waiting call itself"),
    (returns_nothing, "settle returned NoneType"),
    (two_resumes, "however many pauses it makes"),
    (resumes_before_it_looks, "a run that waits for nothing"),
])
def test_settle_rejects_mistakes(capsys, wrong, hint):
    assert not check_settle(wrong)
    out = capsys.readouterr().out
    assert hint in out, out


def test_settle_stub_says_not_done(capsys):
    def stub(agent, path, person):
        raise NotImplementedError

    assert not check_settle(stub)
    assert "not done" in capsys.readouterr().out


# -- exercise 2: which calls may run again ----------------------------------------------------

REFERENCE = l15.retry_marks()
EVERYTHING_AGAIN = dict.fromkeys(checks.TOOLS, "idempotent")  # an engine's default: retry all
NOTHING_AGAIN = {**dict.fromkeys(checks.TOOLS, "side_effects"),  # lesson 11's: never retry
                 "track_parcel": "read_only"}
RUNS: dict[str, dict] = {}  # real runs, by marks: each costs about 6 s (five processes)


@pytest.fixture
def real_runs(monkeypatch):
    """`_crash_in_each`, each set of marks run once for the whole module."""
    pytest.importorskip("dbos")
    crash = checks._crash_in_each

    def cached(marks):
        key = json.dumps(marks, sort_keys=True)
        if key not in RUNS:
            RUNS[key] = crash(marks)
        return RUNS[key]

    monkeypatch.setattr(checks, "_crash_in_each", cached)
    return cached


def test_retry_marks_accepts_the_reference_in_a_real_run(real_runs, capsys):
    assert check_retry_marks(l15.retry_marks)
    out = capsys.readouterr().out
    assert "PASS: in a real run killed in each call" in out, out
    seen = real_runs(REFERENCE)
    assert seen["ran"] == {"track_parcel": 2, "book_pickup": 2, "set_status": 2, "add_note": 1}
    assert seen["status"]["add_note"] == "unknown" and seen["notes"] == 1
    assert seen["pickups"] == 1


def test_retry_marks_rejects_a_note_marked_safe_in_a_real_run(real_runs, capsys):
    assert not check_retry_marks(lambda: dict(EVERYTHING_AGAIN))
    out = capsys.readouterr().out
    assert "add_note ran again after the crash: the case notes say it 2 times" in out, out


@pytest.mark.parametrize("marks", [REFERENCE, EVERYTHING_AGAIN],
                         ids=["reference", "everything_again"])
def test_the_browser_check_finds_what_a_real_run_finds(real_runs, marks):
    assert checks._by_the_rule(marks) == real_runs(marks)


@pytest.mark.parametrize("marks, hint", [
    (EVERYTHING_AGAIN, "add_note ran again after the crash"),
    ({**REFERENCE, "add_note": "read_only"}, "add_note ran again after the crash"),
    (NOTHING_AGAIN, "book_pickup was left unknown"),
    ({**REFERENCE, "set_status": "side_effects"}, "set_status was left unknown"),
    ({**REFERENCE, "track_parcel": "side_effects"}, "track_parcel was left unknown"),
    ({**REFERENCE, "track_parcel": "idempotent"}, "track_parcel only reads: mark it read_only"),
    ({**REFERENCE, "book_pickup": "read_only"}, "book_pickup changes the world"),
    ({**REFERENCE, "set_status": "read_only"}, "set_status changes the world"),
    ({k: v for k, v in REFERENCE.items() if k != "add_note"}, "should return a dict with the keys"),
    ({**REFERENCE, "add_note": "unsafe"}, "mark each tool with one of"),
])
def test_retry_marks_rejects_mistakes_by_the_rule(monkeypatch, capsys, marks, hint):
    monkeypatch.setattr(checks, "IN_BROWSER", True)
    assert not check_retry_marks(lambda: dict(marks))
    out = capsys.readouterr().out
    assert hint in out, out


def test_retry_marks_in_the_browser_accepts_the_reference_and_says_how(monkeypatch, capsys):
    monkeypatch.setattr(checks, "IN_BROWSER", True)
    assert check_retry_marks(l15.retry_marks)
    assert "the browser edition cannot run DBOS" in capsys.readouterr().out


def test_retry_marks_stub_says_not_done(capsys):
    def stub():
        raise NotImplementedError

    assert not check_retry_marks(stub)
    assert "not done" in capsys.readouterr().out


# -- the lesson says what its outputs show ----------------------------------------------------

def lesson() -> tuple[str, list[dict]]:
    cells = json.loads(next(LESSONS.glob("15_*.ipynb")).read_text(encoding="utf-8"))["cells"]
    text = " ".join(" ".join("".join(c["source"]).split())
                    for c in cells if c["cell_type"] == "markdown")
    return text, cells


def output(cells: list[dict], code: str) -> str:
    [cell] = [c for c in cells if c["cell_type"] == "code" and code in "".join(c["source"])]
    return "".join("".join(o.get("text", "")) for o in cell["outputs"])


WORDS = {"two": 2, "three": 3, "four": 4, "seven": 7}


def counted(line: str) -> int:
    """Steps in a "answered from the record here: model x3, tool:read_file" line."""
    return sum(int(n or 1) for n in re.findall(r"[\w:.]+(?: x(\d+))?", line.split(": ", 1)[1]))


def test_the_lesson_counts_the_steps_its_workers_printed():
    text, cells = lesson()
    replayed, ran = re.search(r"Worker 3 answered (\w+) steps from the record and ran (\w+)",
                              text).groups()
    out = " ".join(output(cells, 'worker(shop, "finish", RUN)))').split())
    assert counted(re.search(r"answered from the record here: (.*?) run here", out)
                   .group(0).removesuffix(" run here")) == WORDS[replayed]
    assert counted(re.search(r"run here: (.*?) read_file", out).group(0)
                   .removesuffix(" read_file")) == WORDS[ran]
    pg = re.search(r"answered (\w+) steps from the record, ran the refund again", text).group(1)
    recorded = (LESSONS / "durable_postgres.txt").read_text(encoding="utf-8")
    line = next(x for x in recorded.splitlines() if "answered from the record here" in x)
    assert counted(line.strip()) == WORDS[pg]


def test_the_lesson_states_the_turns_and_the_one_refund_its_runs_printed():
    text, cells = lesson()
    after, before = re.search(r"The turns count on too: (\d+), one more than the pause's (\d+)",
                              text).groups()
    assert f"awaiting_approval | turns: {before}" in output(cells, "paused = Agent(")
    assert f"completed | turns: {after}" in output(cells, "approved = shop_agent()")
    world = output(cells, "print(world(shop))")
    assert world.count("issue_refund ORD-1002") == 2
    assert "refunds the payment provider made: 1" in world and "emails sent: 1" in world


SERVER = os.environ.get("HARNESS_POSTGRES_URL") or os.environ.get("HARNESS_TEST_POSTGRES_URL")


@pytest.mark.skipif(not SERVER, reason="needs a Postgres server: set HARNESS_POSTGRES_URL "
                                       "(or HARNESS_TEST_POSTGRES_URL, as .ci/run does)")
def test_the_postgres_recording_is_what_a_run_against_postgres_prints(tmp_path):
    pytest.importorskip("dbos")
    from durable_shop import two_workers

    from harness import Workspace

    own = SERVER.rsplit("/", 1)[0] + "/lesson15"  # a database of its own (DBOS makes it)
    printed = two_workers(own, Workspace.sample(tmp_path / "pg").root)
    assert printed + "\n" == (LESSONS / "durable_postgres.txt").read_text(encoding="utf-8")
