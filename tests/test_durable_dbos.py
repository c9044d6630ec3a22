"""Durable runs on DBOS with SQLite (harness/durable/dbos.py): each model request and each
tool call a step; a run killed with SIGKILL is finished by a new process; a finished step
never runs again; the call in flight at the kill follows one rule (read-only: runs again;
`idempotent`: runs again with the same key; any other with side effects: ``unknown``).

DBOS keeps one instance per process, so every run here is a process of its own
(tests/fixtures/durable/shop.py); the files it writes say what the world saw.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("dbos")

SHOP = Path(__file__).parent / "fixtures" / "durable" / "shop.py"
TASK_FINAL = "A1: 2 mugs, 30 EUR | paid 30 EUR for A1 | sent to ann@example.com"
STEPS = ["model", "tool:look_up", "model", "intent:pay", "tool:pay", "model", "intent:email",
         "tool:email", "model"]


ENV = {k: v for k, v in os.environ.items() if not k.startswith(("DBOS", "OPENAI"))}


def shop(folder: Path, mode: str, workflow_id: str, *flags: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SHOP), str(folder), mode, workflow_id, *flags],
                          capture_output=True, text=True, timeout=60, env=ENV, check=False)


@dataclass
class Crashed:
    """A run killed in each tool it called, finished by new processes."""

    codes: list[int]  # each process's exit code: -9 killed, 0 done
    out: dict  # what the last process printed (result, steps, ...)
    effects: list[str]  # one line each time a tool's body ran
    stats: list[dict]  # each process's steps: ran / replayed, by name

    def tool_results(self) -> list[tuple[str, str]]:
        return [(e["tool_name"], e["status"]) for e in self.out["result"]["events"]
                if e["type"] == "tool_result"]


def crash_and_finish(folder: Path, workflow_id: str, *flags: str) -> Crashed:
    done = shop(folder, "start", workflow_id, *flags)
    codes = [done.returncode]
    while codes[-1] != 0 and len(codes) < 6:
        done = shop(folder, "finish", workflow_id, *flags)
        assert done.returncode in (0, -9), done.stderr
        codes.append(done.returncode)
    stats = [json.loads((folder / f"stats-{n}.json").read_text()) for n in range(len(codes))]
    return Crashed(codes, json.loads(done.stdout),
                   (folder / "effects").read_text().splitlines(), stats)


@pytest.fixture(scope="module", params=[None, "60"], ids=["no_deadline", "max_seconds"])
def crashed(request, tmp_path_factory) -> Crashed:
    """One run killed inside each of its three tools: look_up (read-only), pay (idempotent),
    email (side effects, no key). With max_seconds, requests run on a waiting thread."""
    deadline = ["--max-seconds", request.param] if request.param else []
    return crash_and_finish(tmp_path_factory.mktemp("shop"), "order-A1",
                            "--kill", "look_up,pay,email", *deadline)


def test_a_run_killed_three_times_is_finished_by_a_new_process(crashed):
    assert crashed.codes == [-9, -9, -9, 0]
    result = crashed.out["result"]
    assert result["outcome"] == "completed"
    assert result["final"].startswith("A1: 2 mugs, 30 EUR | paid 30 EUR for A1 | Unknown:")
    assert crashed.out["steps"] == STEPS


def test_each_finished_step_ran_once_and_later_processes_replay_it(crashed):
    ran = [Counter(s["ran"]) for s in crashed.stats]
    assert sum(ran, Counter()) == Counter(STEPS)  # every step finished once, in all processes
    for n, stats in enumerate(crashed.stats):  # a process answers from the record all that
        assert Counter(stats["replayed"]) == sum(ran[:n], Counter())  # finished before it
    assert ran[0] == {"model": 1}  # killed inside look_up: its step never finished
    assert ran[-1] == {"tool:email": 1, "model": 1}  # email's answer (unknown), the last reply


def test_a_read_only_call_in_flight_runs_again(crashed):
    assert crashed.effects.count("look_up A1") == 2
    assert crashed.tool_results()[0] == ("look_up", "ok")


def test_an_idempotent_call_in_flight_runs_again_with_the_same_key(crashed):
    assert [e for e in crashed.effects if e.startswith("pay")] == [
        "pay A1 30 order-A1:call_2_0"] * 2
    assert crashed.tool_results()[1] == ("pay", "ok")


def test_a_call_with_side_effects_and_no_key_in_flight_is_unknown_not_run_again(crashed):
    assert crashed.effects.count("email ann@example.com") == 1
    assert crashed.tool_results()[2] == ("email", "unknown")
    answered = crashed.out["result"]["messages"][-2]
    assert answered["role"] == "tool"
    assert answered["content"].startswith("Unknown: it may have run; not retried.")


def test_a_finished_workflow_answers_from_its_record(crashed):
    # `durable.run` with the id of a finished workflow returns its result, running nothing
    assert crashed.out["again"] == crashed.out["result"]
    assert crashed.stats[-1]["ran"] == {"tool:email": 1, "model": 1}


def test_each_request_and_call_is_a_step_and_the_run_is_the_plain_one(tmp_path):
    done = shop(tmp_path, "start", "order-B2")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["steps"] == STEPS
    assert out["result"]["final"] == TASK_FINAL
    assert out["result"]["messages"] == out["plain"]["messages"]
    assert (tmp_path / "effects").read_text().splitlines() == [
        "look_up A1", "pay A1 30 order-B2:call_2_0", "email ann@example.com"]


def test_a_sub_agent_killed_mid_call_finishes_with_its_own_key(tmp_path):
    run = crash_and_finish(tmp_path, "order-C3", "--team", "--kill", "pay")
    assert run.codes == [-9, 0]
    assert run.out["steps"] == ["model", "model", "tool:look_up", "model", "intent:pay",
                                "tool:pay", "model", "model"]
    assert run.effects == ["look_up A1", *["pay A1 30 order-C3:main.sub1:call_3_0"] * 2]
    result = run.out["result"]
    assert result["final"] == "A1: 2 mugs, 30 EUR | paid 30 EUR for A1"
    assert [d["outcome"] for d in result["delegations"]] == ["completed"]
    assert result["messages"] == run.out["plain"]["messages"]


def test_a_durable_approval_waits_while_no_process_runs_and_survives_a_kill(tmp_path):
    started = shop(tmp_path, "start", "order-D4", "--ask")  # pauses at pay, then is killed
    assert started.returncode == -9
    assert [p["tool_name"] for p in json.loads(started.stdout)["pending"]] == ["pay"]
    approved = shop(tmp_path, "approve", "order-D4", "--tool", "pay")  # no worker runs it now
    assert approved.returncode == 0, approved.stderr
    assert "'call_9_9' is not waiting for approval" in json.loads(approved.stdout)["refused"]
    worker = subprocess.Popen([sys.executable, str(SHOP), str(tmp_path), "finish", "order-D4",
                               "--ask", "--kill", "email"], stdout=subprocess.PIPE, env=ENV)
    try:  # the worker goes on with pay, pauses again at email; approved, it dies in email
        assert shop(tmp_path, "approve", "order-D4", "--tool", "email").returncode == 0
        assert worker.wait(timeout=60) == -9
    finally:
        worker.kill()
    done = shop(tmp_path, "finish", "order-D4", "--ask", "--kill", "email")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)["result"]
    assert result["outcome"] == "completed" and result["pending"] == []
    assert (tmp_path / "effects").read_text().splitlines() == [
        "look_up A1", "pay A1 30 order-D4:call_2_0", "email ann@example.com"]
    assert result["final"].startswith("A1: 2 mugs, 30 EUR | paid 30 EUR for A1 | Unknown:")
    assert [e["approved"] for e in result["events"] if e["type"] == "approval_result"] == [
        True, True]


def test_a_sub_agents_call_waits_durably_and_the_run_resumes_into_the_sub_agent(tmp_path):
    started = shop(tmp_path, "start", "order-E5", "--team", "--ask")  # the sub-agent's pay
    assert started.returncode == -9
    assert [(p["tool_name"], p["agent_id"], p["depth"])
            for p in json.loads(started.stdout)["pending"]] == [("pay", "main.sub1", 1)]
    assert shop(tmp_path, "approve", "order-E5", "--tool", "pay").returncode == 0
    done = shop(tmp_path, "finish", "order-E5", "--team", "--ask")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)["result"]
    assert result["outcome"] == "completed" and result["pending"] == []
    assert (tmp_path / "effects").read_text().splitlines() == [
        "look_up A1", "pay A1 30 order-E5:main.sub1:call_3_0"]
    assert result["final"] == "A1: 2 mugs, 30 EUR | paid 30 EUR for A1"
    assert [(d["child_id"], d["outcome"]) for d in result["delegations"]] == [
        ("main.sub1", "completed")]


BLOCK_DBOS = """
    import sys

    class NoDBOS:
        @staticmethod
        def find_spec(name, path=None, target=None):
            if name.partition(".")[0] == "dbos":
                raise ModuleNotFoundError("No module named 'dbos'", name="dbos")

    sys.meta_path.insert(0, NoDBOS)
    import harness, harness.durable
    from harness import Agent, ScriptedModel, say
    print(Agent(ScriptedModel([say("ok")])).run("hi").final)
    try:
        import harness.durable.dbos
    except ImportError as exc:
        print(exc)
"""


def test_the_core_imports_without_dbos_and_the_module_says_how_to_install_it():
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(BLOCK_DBOS)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    ok, why = done.stdout.splitlines()
    assert ok == "ok"
    assert "pip install 'agent-harness-course[durable]'" in why


def test_a_durable_agent_needs_an_agent_and_a_name():
    from harness import Agent, ScriptedModel
    from harness.durable.dbos import DBOSAgent, idempotent

    agent = Agent(ScriptedModel([]))
    with pytest.raises(ValueError, match="name the durable agent"):
        DBOSAgent(agent, name=" ")
    with pytest.raises(TypeError, match="wraps an Agent"):
        DBOSAgent(agent.model, name="shop")
    with pytest.raises(TypeError, match="above @tool"):
        idempotent(lambda order: order)
