"""Lesson 12 exercise checks: each accepts the reference solution and rejects a wrong one."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lessons"))

from exercises.l12 import NOTE, check_make_model, check_replay
from solutions import l12 as solution

from harness import Agent, CallLog, RunResult, ScriptedModel, Tool


def test_make_model_check_accepts_the_reference():
    assert check_make_model(solution.make_model) is True


def test_make_model_check_rejects_an_ollama_url_without_v1():
    def no_v1(preset: str) -> dict:
        settings = solution.make_model(preset)
        if preset.lower() == "ollama":
            settings["base_url"] = "http://localhost:11434"
        return settings

    assert check_make_model(no_v1) is False


def test_make_model_check_says_how_to_fix_a_case_sensitive_lookup(capsys):
    def case_sensitive(preset: str) -> dict:
        model, base_url, needs_key = solution.PRESETS[preset]
        return {"model": model, "base_url": base_url, "needs_key": needs_key}

    assert check_make_model(case_sensitive) is False
    out = capsys.readouterr().out
    assert "in any capitalisation" in out
    assert "preset.lower()" in out


def test_make_model_check_says_the_preset_names_to_a_table_keyed_by_display_name(capsys):
    def display_names(preset: str) -> dict:
        table = {"OpenAI": "openai", "DeepSeek": "deepseek", "GLM": "glm",
                 "Ollama": "ollama", "vLLM": "vllm"}
        by_name = {shown: solution.PRESETS[key] for shown, key in table.items()}
        model, base_url, needs_key = by_name[preset]
        return {"model": model, "base_url": base_url, "needs_key": needs_key}

    assert check_make_model(display_names) is False
    assert "openai, deepseek, glm, ollama, vllm" in capsys.readouterr().out


def test_make_model_check_rejects_a_vllm_model_name_without_its_organisation(capsys):
    def short_name(preset: str) -> dict:
        settings = solution.make_model(preset)
        if preset.lower() == "vllm":
            settings["model"] = "Qwen2.5-7B-Instruct"
        return settings

    assert check_make_model(short_name) is False
    assert "'Qwen/Qwen2.5-7B-Instruct'" in capsys.readouterr().out


def test_make_model_check_rejects_an_unknown_preset_error_without_the_names():
    def terse(preset: str) -> dict:
        if preset.lower() not in solution.PRESETS:
            raise ValueError("unknown preset")
        return solution.make_model(preset)

    assert check_make_model(terse) is False


def _unknown_raises(exc_type, message):
    def make_model(preset: str) -> dict:
        if preset.lower() not in solution.PRESETS:
            raise exc_type(message)
        return solution.make_model(preset)

    return make_model


def test_make_model_check_rejects_an_error_that_names_four_of_the_five_presets(capsys):
    four = _unknown_raises(ValueError, "unknown preset; known: openai, deepseek, glm, ollama")
    assert check_make_model(four) is False
    assert "leaves out vllm" in capsys.readouterr().out


def test_make_model_check_rejects_a_key_error_for_an_unknown_preset(capsys):
    key_error = _unknown_raises(KeyError, "no-such-provider: openai, deepseek, glm, ollama, vllm")
    assert check_make_model(key_error) is False
    assert "raise ValueError" in capsys.readouterr().out


def test_make_model_check_rejects_none_for_an_unknown_preset():
    def quiet(preset: str):
        return solution.make_model(preset) if preset.lower() in solution.PRESETS else None

    assert check_make_model(quiet) is False


def test_make_model_check_rejects_the_openai_url_written_out(capsys):
    def explicit_url(preset: str) -> dict:
        got = solution.make_model(preset)
        return {**got, "base_url": got["base_url"] or "https://api.openai.com/v1"}

    assert check_make_model(explicit_url) is False
    assert "base_url should be None" in capsys.readouterr().out


def test_replay_check_accepts_the_reference():
    assert check_replay(solution.replay) is True


def _replay_agent(path: Path, tools: list[Tool]) -> tuple[Agent, str]:
    recorded = RunResult.load(path)
    agent = Agent(ScriptedModel.from_run(path), tools, system=recorded.messages[0]["content"])
    return agent, recorded.messages[1]["content"]


def test_replay_check_rejects_a_replay_that_writes_again(capsys):
    def runs_every_tool(path: Path, tools: list[Tool]) -> RunResult:
        agent, task = _replay_agent(path, tools)
        return agent.run(task)

    assert check_replay(runs_every_tool) is False
    assert f"the replay wrote {NOTE} again" in capsys.readouterr().out


def test_replay_check_rejects_a_replay_that_answers_every_call_from_the_record(capsys):
    def nothing_runs(path: Path, tools: list[Tool]) -> RunResult:
        agent, task = _replay_agent(path, tools)
        return agent.run(task, call_log=CallLog.from_run(path, reuse="all"))

    assert check_replay(nothing_runs) is False
    assert "read-only tools must run again" in capsys.readouterr().out


def test_replay_check_rejects_a_replay_without_the_tools_that_have_side_effects():
    def switched_off(path: Path, tools: list[Tool]) -> RunResult:
        agent, task = _replay_agent(path, [t for t in tools if not t.side_effects])
        return agent.run(task)

    assert check_replay(switched_off) is False


def test_replay_check_rejects_loading_the_recording_without_running_it():
    def load_only(path: Path, tools: list[Tool]) -> RunResult:
        return RunResult.load(path)

    assert check_replay(load_only) is False


def test_replay_check_rejects_a_replay_with_the_default_system_prompt():
    def default_system(path: Path, tools: list[Tool]) -> RunResult:
        task = RunResult.load(path).messages[1]["content"]
        log = CallLog.from_run(path)
        return Agent(ScriptedModel.from_run(path), tools).run(task, call_log=log)

    assert check_replay(default_system) is False


def test_replay_check_rejects_a_replay_that_goes_on_with_the_recorded_conversation():
    def continues(path: Path, tools: list[Tool]) -> RunResult:
        agent, task = _replay_agent(path, tools)
        return agent.run(task, messages=RunResult.load(path).messages,
                         call_log=CallLog.from_run(path))

    assert check_replay(continues) is False


def test_replay_check_rejects_a_replay_that_stops_before_the_end(capsys):
    def short(path: Path, tools: list[Tool]) -> RunResult:
        recorded = RunResult.load(path)
        agent = Agent(ScriptedModel.from_run(path), tools, max_turns=2,
                      system=recorded.messages[0]["content"])
        return agent.run(recorded.messages[1]["content"], call_log=CallLog.from_run(path))

    assert check_replay(short) is False
    assert "messages" in capsys.readouterr().out


def _shared_table(copy) -> callable:
    table = {name: {"model": model, "base_url": base_url, "needs_key": needs_key}
             for name, (model, base_url, needs_key) in solution.PRESETS.items()}

    def make_model(preset: str) -> dict:
        try:
            return copy(table[preset.lower()])
        except KeyError:
            raise ValueError(f"unknown preset; known: {', '.join(table)}") from None

    return make_model, table


def test_make_model_check_rejects_the_presets_own_dict(capsys):
    shared, table = _shared_table(lambda entry: entry)
    assert check_make_model(shared) is False
    out = capsys.readouterr().out
    assert "returns the preset's own dict" in out
    assert "dict(PRESETS[name])" in out
    assert table["openai"]["model"] == "gpt-4o-mini"  # the check put the table back


def test_make_model_check_rejects_a_cached_dict():
    import functools

    cached = functools.lru_cache(maxsize=None)(solution.make_model)
    assert check_make_model(cached) is False


def test_make_model_check_accepts_a_copy_of_the_presets_dict():
    copied, _ = _shared_table(dict)
    assert check_make_model(copied) is True
