"""Lesson 10 exercise checks: each accepts the reference solution and rejects a wrong one."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lessons"))

from exercises.l10 import SECRETS, check_report_env, check_strict_query_tool
from solutions import l10 as solution

import pytest
from pydantic import Field

from harness import CommandTool, Tool, ToolResult, Workspace, tool
from harness.workspace.process import run_process

REPORT = [sys.executable, "tools/shipping_report.py"]


def test_strict_query_tool_check_accepts_the_reference():
    assert check_strict_query_tool(solution.make_query_tool) is True


def test_strict_query_tool_check_rejects_the_default_pattern():
    def default_pattern(root: Path) -> CommandTool:
        return CommandTool("query_record", "Print one order record.",
                           template="python tools/query_record.py --id {record_id}",
                           params={"record_id": "the order id"}, cwd=root)

    assert check_strict_query_tool(default_pattern) is False


def test_strict_query_tool_check_rejects_a_pattern_without_a_length():
    def any_digits(root: Path) -> CommandTool:
        return CommandTool("query_record", "Print one order record.",
                           template="python tools/query_record.py --id {record_id}",
                           params={"record_id": "the order id"}, cwd=root, pattern=r"ORD-\d+")

    assert check_strict_query_tool(any_digits) is False


def _query_tool(pattern: str, name: str = "query_record"):
    def make_query_tool(root: Path) -> CommandTool:
        return CommandTool(name, "Print one order record.",
                           template="python tools/query_record.py --id {record_id}",
                           params={"record_id": "the order id"}, cwd=root, pattern=pattern)

    return make_query_tool


@pytest.mark.parametrize(("pattern", "hint"), [
    (r"ORD-[0-9]{3,4}", "three digits"),
    (r"[A-Z]+-\d{4}", "another prefix"),
    (r"(?i)ORD-[0-9]{4}", "lower case"),
    (r"ORD-\d{4}", "Arabic-Indic digits"),
    (r"ORD.[0-9]{4}", "an underscore for the dash"),
    (r"ORD-?[0-9]{4}", "no dash"),
    (r"ORD-[0-9]{4}\s?", "a trailing"),
    (r"[a-z]*ORD-[0-9]{4}", "text before the id"),
    (r"[O][R][D]-[0-9]{4}[0-9]?", "five digits"),
])
def test_strict_query_tool_check_rejects_a_pattern_that_lets_a_near_miss_through(
        pattern, hint, capsys):
    assert check_strict_query_tool(_query_tool(pattern)) is False
    assert hint in capsys.readouterr().out


def test_strict_query_tool_check_rejects_another_tool_name(capsys):
    assert check_strict_query_tool(_query_tool(r"ORD-[0-9]{4}", name="lookup_record")) is False
    assert "name the tool 'query_record'" in capsys.readouterr().out


@pytest.mark.parametrize("pattern", [r"ORD-100[1-3]", r"ORD-1001|ORD-1002|ORD-1003",
                                     r"ORD-1[0-9]{3}"])
def test_strict_query_tool_check_rejects_a_pattern_of_the_ids_it_knows(pattern, capsys):
    assert check_strict_query_tool(_query_tool(pattern)) is False
    assert "is an order id (ORD- and four digits) and your pattern refused it" in \
        capsys.readouterr().out


def test_strict_query_tool_check_rejects_a_tool_function_of_its_own(capsys):
    def own_tool(root: Path) -> Tool:
        @tool
        def query_record(record_id: Annotated[str, Field(pattern=r"^ORD-[0-9]{4}$")]) -> ToolResult:
            """Print one order record as JSON."""
            return run_process([sys.executable, "tools/query_record.py", "--id", record_id],
                               cwd=root)

        return query_record

    assert check_strict_query_tool(own_tool) is False
    assert "a @tool function of your own checks nothing of that" in capsys.readouterr().out


def test_strict_query_tool_check_rejects_a_template_that_starts_a_shell(capsys):
    def in_a_shell(root: Path) -> CommandTool:
        return CommandTool("query_record", "Print one order record.",
                           template="sh -c 'python3 tools/query_record.py --id {record_id}'",
                           params={"record_id": "the order id"}, cwd=root,
                           pattern=r"ORD-[0-9]{4}")

    assert check_strict_query_tool(in_a_shell) is False
    assert "your tool started a shell" in capsys.readouterr().out


def _report_tool(run: Callable[[Path], object]) -> Callable[[Path], Tool]:
    """make_report_tool whose shipping_report calls ``run(root)``."""
    def make_report_tool(root: Path) -> Tool:
        @tool
        def shipping_report() -> ToolResult:
            """Print the shipping report of the shop's region."""
            return run(root)

        return shipping_report

    return make_report_tool


def test_report_env_check_accepts_the_reference():
    before = dict(os.environ)
    assert check_report_env(solution.make_report_tool) is True
    assert dict(os.environ) == before


def test_report_env_check_accepts_a_command_tool_that_runs_env():
    def with_env(root: Path) -> CommandTool:  # no shell: env(1) sets the variable, then execs
        return CommandTool("shipping_report", "Print the shipping report.",
                           template=f"env SHOP_REGION=eu {shlex.quote(sys.executable)} "
                                    "tools/shipping_report.py", params={}, cwd=root)

    assert check_report_env(with_env) is True


