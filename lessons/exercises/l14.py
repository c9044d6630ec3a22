"""Checks for lesson 14 (tools from elsewhere: MCP servers and skills).

`check_shop_permissions` starts the shop's real MCP server in a fresh copy of the sample
workspace, and a scripted model calls every kind of tool through your permissions: the
shop's two read-only tools, its refund (with approvers that say yes and no), tools of
other servers, the workspace's own tools. It reads what ran from the events and from
the refund ledger the server writes. `check_result_text` hands your function results in
the wire format of MCP's ``tools/call`` (the JSON a server sends) and compares.
"""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Callable
from typing import Any

from course import IN_BROWSER, check

from harness import Agent, Permissions, ScriptedModel, Workspace, say, tool_call

READS = ("mcp__shop__get_order", "mcp__shop__list_orders")
REFUND = "mcp__shop__issue_refund"
OTHERS = ("mcp__rogue__wipe_disk", "mcp__shop2__get_order", "mcp__shopx__issue_refund",
          "mcp__rogue__define")
OWN = ("write_file", "run_shell", "read_file")
ARGS = {"mcp__shop__get_order": {"order_id": "ORD-1002"}, "mcp__shop__list_orders": {},
        REFUND: {"order_id": "ORD-1002", "amount_eur": 20.0, "reason": "returned"}}


def _decisions(permissions: Permissions, names: tuple[str, ...]) -> dict[str, str]:
    return {name: permissions.decide(name) for name in names}


@check
def check_shop_permissions(shop_permissions: Callable[[Callable], Permissions]) -> str:
    """Reads run, a refund runs only when the approver says yes, nothing else runs."""
    asked: list[tuple[str, dict]] = []

    def approver(answer: bool) -> Callable[[str, dict], bool]:
        def approve(name: str, arguments: dict) -> bool:
            asked.append((name, dict(arguments)))
            return answer
        return approve

    for answer in ("yes", 1, "no", None):  # truthy or not, none of these is a yes
        permissions, asked[:] = shop_permissions(approver(answer)), []
        if isinstance(permissions, Permissions) and callable(permissions.approve) and \
                permissions.check(REFUND, ARGS[REFUND], "ask") is None and asked:
            raise AssertionError(
                f"an approver that answered {answer!r} (not True) approved the refund: only "
                "True approves (lesson 03), and Permissions holds to that when it is given "
                "the approver itself. Pass it as it is, approve=approve: a wrapper such as "
                "bool(approve(...)) turns a stray truthy answer into a yes")
    asked.clear()
    for answer in (True, False):
        permissions = shop_permissions(approver(answer))
        if not isinstance(permissions, Permissions):
            raise AssertionError(f"shop_permissions returned {type(permissions).__name__}; "
                                 "return a harness Permissions")
        table = _decisions(permissions, (*READS, REFUND, *OTHERS, *OWN, "mcp__shop__new_tool"))
        wrong = {n: d for n, d in table.items() if n in READS and d != "allow"}
        if wrong:
            raise AssertionError(f"the read-only tools must be allowed: {wrong}")
        if table[REFUND] != "ask":
            raise AssertionError(f"{REFUND} is {table[REFUND]!r}: a refund moves money, so a "
                                 "person must be asked ('ask'), every time")
        loose = {n: d for n, d in table.items() if n not in (*READS, REFUND) and d != "deny"}
        if loose:
            raise AssertionError(f"everything else must be denied, these are not: {loose} "
                                 "(keep default='deny'; name only the shop's three tools)")
        if permissions.approve is None:
            raise AssertionError("the refund is asked, but no one can answer: pass the "
                                 "approver you were given as approve=")
        if IN_BROWSER:  # the run below starts the shop's server: a program
            return ("the table is right (on a local install this check also runs it against "
                    "the shop's real server; the browser edition cannot start one)")
        from harness.mcp import MCPServer

        ws = Workspace.sample()
        calls = [*READS, REFUND, "mcp__shop2__get_order", "write_file"]
        steps = [tool_call(n, ARGS.get(n, {"path": "notes/x.md", "content": "x"}))
                 for n in calls] + [say("done")]
        asked.clear()
        with MCPServer("shop", sys.executable, ["tools/shop_server.py"], cwd=ws.root) as shop:
            result = Agent(ScriptedModel(steps), ws.tools, mcp_servers=[shop],
                           permissions=permissions).run("Refund ORD-1002")
        status = {e.tool_name: e.status for e in result.events if e.type == "tool_result"}
        ledger = ws.root / "data" / "refunds.jsonl"
        refunds = ledger.read_text().splitlines() if ledger.exists() else []
        if [n for n, _ in asked] != [REFUND]:
            raise AssertionError(f"the approver was asked about {[n for n, _ in asked]}; it "
                                 f"must be asked once, about {REFUND} only")
        if asked[0][1] != ARGS[REFUND]:
            raise AssertionError(f"the approver got {asked[0][1]}; give it the call's own "
                                 "arguments (Permissions passes them on)")
        want = "ok" if answer else "blocked"
        if status[REFUND] != want or len(refunds) != (1 if answer else 0):
            raise AssertionError(f"with an approver that says {'yes' if answer else 'no'} the "
                                 f"refund ended {status[REFUND]!r} and the ledger holds "
                                 f"{len(refunds)} line(s)")
        if any(status[n] != "ok" for n in READS):
            raise AssertionError(f"the reads ended {[status[n] for n in READS]}; they must run")
        if status["write_file"] != "blocked" or (ws.root / "notes/x.md").exists():
            raise AssertionError("write_file ran: only the shop's tools may run")
    return "reads run, a refund waits for a yes, everything else is denied"


