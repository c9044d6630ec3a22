"""`python -m harness`: the offline demo, a live run against a local server, replay, doctor."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from harness.ui.cli import main
from harness.live.openai_model import PROVIDER_VARIABLES
from tests.fake_openai import FakeOpenAI, reply, streamed
from tests.provider_rules import refuses_stream_options, refuses_tool_choice

pytest_plugins = ("tests.fake_openai",)

PROVIDER = PROVIDER_VARIABLES


def run_module(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in PROVIDER}
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd,
                          env={**clean, **(env or {})}, capture_output=True, text=True,
                          timeout=60, check=False)


def test_demo_runs_offline_from_any_folder_and_cites_the_policy(tmp_path):
    done = run_module("demo", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "scripted" in out and "the tools really run" in out
    assert "[>] Find the return rule" in out and "[x] Draft the answer" in out
    assert "Source: docs/policies/returns.md" in out
    assert "outcome: completed" in out


def test_demo_answer_quotes_what_the_search_really_returned(tmp_path, capsys):
    main(["demo", "--save", str(tmp_path / "run.json")])
    saved = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    search = next(m for m in saved["messages"] if m["role"] == "tool" and ":" in m["content"]
                  and m["content"].startswith("docs/"))
    first_passage_line = search["content"].split("\n")[1]
    assert first_passage_line in saved["final"]


def test_demo_says_the_information_is_missing_when_search_finds_nothing(monkeypatch, capsys):
    monkeypatch.setattr("harness.ui.cli.DEMO_QUERY", "zxqv wqxz")
    main(["demo"])
    out = capsys.readouterr().out
    assert "the information is missing" in out
    assert "Source:" not in out


def test_demo_says_the_information_is_missing_when_no_policy_matches(monkeypatch, capsys):
    """Issue 21: with the returns policy gone the search still finds order records; the
    demo must not cite one of them as the policy."""
    from harness.ui import cli

    class WithoutReturns(cli.Workspace):
        @classmethod
        def sample(cls, *args, **kwargs):
            ws = super().sample(*args, **kwargs)
            (ws.root / "docs" / "policies" / "returns.md").unlink()
            return ws

    monkeypatch.setattr(cli, "Workspace", WithoutReturns)
    main(["demo"])
    out = capsys.readouterr().out
    assert "the information is missing" in out
    assert "Source:" not in out and "ORD-" not in out.split("the information is missing")[0][-300:]


def test_run_without_a_model_name_exits_2_naming_the_variable(tmp_path):
    done = run_module("run", "hello", cwd=tmp_path)
    assert done.returncode == 2
    assert "HARNESS_MODEL" in done.stderr


def test_run_uses_the_live_model_from_the_environment(tmp_path, fake_openai):
    fake_openai.add(reply({"content": "Hello from the server."}))
    env = {"HARNESS_MODEL": "test-model", "OPENAI_BASE_URL": fake_openai.base_url}
    done = run_module("run", "Say hello", "--save", str(tmp_path / "live.json"), cwd=tmp_path,
                      env=env)
    assert done.returncode == 0, done.stderr
    assert "Hello from the server." in done.stdout
    assert fake_openai.bodies[0]["model"] == "test-model"
    assert fake_openai.bodies[0]["messages"][-1] == {"role": "user", "content": "Say hello"}


def test_a_saved_run_replays_offline_turn_for_turn(tmp_path, capsys):
    main(["demo", "--save", str(tmp_path / "run.json")])
    capsys.readouterr()
    assert main(["replay", str(tmp_path / "run.json")]) == 0
    out = capsys.readouterr().out
    assert "Replaying" in out and "outcome: completed" in out
    assert "-> search_docs" in out  # the tool ran again


def test_doctor_never_prints_the_key(monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-doctor-0123456789abcdef")
    monkeypatch.setenv("HARNESS_MODEL", "gpt-4o-mini")
    main(["doctor"])
    out = capsys.readouterr().out
    assert "API key set" in out
    assert "sk-test-doctor" not in out


def test_run_prints_the_answer_as_it_streams_in(tmp_path, fake_openai):
    fake_openai.add(streamed(reply({"reasoning_content": "A greeting is asked for.",
                                    "content": "Hello from the server."}), interval=0.01))
    env = {"HARNESS_MODEL": "test-model", "OPENAI_BASE_URL": fake_openai.base_url}
    done = run_module("run", "Say hello", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert "thinking: A greeting is asked for.\nmodel: Hello from the server.\n" in done.stdout
    assert "answer:" not in done.stdout  # printed once, as it was written
    assert fake_openai.bodies[0]["stream"] is True


def test_run_without_streaming_prints_the_answer_at_the_end(tmp_path, fake_openai):
    fake_openai.add(reply({"content": "Hello from the server."}))
    env = {"HARNESS_MODEL": "test-model", "OPENAI_BASE_URL": fake_openai.base_url,
           "HARNESS_MODEL_SETTINGS": '{"stream": false}'}
    done = run_module("run", "Say hello", cwd=tmp_path, env=env)
    assert "answer:\nHello from the server." in done.stdout
    assert "model: " not in done.stdout


CALL = {"id": "c1", "type": "function", "function": {"name": "echo",
                                                      "arguments": '{"word": "ping"}'}}


def test_doctor_live_tells_what_the_endpoint_can_do_and_the_settings_to_use(tmp_path):
    answers = [reply({"tool_calls": [CALL]}), reply({"tool_calls": [CALL]}),
               reply({"reasoning_content": "Just call it.", "content": "ping"})]
    with FakeOpenAI(answers, rules=[refuses_tool_choice("named"), refuses_stream_options()],
                    stream_usage=False) as server:
        env = {"HARNESS_MODEL": "test-model", "OPENAI_BASE_URL": server.base_url}
        done = run_module("doctor", "--live", cwd=tmp_path, env=env)
        sent = server.bodies

    def row(check: str) -> str:
        return next(line[len(check) + 3:].strip() for line in done.stdout.splitlines()
                    if line.startswith(f"  {check}  "))

    assert done.returncode == 0, done.stderr
    assert row("tool calls (auto)").split()[:3] == ["yes", "called", "echo"]
    assert row("named tool_choice").startswith("no") and "does not support" in \
        row("named tool_choice")
    assert row('tool_choice "required"').startswith("yes")
    assert row("streaming").startswith("yes")
    assert row("usage in a stream").split()[:2] == ["no", "stream_options"]
    assert row("reasoning field").split() == ["yes", "reasoning_content"]
    assert ('HARNESS_MODEL_SETTINGS=\'{"forced_tool_choice": "required", '
            '"stream_usage": false}\'') in done.stdout
    assert len(sent) == 5  # auto, named (refused), required, stream (refused), stream


def test_doctor_live_without_a_model_says_what_to_set(tmp_path):
    done = run_module("doctor", "--live", cwd=tmp_path)
    assert "cannot build the model" in done.stdout and "HARNESS_MODEL" in done.stdout


def test_a_demo_replays_with_the_agent_it_was_recorded_with(tmp_path, capsys):
    # Same tools, same system prompt: the replay sends exactly what the demo sent.
    main(["demo", "--save", str(tmp_path / "run.json")])
    capsys.readouterr()
    main(["replay", str(tmp_path / "run.json"), "--save", str(tmp_path / "again.json")])
    demo = json.loads((tmp_path / "run.json").read_text())
    again = json.loads((tmp_path / "again.json").read_text())
    assert again["messages"] == demo["messages"]
    assert again["usage"] == demo["usage"]


def test_a_replayed_live_run_never_writes_or_asks_again(tmp_path, capsys, monkeypatch,
                                                        fake_openai):
    import harness.ui.cli as cli
    from harness import Workspace

    write = {"id": "w1", "type": "function", "function": {
        "name": "write_file", "arguments": json.dumps({"path": "notes/reply.md",
                                                       "content": "Dear customer"})}}
    fake_openai.add(reply({"content": None, "tool_calls": [write]}))
    fake_openai.add(reply({"content": "Drafted notes/reply.md."}))
    for name in PROVIDER:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HARNESS_MODEL", "test-model")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setattr("harness.ui.approval._stdin_is_tty", lambda: True)
    asked: list[str] = []
    monkeypatch.setattr("builtins.input", lambda question: asked.append(question) or "y")
    spaces, sample = iter([tmp_path / "live", tmp_path / "replay"]), Workspace.sample
    monkeypatch.setattr(cli.Workspace, "sample", lambda: sample(next(spaces)))

    assert main(["run", "Draft a reply", "--save", str(tmp_path / "live.json")]) == 0
    assert (tmp_path / "live" / "notes" / "reply.md").read_text() == "Dear customer"
    assert len(asked) == 1
    capsys.readouterr()
    assert main(["replay", str(tmp_path / "live.json")]) == 0
    out = capsys.readouterr().out
    assert not (tmp_path / "replay" / "notes" / "reply.md").exists()  # not written again
    assert len(asked) == 1  # and nobody was asked to allow it again
    assert "outcome: completed" in out and "write_file" in out


def test_doctor_says_whether_tool_processes_are_sandboxed_and_why_not(monkeypatch, capsys):
    monkeypatch.setenv("HARNESS_SANDBOX", "off")
    main(["doctor"])
    assert "sandbox: none (switched off by HARNESS_SANDBOX)" in capsys.readouterr().out
    monkeypatch.delenv("HARNESS_SANDBOX")
    main(["doctor"])
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("sandbox:"))
    from harness.workspace.sandbox import _sandbox

    assert line.startswith("sandbox: bubblewrap" if _sandbox()[0] else "sandbox: none (")
