"""Lesson 11 exercise checks: each accepts the reference solution and rejects a wrong one."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lessons"))

from exercises.l11 import check_cites_real_policy, check_order_tools
from solutions import l11 as solution

from harness import CommandTool, Workspace
from harness.events import Event


def test_cites_real_policy_check_accepts_the_reference():
    assert check_cites_real_policy(solution.cites_real_policy) is True


def _hook(rule, citation=solution.CITATION):
    """A stop hook factory that refuses with ``rule(ws, path, line)``'s reason, if any."""
    def make(ws: Workspace):
        def hook(event: Event):
            found = citation.findall(event.final or "")
            if not found:
                return "no citation"
            for path, line in found:
                reason = rule(ws, path, int(line))
                if reason:
                    return f"{path}:{line} {reason}"
            return None
        return hook
    return make


def test_cites_real_policy_check_rejects_counting_lines_with_split_newline(capsys):
    def split_lines(ws, path, line):
        try:
            lines = ws.read_file(path).split("\n")  # one too many: the text ends in \n
        except ValueError:
            return "is no file"
        return None if 1 <= line <= len(lines) else "is past the end"

    assert check_cites_real_policy(_hook(split_lines)) is False
    assert "a line one past the end" in capsys.readouterr().out


def test_cites_real_policy_check_rejects_checking_files_without_the_workspace(capsys):
    def any_file(ws, path, line):
        file = ws.root / path
        if not file.is_file():
            return "is no file"
        lines = file.read_text(encoding="utf-8").splitlines()
        return None if 1 <= line <= len(lines) and lines[line - 1].strip() else "is no line"

    assert check_cites_real_policy(_hook(any_file)) is False
    assert "a file outside the workspace" in capsys.readouterr().out


def test_cites_real_policy_check_rejects_checking_only_the_first_citation():
    def first_only(ws):
        hook = solution.cites_real_policy(ws)

        def check(event: Event):
            first = solution.CITATION.search(event.final or "")
            return hook(Event("stop", data={"final": first.group(0) if first else ""}))
        return check

    assert check_cites_real_policy(first_only) is False


def test_cites_real_policy_check_rejects_accepting_a_blank_line(capsys):
    def any_line(ws, path, line):
        try:
            count = len(ws.read_file(path).splitlines())
        except ValueError:
            return "is no file"
        return None if 1 <= line <= count else "is past the end"

    assert check_cites_real_policy(_hook(any_line)) is False
    assert "a blank line" in capsys.readouterr().out


def test_cites_real_policy_check_rejects_accepting_line_zero():
    def from_zero(ws, path, line):
        try:
            lines = ws.read_file(path).splitlines()
        except ValueError:
            return "is no file"
        return None if line <= len(lines) and lines[line - 1].strip() else "is no line"

    assert check_cites_real_policy(_hook(from_zero)) is False


def test_cites_real_policy_check_rejects_a_reason_that_does_not_name_the_citation(capsys):
    def vague(ws):
        hook = solution.cites_real_policy(ws)
        return lambda event: hook(event) and "a citation is wrong."

    assert check_cites_real_policy(vague) is False
    assert "does not quote the bad citation" in capsys.readouterr().out


def test_cites_real_policy_check_rejects_a_hook_that_refuses_every_answer():
    assert check_cites_real_policy(lambda ws: lambda event: "check your sources") is False


def _real_line(ws, path, line):
    try:
        lines = ws.read_file(path).splitlines()
    except ValueError:
        return "names no file"
    return None if 1 <= line <= len(lines) and lines[line - 1].strip() else "is no line"


def test_cites_real_policy_check_accepts_the_rule_written_with_the_test_helper():
    assert check_cites_real_policy(_hook(_real_line)) is True


def test_cites_real_policy_check_rejects_a_last_line_counted_out(capsys):
    def one_short(ws, path, line):  # tests line < len(lines): the last line counted out
        reason = _real_line(ws, path, line)
        if reason is None and line == len(ws.read_file(path).splitlines()):
            return "is past the end"
        return reason

    assert check_cites_real_policy(_hook(one_short)) is False
    assert "a real line" in capsys.readouterr().out


def test_cites_real_policy_check_rejects_paths_without_dashes():
    narrow = solution.re.compile(r"([\w./]+\.md):(\d+)")  # cuts gift-cards.md to cards.md
    assert check_cites_real_policy(_hook(_real_line, citation=narrow)) is False


def test_order_tools_check_accepts_the_reference():
    assert check_order_tools(solution.order_tools) is True


def _order_tools(lookup_effects: bool, export_effects: bool):
    def make(root: Path) -> list[CommandTool]:
        lookup, export = solution.order_tools(root)
        return [CommandTool("lookup_order", lookup.description,
                            template="python tools/query_record.py --id {order_id}",
                            params={"order_id": "the order id"}, cwd=root,
                            side_effects=lookup_effects),
                CommandTool("export_order", export.description,
                            template="python tools/export_order.py {order_id}",
                            params={"order_id": "the order id"}, cwd=root,
                            side_effects=export_effects)]
    return make