# -- exercise 2: a result as the text the model reads -----------------------------------

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4).decode()
RESULTS: list[tuple[str, dict, bool, list[str], list[str]]] = [
    # label, result, ok, must contain (in this order), must not contain
    ("one text block", {"content": [{"type": "text", "text": "ORD-1002: delivered"}]},
     True, ["ORD-1002: delivered"], []),
    ("two text blocks", {"content": [{"type": "text", "text": "first"},
                                     {"type": "text", "text": "second"}]},
     True, ["first\nsecond"], []),
    ("an error", {"content": [{"type": "text", "text": "no order ORD-9999"}], "isError": True},
     False, ["no order ORD-9999"], []),
    ("an image and a caption", {"content": [
        {"type": "image", "data": PNG, "mimeType": "image/png"},
        {"type": "text", "text": "the parcel label"}]},
     True, ["image/png", "the parcel label"], [PNG[:40], PNG[-40:]]),
    ("audio", {"content": [{"type": "audio", "data": PNG, "mimeType": "audio/wav"}]},
     True, ["audio/wav"], [PNG[:40]]),
    ("structured content only", {"content": [], "structuredContent": {"id": "ORD-1003",
                                                                      "status": "shipped"}},
     True, ['"status": "shipped"'], []),
    ("structured content beside a text that says less", {
        "content": [{"type": "text", "text": "ORD-1003 is shipped"}],
        "structuredContent": {"id": "ORD-1003", "status": "shipped", "carrier": "DHL"}},
     True, ["ORD-1003 is shipped", '"carrier": "DHL"'], []),
    ("structured content its text already holds", {
        "content": [{"type": "text", "text": '{"id": "ORD-1003", "status": "shipped"}'}],
        "structuredContent": {"id": "ORD-1003", "status": "shipped"}},
     True, ['"status": "shipped"'], []),
    ("structured content its text holds as JSON laid out otherwise", {
        "content": [{"type": "text", "text": '{\n  "status": "shipped",\n  "id": "ORD-1003"\n}'}],
        "structuredContent": {"id": "ORD-1003", "status": "shipped"}},
     True, ['"status": "shipped"'], []),
    ("an error in the text, without isError", {
        "content": [{"type": "text", "text": "Error: no such table: orders"}]},
     True, ["Error: no such table: orders"], []),
    ("an error with no content", {"content": [], "isError": True}, False, [], []),
]


@check
def check_result_text(result_text: Callable[[dict], tuple[bool, str]]) -> str:
    """Each result: ok from isError (only); text blocks in order; media named, never
    pasted; structured content unless a text block already holds the same JSON."""
    for label, result, ok, present, absent in RESULTS:
        answer = result_text(json.loads(json.dumps(result)))
        if not (isinstance(answer, tuple) and len(answer) == 2 and isinstance(answer[1], str)):
            raise AssertionError(f"{label}: return (ok, text), a bool and a string, not "
                                 f"{_short(answer)}")
        got_ok, text = answer
        if got_ok is not ok:
            raise AssertionError(f"{label}: ok should be {ok} (it comes from isError, which is "
                                 f"{result.get('isError', False)}), got {got_ok!r}")
        for piece in absent:
            if piece in text:
                raise AssertionError(f"{label}: the text holds the image's base64 data; name "
                                     "media by type (the model cannot read base64)")
        said = result.get("structuredContent")
        if said is not None and text.count('"status"') > 1:
            raise AssertionError(f"{label}: the structured content is there twice; add it "
                                 "only when no text block already holds the same JSON (the "
                                 "same value once parsed, json.loads, however it is laid out)")
        at = 0
        for piece in present:
            found = text.find(piece, at)
            if found < 0:
                media = "/" in piece and " " not in piece  # a mime type
                how = (f"; name each image or audio block by its mimeType ({piece})" if media
                       else " after what came before" if at else "")
                raise AssertionError(f"{label}: the text should hold {piece!r}{how}; it is "
                                     f"{_short(text)}")
            at = found + len(piece)
    return "every result reads as the model should read it"


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."
