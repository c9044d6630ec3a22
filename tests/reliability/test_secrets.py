"""Secrets: the API key never lands in a notebook, an error, an event, a log or a saved run.

Each test uses a fresh fake key (``sk-test-`` and 32 random characters) against the
local fake server, including servers that echo the key back in their error bodies,
and scans every text a learner could see, print, save or share for the key itself or
anything shaped like one (``sk-`` + a long token, ``Bearer`` + a token).
"""

from __future__ import annotations

import json
import logging
import re
import secrets
import string
from pathlib import Path

import pytest

from harness import Agent, OpenAIModel, Workspace, doctor, tool_call
from harness import CallLog
from tests.fake_openai import QUICK_RETRY, FakeOpenAI, Scripted, http_error, reply, unauthorized

pytest_plugins = ("tests.fake_openai",)  # the `fake_openai` fixture

ROOT = Path(__file__).resolve().parents[2]
KEY_SHAPED = re.compile(r"sk-[A-Za-z0-9_-]{8,}|Bearer\s+[A-Za-z0-9._~+/=-]{12,}")


@pytest.fixture
def key() -> str:
    return "sk-test-" + "".join(secrets.choice(string.ascii_letters + string.digits)
                                for _ in range(32))


def leaks(text: str, key: str) -> list[str]:
    """The key, or key-shaped tokens, found in ``text``."""
    return ([key] if key in text else []) + KEY_SHAPED.findall(text)


def everything_shown(result, log: CallLog, log_file: Path, caplog, capsys, model) -> str:
    """Every text a run leaves behind, in one string to scan."""
    out, err = capsys.readouterr()
    return "\n".join([
        str(result.error), repr(result), str(result.events), json.dumps(result.to_dict()),
        json.dumps(log.entries), log_file.read_text(encoding="utf-8") if log_file.exists() else "",
        caplog.text, out, err, repr(model),
    ])


def echoing_faults(key: str) -> list[Scripted]:
    return [
        unauthorized(f"Incorrect API key provided: {key}."),
        http_error(400, f"Malformed header 'Authorization: Bearer {key}'", code=key),
        http_error(403, "forbidden", code=f"key={key}"),
        http_error(500, f"upstream refused the key {key}", headers=QUICK_RETRY),
        Scripted(status=200, body=f'{{"id": "x", "echo": "{key}", "choices": ['.encode()),
    ]


@pytest.mark.parametrize("fault", range(5), ids=["401", "400-bearer", "403-code", "500",
                                                 "broken-200"])
def test_error_that_echoes_the_key_never_shows_it(
        fake_openai: FakeOpenAI, key: str, fault: int, tmp_path: Path,
        caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)  # the SDK's and httpx's own logs too
    fake_openai.add(reply(tool_call("todo_write", todos=[], id="c1")),
                    *[echoing_faults(key)[fault]] * 3)
    log = CallLog(tmp_path / "calls.jsonl")
    model = OpenAIModel(model="m", base_url=fake_openai.base_url, api_key=key, max_retries=1)

    result = Agent(model, planning=True, observers=[log]).run("go")

    assert result.outcome == "model_error"
    assert fake_openai.requests[0].headers["authorization"] == f"Bearer {key}"  # it was sent
    assert leaks(everything_shown(result, log, tmp_path / "calls.jsonl", caplog, capsys,
                                  model), key) == []


def test_completed_run_with_a_call_log_file_shows_no_key(
        fake_openai: FakeOpenAI, key: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("OPENAI_API_KEY", key)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("HARNESS_MODEL", "m")
    fake_openai.add(reply(tool_call("todo_write", todos=[], id="c1")), reply(content="done"))
    log = CallLog(tmp_path / "calls.jsonl")
    model = OpenAIModel()

    result = Agent(model, planning=True, observers=[log]).run("go")
    result.save(tmp_path / "run.json")
    doctor()

    assert result.outcome == "completed"
    shown = everything_shown(result, log, tmp_path / "calls.jsonl", caplog, capsys, model)
    assert leaks(shown + (tmp_path / "run.json").read_text(encoding="utf-8"), key) == []


def test_a_shell_tool_cannot_read_the_key_from_the_environment(
        fake_openai: FakeOpenAI, key: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", key)
    fake_openai.add(reply(tool_call("run_shell", command="env; echo $OPENAI_API_KEY", id="c1")),
                    reply(content="done"))
    log = CallLog(tmp_path / "calls.jsonl")
    model = OpenAIModel(model="m", base_url=fake_openai.base_url)  # key from the environment

    result = Agent(model, Workspace(tmp_path).tools, observers=[log]).run("What is set?")

    assert result.outcome == "completed"
    assert "exit status 0" in result.messages[3]["content"]
    assert leaks(json.dumps(result.to_dict()) + json.dumps(log.entries), key) == []
    assert key not in json.dumps(fake_openai.bodies)  # nor sent to the provider as data


def committed_lesson_files() -> list[Path]:
    return sorted(p for p in (ROOT / "lessons").rglob("*")
                  if p.suffix in (".ipynb", ".py") and ".ipynb_checkpoints" not in p.parts)


def test_no_committed_lesson_holds_anything_shaped_like_a_key() -> None:
    notebooks = [p for p in committed_lesson_files() if p.suffix == ".ipynb"]
    assert notebooks, "no lesson notebooks found"
    found = {}
    for path in committed_lesson_files():
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".ipynb":  # every cell's source and outputs, and the metadata
            nb = json.loads(text)
            text = json.dumps(nb, ensure_ascii=False)
        hits = KEY_SHAPED.findall(text)
        if hits:
            found[str(path.relative_to(ROOT))] = hits
    assert found == {}
