"""Checks for lesson 09, bring your own: provider presets, and record then replay."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path

from course import check

from harness import Agent, OpenAIModel, RunResult, ScriptedModel, Tool, tool

# The provider table of lesson 09 (and of README.md): model, base URL, whether a key is needed.
PRESETS = {
    "openai": ("gpt-4o-mini", None, True),
    "deepseek": ("deepseek-chat", "https://api.deepseek.com", True),
    "glm": ("glm-4-flash", "https://open.bigmodel.cn/api/paas/v4/", True),
    "ollama": ("qwen2.5:7b", "http://localhost:11434/v1", False),
    "vllm": ("Qwen/Qwen2.5-7B-Instruct", "http://localhost:8000/v1", False),
}


def _url(value: str | None) -> str | None:
    return value.rstrip("/") if value else value


@check
def check_make_model(make_model: Callable[[str], dict]) -> str:
    """Every preset against the table, any capitalisation; an unknown name refused."""
    for name, (model, base_url, needs_key) in PRESETS.items():
        for spelled in (name, name.upper(), name.title()):
            got = make_model(spelled)
            assert isinstance(got, dict), f"make_model({spelled!r}) should return a dict"
            keys = sorted(got)
            assert keys == ["base_url", "model", "needs_key"], (
                f"make_model({spelled!r}) returned the keys {keys}; use model, base_url, needs_key")
            assert got["model"] == model, (
                f"{spelled}: model should be {model!r}, not {got['model']!r}")
            assert _url(got["base_url"]) == _url(base_url), (
                f"{spelled}: base_url should be {base_url!r}, not {got['base_url']!r}")
            assert got["needs_key"] is needs_key, (
                f"{spelled}: needs_key should be {needs_key} (local servers need no key)")
        OpenAIModel(model=got["model"], base_url=got["base_url"],
                    api_key="sk-placeholder" if got["needs_key"] else None)
    try:
        make_model("no-such-provider")
    except (ValueError, KeyError) as exc:
        assert "ollama" in str(exc).lower(), (
            f"the error for an unknown preset should list the known ones; it says: {exc}")
    else:
        raise AssertionError("make_model('no-such-provider') should raise ValueError, naming "
                             "the presets it knows")
    return "all five presets match the table, and each one builds an OpenAIModel offline."


SYSTEM = "You look up orders for the Larkspur Audio support team."
TASK = "Which items did ORD-1001 and ORD-1003 contain?"
ITEMS = {"ORD-1001": "Heron over-ear headphones", "ORD-1003": "Finch wireless earbuds"}


def _counting_lookup() -> tuple[Tool, list[str]]:
    ran: list[str] = []

    @tool
    def lookup_order(order_id: str) -> str:
        """Return the item of an order."""
        ran.append(order_id)
        return ITEMS.get(order_id, f"unknown order {order_id}")

    return lookup_order, ran


def _recorded_run(folder: Path) -> tuple[Path, RunResult]:
    """A run to replay: two lookups and an answer that quotes them, saved as JSON."""
    lookup, _ = _counting_lookup()
    steps = [
        {"content": None, "tool_calls": [{"id": f"call_{i}", "type": "function", "function": {
            "name": "lookup_order", "arguments": json.dumps({"order_id": o})}}]}
        for i, o in enumerate(ITEMS)
    ]
    steps.append(lambda messages: {"content": "; ".join(
        m["content"] for m in messages if m["role"] == "tool")})
    result = Agent(ScriptedModel(steps), [lookup], system=SYSTEM).run(TASK)
    return result.save(folder / "recorded.json"), result


@check
def check_replay(replay: Callable[[Path, list[Tool]], RunResult]) -> str:
    """Replay a saved run with fresh tools: same messages, and the tools really ran."""
    with tempfile.TemporaryDirectory() as tmp:
        path, recorded = _recorded_run(Path(tmp))
        lookup, ran = _counting_lookup()
        replayed = replay(path, [lookup])
    assert isinstance(replayed, RunResult), (
        f"replay should return the RunResult of the new run, not {type(replayed).__name__}")
    assert ran, ("the tools did not run: a replay runs a new Agent whose model plays back the "
                 "recorded replies (ScriptedModel.from_run), so the tools run again")
    for i, (old, new) in enumerate(zip(recorded.messages, replayed.messages, strict=False)):
        assert old == new, (f"message {i} ({old['role']}) differs from the recording: replay "
                            "the same system prompt and task (messages 0 and 1 of the "
                            "recording)")
    assert len(replayed.messages) == len(recorded.messages), (
        f"the replay has {len(replayed.messages)} messages, the recording "
        f"{len(recorded.messages)}")
    return (f"the replay sent the same {len(recorded.messages)} messages, and the tools ran "
            f"again ({len(ran)} calls).")