def test_order_tools_check_rejects_a_lookup_left_with_the_default_side_effects(capsys):
    assert check_order_tools(_order_tools(lookup_effects=True, export_effects=True)) is False
    assert "it did not run again" in capsys.readouterr().out


def test_order_tools_check_rejects_an_export_declared_without_side_effects(capsys):
    assert check_order_tools(_order_tools(lookup_effects=False, export_effects=False)) is False
    assert "the replay exported ORD-1002 again" in capsys.readouterr().out


def test_order_tools_check_rejects_the_two_declarations_swapped():
    assert check_order_tools(_order_tools(lookup_effects=True, export_effects=False)) is False


def test_order_tools_check_rejects_an_export_that_does_not_run_the_script():
    def echo_export(root: Path) -> list[CommandTool]:
        lookup, _ = solution.order_tools(root)
        return [lookup, CommandTool("export_order", "Send one order to the warehouse.",
                                    template="echo exported {order_id}",
                                    params={"order_id": "the order id"}, cwd=root)]

    assert check_order_tools(echo_export) is False


def _tools_from(param: str, lookup: str, export: str):
    """lookup_order and export_order with these templates and parameter, effects declared."""
    def make(root: Path) -> list[CommandTool]:
        return [CommandTool(name, "An order tool.", template=template,
                            params={param: "the order id"}, cwd=root, side_effects=effects)
                for name, template, effects in (("lookup_order", lookup, False),
                                                ("export_order", export, True))]
    return make


LOOKUP, EXPORT = "python tools/query_record.py --id {}", "python tools/export_order.py {}"


def test_order_tools_check_rejects_a_parameter_named_otherwise(capsys):
    record_id = _tools_from("record_id", LOOKUP.format("{record_id}"),
                            EXPORT.format("{record_id}"))
    assert check_order_tools(record_id) is False
    assert "the model should fill only order_id" in capsys.readouterr().out


def test_order_tools_check_rejects_the_two_templates_swapped():
    swapped = _tools_from("order_id", EXPORT.format("{order_id}"), LOOKUP.format("{order_id}"))
    assert check_order_tools(swapped) is False


# -- issue 33: lines counted short, a blank line of spaces, tools that are not commands ----


def test_cites_real_policy_check_rejects_lines_counted_with_count_newline(capsys):
    def counted(ws, path, line):  # one short when the last line has no newline after it
        try:
            text = ws.read_file(path)
        except ValueError:
            return "names no file"
        lines = text.split("\n")
        if not 1 <= line <= text.count("\n") or not lines[line - 1].strip():
            return "is past the end"
        return None

    assert check_cites_real_policy(_hook(counted)) is False
    out = capsys.readouterr().out
    assert "no newline after it" in out
    assert "count('\\n') is one short" in out


def test_cites_real_policy_check_rejects_a_line_of_spaces_taken_for_text(capsys):
    def empty_only(ws, path, line):  # "" is blank, "  \t " is not: half the rule
        try:
            lines = ws.read_file(path).splitlines()
        except ValueError:
            return "names no file"
        return None if 1 <= line <= len(lines) and lines[line - 1] != "" else "is no line"

    assert check_cites_real_policy(_hook(empty_only)) is False
    assert "a line of spaces only" in capsys.readouterr().out


def test_order_tools_check_rejects_a_plain_tool_that_reads_the_record(capsys):
    from harness import tool

    def plain_lookup(root: Path):
        @tool
        def lookup_order(order_id: str) -> str:
            """Print one order record as JSON."""
            return (root / "data" / "records" / f"{order_id}.json").read_text(encoding="utf-8")

        _, export = solution.order_tools(root)
        return [lookup_order, export]

    assert check_order_tools(plain_lookup) is False
    out = capsys.readouterr().out
    assert "lookup_order is a" in out and "not a CommandTool" in out


def test_order_tools_check_rejects_a_plain_tool_that_writes_the_export(capsys):
    from harness import tool

    def plain_export(root: Path):
        lookup, _ = solution.order_tools(root)

        @tool(side_effects=True)
        def export_order(order_id: str) -> str:
            """Send one order to the warehouse."""
            with (root / "exports.txt").open("a", encoding="utf-8") as f:
                f.write(order_id + "\n")
            return f"exported {order_id}"

        return [lookup, export_order]

    assert check_order_tools(plain_export) is False
    assert "export_order is a" in capsys.readouterr().out


def test_order_tools_check_accepts_a_tuple(capsys):
    assert check_order_tools(lambda root: tuple(solution.order_tools(root))) is True
    assert "PASS" in capsys.readouterr().out


def test_order_tools_check_rejects_a_third_tool():
    def three(root: Path):
        lookup, export = solution.order_tools(root)
        return [lookup, export, lookup]

    assert check_order_tools(three) is False
