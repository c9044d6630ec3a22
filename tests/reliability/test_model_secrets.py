"""Secrets in the model's configuration: a key pasted with whitespace, a password in the
base URL. Neither may show in an error, an event, ``repr(model)`` or ``doctor()``.

A learner copies a key with a trailing newline, or a proxy URL of the form
``https://user:password@host/v1``. The key must still work (it is sent stripped), and
a server that echoes it back without the whitespace must still be redacted.
"""

from __future__ import annotations

import json
import logging
import secrets
import string

import pytest

from harness import Agent, OpenAIModel, doctor
from tests.fake_openai import FakeOpenAI, reply, unauthorized

pytest_plugins = ("tests.fake_openai",)

PASSWORD = "pw-" + "".join(secrets.choice(string.ascii_letters) for _ in range(20))


@pytest.fixture
def key() -> str:
    return "sk-test-" + "".join(secrets.choice(string.ascii_letters + string.digits)
                                for _ in range(32))


def shown(result, model, caplog, capsys) -> str:
    out, err = capsys.readouterr()
    return "\n".join([str(result.error), repr(result), str(result.events),
                      json.dumps(result.to_dict()), repr(model), caplog.text, out, err])


@pytest.mark.parametrize("padded", ["  {key}  ", "{key}\n", "\t{key}\r\n"],
                         ids=["spaces", "newline", "tab-crlf"])
@pytest.mark.parametrize("given", ["argument", "environment"])
def test_a_key_with_whitespace_works_and_is_hidden_when_echoed_without_it(
        key: str, padded: str, given: str, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    raw = padded.format(key=key)
    if given == "environment":
        monkeypatch.setenv("OPENAI_API_KEY", raw)
    with FakeOpenAI([unauthorized(f"Incorrect API key provided: {key}.")]) as server:
        model = OpenAIModel("m", base_url=server.base_url, max_retries=0,
                            api_key=raw if given == "argument" else None)
        result = Agent(model).run("Hi")
        sent = server.requests[0].headers["authorization"]

    assert sent == f"Bearer {key}"  # stripped: the key works
    assert result.outcome == "model_error" and "***" in result.error
    assert key not in shown(result, model, caplog, capsys)


def test_a_password_in_the_base_url_is_never_shown(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
        capsys: pytest.CaptureFixture) -> None:
    """What the harness prints, raises, records or returns. (httpx's own INFO log line
    names the URL it was given, password included: keep that logger quiet.)"""
    with FakeOpenAI([unauthorized(f"proxy refused user:{PASSWORD}")]) as server:
        url = server.base_url.replace("http://", f"http://learner:{PASSWORD}@")
        monkeypatch.setenv("OPENAI_BASE_URL", url)
        monkeypatch.setenv("HARNESS_MODEL", "m")
        model = OpenAIModel(max_retries=0)
        result = Agent(model).run("Hi")
        report = doctor()

    text = shown(result, model, caplog, capsys) + json.dumps(report)
    assert PASSWORD not in text
    assert repr(model) == f"OpenAIModel(model='m', base_url='{url.replace(PASSWORD, '***')}')"
    assert report["endpoint"] == url.split("@")[1].split("/")[0]  # host and port only


def test_a_key_in_the_base_url_query_is_masked_in_repr() -> None:
    model = OpenAIModel("m", base_url=f"http://127.0.0.1:9/v1?api-key={PASSWORD}")
    assert PASSWORD not in repr(model) and "api-key=***" in repr(model)


def test_a_url_without_secrets_is_shown_as_it_is() -> None:
    model = OpenAIModel("qwen2.5:7b", base_url="http://localhost:11434/v1")
    assert repr(model) == "OpenAIModel(model='qwen2.5:7b', base_url='http://localhost:11434/v1')"


def test_a_whitespace_only_key_counts_as_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "  \n")
    with pytest.raises(ValueError, match="OPENAI_API_KEY"):
        OpenAIModel("gpt-4o-mini")


def test_a_completed_run_with_a_padded_key_shows_no_key(
        key: str, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with FakeOpenAI([reply(content=f"echo: {key}")]) as server:
        model = OpenAIModel("m", base_url=server.base_url, api_key=f" {key}\n")
        result = Agent(model).run("Hi")

    assert result.outcome == "completed"
    # A model's own answer is data, not an error: it is kept as it came. What the harness
    # writes itself (errors, repr) never holds the key.
    assert key not in repr(model) + str(result.error)
