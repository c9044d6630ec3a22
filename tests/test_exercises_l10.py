"""Lesson 09 exercise checks: each accepts the reference solution and rejects a wrong one."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lessons"))

from exercises.l09 import check_make_model, check_replay
from solutions import l09 as solution

from harness import Agent, RunResult, ScriptedModel, Tool


def test_make_model_check_accepts_the_reference():
    assert check_make_model(solution.make_model) is True


def test_make_model_check_rejects_an_ollama_url_without_v1():
    def no_v1(preset: str) -> dict:
        settings = solution.make_model(preset)
        if preset.lower() == "ollama":
            settings["base_url"] = "http://localhost:11434"
        return settings

    assert check_make_model(no_v1) is False


def test_make_model_check_rejects_a_case_sensitive_lookup():
    def case_sensitive(preset: str) -> dict:
        model, base_url, needs_key = solution.PRESETS[preset]
        return {"model": model, "base_url": base_url, "needs_key": needs_key}

    assert check_make_model(case_sensitive) is False


def test_replay_check_accepts_the_reference():
    assert check_replay(solution.replay) is True


def test_replay_check_rejects_loading_the_recording_without_running_it():
    def load_only(path: Path, tools: list[Tool]) -> RunResult:
        return RunResult.load(path)

    assert check_replay(load_only) is False


def test_replay_check_rejects_a_replay_with_the_default_system_prompt():
    def default_system(path: Path, tools: list[Tool]) -> RunResult:
        task = RunResult.load(path).messages[1]["content"]
        return Agent(ScriptedModel.from_run(path), tools).run(task)

    assert check_replay(default_system) is False
