"""Checks for lesson 12, bring your own: provider presets, and record then replay.

The replay check records a run that writes a file, then replays it in a fresh
workspace: the read-only tool must run again, the write must not happen twice.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from course import check

from harness import (
    Agent,
    OpenAIModel,
    RunResult,
    ScriptedModel,
    Tool,
    Workspace,
    say,
    tool,
    tool_call,
)

# The provider table of lesson 12 (and of README.md): model, base URL, whether a key is needed.
PRESETS = {
    "openai": ("gpt-4o-mini", None, True),
    "deepseek": ("deepseek-chat", "https://api.deepseek.com", True),
    "glm": ("glm-4-flash", "https://open.bigmodel.cn/api/paas/v4/", True),
    "ollama": ("qwen2.5:7b", "http://localhost:11434/v1", False),
    "vllm": ("Qwen/Qwen2.5-7B-Instruct", "http://localhost:8000/v1", False),
}


def _url(value: str | None) -> str | None:
    return value.rstrip("/") if value else value


def _assert_a_copy(make_model: Callable[[str], dict], spelled: str, got: dict) -> None:
    """A caller that changes its settings (a model name, a URL of its own) must not change
    the preset for the next caller: each call returns a dict of its own."""
    kept = dict(got)
    got["model"], got["base_url"] = "changed-by-the-caller", "http://changed.invalid"
    try:
        again = make_model(spelled)
    finally:
        got.clear()
        got.update(kept)  # the learner's table back as it was, shared or not
    shared = again is got or (isinstance(again, dict) and again.get("model") != kept["model"])
    assert not shared, (
        f"make_model({spelled!r}) returns the preset's own dict: a caller that changes it "
        "(settings['model'] = ...) changes the preset for every later call. Return a new "
        "dict each time: dict(PRESETS[name]), or build it from the table's values")


@check
def check_make_model(make_model: Callable[[str], dict]) -> str:
    """Every preset against the table, any capitalisation; an unknown name refused."""
    for name, (model, base_url, needs_key) in PRESETS.items():
        for spelled in (name, name.upper(), name.title()):
            try:
                got = make_model(spelled)
            except (KeyError, ValueError) as exc:
                raise AssertionError(
                    f"make_model({spelled!r}) raised {type(exc).__name__}: {exc}. The presets "
                    f"are {', '.join(PRESETS)}, in any capitalisation: look the name up "
                    "lower-cased (preset.lower()) in a table with lower-case keys") from None
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
            _assert_a_copy(make_model, spelled, got)
        OpenAIModel(model=got["model"], base_url=got["base_url"],
                    api_key="placeholder-key" if got["needs_key"] else None)
    try:
        make_model("no-such-provider")
    except ValueError as exc:
        missing = [name for name in PRESETS if name not in str(exc).lower()]
        assert not missing, (
            f"the error for an unknown preset should list every known one; it leaves out "
            f"{', '.join(missing)}: {exc}")
    except KeyError as exc:
        raise AssertionError(f"make_model('no-such-provider') raised KeyError ({exc}); raise "
                             "ValueError, with a message that lists the presets") from None
    else:
        raise AssertionError("make_model('no-such-provider') should raise ValueError, naming "
                             "the presets it knows")
    return "all five presets match the table, and each one builds an OpenAIModel offline."


SYSTEM = "You look up orders for the Larkspur Audio support team."
TASK = "Which items did ORD-1001 and ORD-1003 contain? Save them in notes/items.md."
ITEMS = {"ORD-1001": "Heron over-ear headphones", "ORD-1003": "Finch wireless earbuds"}
NOTE = "notes/items.md"


def _counting_lookup() -> tuple[Tool, list[str]]:
    """A read-only tool that remembers each order it looked up."""
    ran: list[str] = []

    @tool
    def lookup_order(order_id: str) -> str:
        """Return the item of an order."""
        ran.append(order_id)
        return ITEMS.get(order_id, f"unknown order {order_id}")

    return lookup_order, ran


def _found(messages: list[dict]) -> str:
    return "; ".join(m["content"] for m in messages if m["role"] == "tool")


def _recorded_run(folder: Path) -> tuple[Path, RunResult]:
    """A run to replay: two lookups (read-only), a write_file (a side effect), an answer
    quoting the lookups, saved as JSON."""
    lookup, _ = _counting_lookup()
    steps = [*(tool_call("lookup_order", order_id=o, id=f"call_{i}")
               for i, o in enumerate(ITEMS)),
             lambda messages: tool_call("write_file", path=NOTE, content=_found(messages),
                                        id="call_2"),
             lambda messages: say(_found(messages[:-2]))]
    ws = Workspace.sample(folder / "recorded")
    result = Agent(ScriptedModel(steps), [lookup, *ws.tools], system=SYSTEM).run(TASK)
    return result.save(folder / "recorded.json"), result


@check
def check_replay(replay: Callable[[Path, list[Tool]], RunResult]) -> str:
    """Replay a saved run with fresh tools in a fresh workspace: the same messages, the
    read-only tool ran again, the write did not happen twice."""
    with tempfile.TemporaryDirectory() as tmp:
        path, recorded = _recorded_run(Path(tmp))
        lookup, ran = _counting_lookup()
        ws = Workspace.sample(Path(tmp) / "replayed")
        replayed = replay(path, [lookup, *ws.tools])
        wrote_again = (ws.root / NOTE).exists()
    assert isinstance(replayed, RunResult), (
        f"replay should return the RunResult of the new run, not {type(replayed).__name__}")
    assert replayed.messages, "the replay sent no messages: run a new Agent on the task"
    for i, (old, new) in enumerate(zip(recorded.messages, replayed.messages, strict=False)):
        if old == new:
            continue
        if i < 2:
            raise AssertionError(
                f"message {i} ({old['role']}) differs from the recording: replay the same "
                "system prompt and task (messages 0 and 1 of the recording)")
        raise AssertionError(
            f"message {i} ({old['role']}) differs from the recording. Recorded: "
            f"{str(old.get('content'))[:120]!r}; replayed: {str(new.get('content'))[:120]!r}. "
            "Give the replay every tool it is handed: a tool with side effects is answered "
            "from the record, not switched off")
    assert len(replayed.messages) == len(recorded.messages), (
        f"the replay has {len(replayed.messages)} messages, the recording "
        f"{len(recorded.messages)}")
    assert not wrote_again, (
        f"the replay wrote {NOTE} again: write_file has side effects, and a replay must "
        "never repeat one. Run the new agent with call_log=CallLog.from_run(path): a call "
        "of a tool with side effects gets its recorded result instead of running")
    assert len(ran) == len(ITEMS), (
        f"the read-only tool lookup_order ran {len(ran)} times in the replay, not "
        f"{len(ITEMS)}: read-only tools must run again for real, so the replay checks "
        "them. CallLog.from_run(path) does that by default (reuse='side_effects'); "
        "reuse='all' answers every call from the record")
    return (f"the replay sent the same {len(recorded.messages)} messages; lookup_order ran "
            f"again ({len(ran)} calls) and write_file was answered from the record.")
