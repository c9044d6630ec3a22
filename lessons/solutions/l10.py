"""Reference solutions for lesson 10, processes and command templates."""

from __future__ import annotations

import sys
from pathlib import Path

from harness import CommandTool, RunControl, Tool, ToolResult, tool
from harness.workspace.process import run_process


def make_query_tool(root: Path) -> CommandTool:
    """`query_record` that accepts only an order id: ORD- and four digits."""
    return CommandTool(
        "query_record", "Print one order record as JSON.",
        template="python tools/query_record.py --id {record_id}",
        params={"record_id": "the order id: ORD- and four digits, e.g. ORD-1001"},
        cwd=root, pattern=r"ORD-[0-9]{4}",
    )


def make_report_tool(root: Path) -> Tool:
    """`shipping_report`: the report script, with SHOP_REGION=eu and nothing else of ours."""

    @tool
    def shipping_report(control: RunControl | None = None) -> ToolResult:
        """Print the shipping report of the shop's region."""
        # No shell, the allowlisted environment plus the one variable the script needs,
        # and the run's control, so the process stops with the run.
        return run_process([sys.executable, "tools/shipping_report.py"], cwd=root,
                           env={"SHOP_REGION": "eu"}, control=control)

    return shipping_report
