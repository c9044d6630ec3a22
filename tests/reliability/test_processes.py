"""Shell and command templates: nothing a call starts outlives it, and parameters cannot inject."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness import Workspace
from harness import CommandTool, RunControl
from harness.tools import ToolArgumentError

from tests.reliability.procs import kill_all_in, none_left_in

SPAWN = """\
import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
subprocess.Popen(["bash", "-c", "sleep 30 & wait"])
subprocess.Popen(["setsid", "sleep", "30"])
print("started", flush=True)
time.sleep(30)
"""
ECHO_ARGS = "import json, sys; print(json.dumps(sys.argv[1:]))"


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    (tmp_path / "spawn.py").write_text(SPAWN, encoding="utf-8")
    (tmp_path / "echo_args.py").write_text(ECHO_ARGS, encoding="utf-8")
    yield Workspace(tmp_path, shell_timeout=0.3)
    kill_all_in(tmp_path)  # never leave a process behind, even on failure


# -- timeouts kill every process the call started ----------------------------------------

@pytest.mark.parametrize("command", [
    "sleep 30 & sleep 30",
    "(sleep 30 & wait) & wait",
    "bash -c 'sleep 30 & wait' & wait",
    "nohup sleep 30 > /dev/null 2>&1 & wait",
    "bash -c 'trap \"\" TERM HUP INT; sleep 30' & wait",
    "setsid sleep 30 & sleep 30",
], ids=["background", "subshell", "nested-bash", "nohup", "ignores-term", "setsid"])
def test_run_shell_timeout_leaves_no_child_running(ws: Workspace, either: str,
                                                   command: str) -> None:
    started = time.monotonic()
    result = ws.run_shell(command)
    assert time.monotonic() - started < 1.5
    assert "timed out after 0.3 s; killed the command and its process group" in result.output
    assert none_left_in(ws.root)


@pytest.mark.parametrize("command", [
    "sleep 30 & echo started",
    "nohup sleep 30 > /dev/null 2>&1 & echo started",
    "setsid sleep 30 > /dev/null 2>&1 & echo started",
    "setsid bash -c 'sleep 30 & sleep 30' > /dev/null 2>&1 & disown; echo started",
    "(setsid nohup sleep 30 > /dev/null 2>&1 &) ; echo started",
], ids=["background", "nohup", "setsid", "setsid-disowned", "double-fork"])
def test_a_background_job_ends_with_the_call_that_started_it(
        ws: Workspace, either: str, command: str) -> None:
    ws.shell_timeout = 5
    started = time.monotonic()
    result = ws.run_shell(command)
    assert time.monotonic() - started < 1.5  # the call does not wait for the job...
    assert result.output == "exit status 0\nstdout:\nstarted"
    assert none_left_in(ws.root)  # ...and the job does not outlive the call


def test_command_tool_timeout_kills_children_and_grandchildren(ws: Workspace,
                                                               either: str) -> None:
    spawn = CommandTool("spawn", "Start helpers.", template="python spawn.py {tag}",
                        params={"tag": "a name"}, cwd=ws.root, timeout=0.6)
    started = time.monotonic()
    result = spawn.execute(spawn.parse('{"tag": "run1"}'))
    assert time.monotonic() - started < 1.5
    assert not result.ok
    assert "timed out after 0.6 s" in result.output and "started" in result.output
    assert none_left_in(ws.root)


def test_command_tool_stops_and_kills_its_children_when_the_run_is_cancelled(
        ws: Workspace, either: str) -> None:
    spawn = CommandTool("spawn", "Start helpers.", template="python spawn.py {tag}",
                        params={"tag": "a name"}, cwd=ws.root, timeout=30)
    cancel = threading.Event()
    threading.Timer(0.4, cancel.set).start()
    started = time.monotonic()
    result = spawn.execute(spawn.parse('{"tag": "run2"}'), RunControl(max_turns=1, cancel=cancel))
    assert time.monotonic() - started < 1.4
    assert "stopped: cancelled" in result.output
    assert none_left_in(ws.root)


# -- template parameters are data, never code ------------------------------------------

MUST_REFUSE = [
    "x; touch pwned", "x && touch pwned", "x || touch pwned", "$(touch pwned)",
    "`touch pwned`", "x | tee pwned", "x > pwned", "x\ntouch pwned", "x\n", "\nx",
    "x\r", "-rf", "--flag=x", "-", "\x00", "x\x00y", "x" * 201, "", "{tag}", "$HOME",
    "~", "*", "x\u202e", "\u2028x", "x\ty", "@notes.txt", "x@y", "+cmd", "a+b",
]
MAY_RUN = ["ORD-1001", "x --flag=y", "x" * 200, "ORD-１００１", "Zoë Müller", "a.b,c:d=g/h",
           "../../../etc/passwd", "退货"]


@pytest.fixture
def echo_args(ws: Workspace) -> CommandTool:
    return CommandTool("echo_args", "Show the argv.", template="python echo_args.py --id {value} x",
                       params={"value": "any value"}, cwd=ws.root, timeout=5)


@pytest.mark.parametrize("value", MUST_REFUSE, ids=repr)
def test_shell_syntax_options_and_control_characters_are_refused_before_running(
        echo_args: CommandTool, ws: Workspace, value: str) -> None:
    with pytest.raises(ToolArgumentError):
        echo_args.parse(json.dumps({"value": value}))
    assert not (ws.root / "pwned").exists()


@pytest.mark.parametrize("value", MAY_RUN, ids=repr)
def test_an_accepted_value_arrives_as_exactly_one_argv_element(
        echo_args: CommandTool, value: str) -> None:
    result = echo_args.execute(echo_args.parse(json.dumps({"value": value})))
    assert result.ok, result.output
    assert json.loads(result.output.split("stdout:\n", 1)[1]) == ["--id", value, "x"]


@pytest.mark.parametrize("value", ["x; touch pwned", "$(touch pwned)", "`touch pwned`",
                                   "x && touch pwned", "a b c"])
def test_even_a_permissive_pattern_cannot_reach_a_shell(ws: Workspace, value: str) -> None:
    anything = CommandTool("loose", "Show the argv.", template="python echo_args.py {value}",
                           params={"value": "anything"}, cwd=ws.root, pattern=r".{1,500}")
    result = anything.execute(anything.parse(json.dumps({"value": value})))
    assert json.loads(result.output.split("stdout:\n", 1)[1]) == [value]
    assert not (ws.root / "pwned").exists()


def test_template_program_runs_with_the_harness_interpreter(echo_args: CommandTool) -> None:
    assert echo_args.argv[0] == sys.executable