@pytest.mark.parametrize("env", [
    pytest.param(lambda: os.environ, id="os.environ"),
    pytest.param(lambda: {**os.environ, "SHOP_REGION": "eu"}, id="a copy plus the region"),
])
def test_report_env_check_rejects_the_harnesss_environment(env, capsys):
    wrong = _report_tool(lambda root: run_process(REPORT, cwd=root, env=env()))
    assert check_report_env(wrong) is False
    out = capsys.readouterr().out
    assert "the script saw the harness's secrets: SHOP_DB_URL, SHOP_PAYMENTS_KEY" in out
    assert "pass only {'SHOP_REGION': 'eu'}" in out


def test_report_env_check_rejects_a_filter_of_secret_looking_names(capsys):
    def without_secrets() -> dict[str, str]:
        hidden = ("KEY", "TOKEN", "SECRET", "PASSWORD")
        return {**{k: v for k, v in os.environ.items() if not any(h in k for h in hidden)},
                "SHOP_REGION": "eu"}

    wrong = _report_tool(lambda root: run_process(REPORT, cwd=root, env=without_secrets()))
    assert check_report_env(wrong) is False
    out = capsys.readouterr().out
    assert "secrets: SHOP_DB_URL;" in out and "a password inside a URL" in out


def test_report_env_check_rejects_a_process_without_the_region(capsys):
    wrong = _report_tool(lambda root: run_process(REPORT, cwd=root))
    assert check_report_env(wrong) is False
    out = capsys.readouterr().out
    assert "the script saw no SHOP_REGION" in out and "SHOP_REGION is not set" in out


def test_report_env_check_rejects_the_region_set_in_the_harnesss_environment(capsys):
    def set_here(root: Path) -> ToolResult:
        os.environ["SHOP_REGION"] = "eu"
        return run_process(REPORT, cwd=root)

    assert check_report_env(_report_tool(set_here)) is False
    assert "setting it in os.environ does not get it through" in capsys.readouterr().out
    assert "SHOP_REGION" not in os.environ and not set(SECRETS) & set(os.environ)


def test_report_env_check_rejects_the_region_as_the_models_argument(capsys):
    def make_report_tool(root: Path) -> Tool:
        @tool
        def shipping_report(region: str) -> ToolResult:
            """Print the shipping report of a region.

            Args:
                region: the region to report on, e.g. eu.
            """
            return run_process(REPORT, cwd=root, env={"SHOP_REGION": region})

        return shipping_report

    assert check_report_env(make_report_tool) is False
    assert "the model fills in ['region']: it should fill in nothing" in capsys.readouterr().out


@pytest.mark.parametrize("run", [
    pytest.param(lambda root: run_process(
        ["sh", "-c", f"export SHOP_REGION=eu; {shlex.join(REPORT)}"], cwd=root), id="sh -c"),
    pytest.param(lambda root: Workspace(root).run_shell(
        f"export SHOP_REGION=eu && {shlex.join(REPORT)}"), id="run_shell"),
    pytest.param(lambda root: Workspace(root).run_shell(
        f"SHOP_REGION=eu {shlex.join(REPORT)}"), id="VAR=value"),
])
def test_report_env_check_rejects_a_shell_that_exports_the_region(run, capsys):
    assert check_report_env(_report_tool(run)) is False
    out = capsys.readouterr().out
    assert "your tool started a shell" in out and "give it the region as env=" in out


def test_report_env_check_rejects_subprocess_with_only_the_region(capsys):
    def plain(root: Path) -> str:
        done = subprocess.run(REPORT, cwd=root, env={"SHOP_REGION": "eu"},
                              capture_output=True, text=True, timeout=10)
        return done.stdout

    assert check_report_env(_report_tool(plain)) is False
    assert "the script started without PATH" in capsys.readouterr().out


def test_report_env_check_rejects_subprocess_with_the_harnesss_environment(capsys):
    def inherits(root: Path) -> str:
        done = subprocess.run(REPORT, cwd=root, capture_output=True, text=True, timeout=10,
                              env={**os.environ, "SHOP_REGION": "eu"})
        return done.stdout

    assert check_report_env(_report_tool(inherits)) is False
    assert "the script saw the harness's secrets" in capsys.readouterr().out


def test_report_env_check_rejects_a_script_run_outside_the_workspace(capsys):
    wrong = _report_tool(lambda root: run_process(REPORT, env={"SHOP_REGION": "eu"}))
    assert check_report_env(wrong) is False
    assert "the script never ran" in capsys.readouterr().out


def test_report_env_check_takes_its_secrets_out_again_when_the_tool_raises():
    def crashes(root: Path) -> ToolResult:
        raise RuntimeError("boom")

    before = dict(os.environ)
    assert check_report_env(_report_tool(crashes)) is False
    assert dict(os.environ) == before


def test_report_env_check_in_the_browser_judges_the_name_and_parameters_only(monkeypatch,
                                                                             capsys):
    import exercises.l10 as checks

    monkeypatch.setattr(checks, "IN_BROWSER", True)
    assert check_report_env(_report_tool(lambda root: run_process(REPORT, cwd=root))) is True
    assert "a browser tab cannot start a program" in capsys.readouterr().out


def test_report_env_check_rejects_a_process_that_does_not_stop_with_the_run(capsys):
    wrong = _report_tool(lambda root: run_process(REPORT, cwd=root, env={"SHOP_REGION": "eu"}))
    assert check_report_env(wrong) is False
    out = capsys.readouterr().out
    assert "its process went on" in out and "run_process(..., control=control)" in out
