"""The shop's MCP server: order records to read, and one tool that changes something.

    python tools/shop_server.py             (stdio: what an agent starts)
    python tools/shop_server.py --http 8765 (streamable HTTP on 127.0.0.1:8765/mcp)

Written with the official MCP SDK. It runs in the workspace folder and reads the
records in data/records/; `issue_refund` appends a line to data/refunds.jsonl.
"""

import argparse
import json
import re
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

ROOT = Path(__file__).resolve().parent.parent
RECORDS = ROOT / "data" / "records"
REFUNDS = ROOT / "data" / "refunds.jsonl"

server = MCPServer("larkspur-shop", instructions="Order records of Larkspur Audio.")


def record(order_id: str) -> dict:
    if not re.fullmatch(r"ORD-[0-9]{4}", order_id):
        raise ValueError(f"{order_id!r} is not an order id (ORD- and four digits)")
    path = RECORDS / f"{order_id}.json"
    if not path.is_file():
        raise ValueError(f"no order {order_id}")
    return json.loads(path.read_text(encoding="utf-8"))


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def get_order(order_id: str) -> str:
    """The order record for one order id, as JSON.

    Args:
        order_id: the order id, like ORD-1002.
    """
    return json.dumps(record(order_id), indent=1)


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def list_orders(customer: str = "") -> str:
    """The order ids on file, one per line, with customer and status.

    Args:
        customer: only this customer's orders (empty: all of them).
    """
    lines = []
    for path in sorted(RECORDS.glob("ORD-*.json")):
        order = json.loads(path.read_text(encoding="utf-8"))
        if customer.lower() in order["customer"].lower():
            lines.append(f"{order['id']}  {order['customer']}  {order['status']}")
    return "\n".join(lines) or "no orders"


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
def issue_refund(order_id: str, amount_eur: float, reason: str) -> str:
    """Refund an order: the money goes back to the customer. Cannot be undone.

    Args:
        order_id: the order to refund, like ORD-1002.
        amount_eur: how much, in euros.
        reason: one line for the books.
    """
    order = record(order_id)
    if not 0 < amount_eur <= 1000:
        raise ValueError("amount_eur must be more than 0 and at most 1000")
    entry = {"order": order["id"], "amount_eur": amount_eur, "reason": reason}
    with REFUNDS.open("a", encoding="utf-8") as out:
        out.write(json.dumps(entry) + "\n")
    return f"Refunded {amount_eur:.2f} EUR on {order['id']} ({order['customer']})."


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="The shop's MCP server.")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP")
    port = parser.parse_args().http
    if port:
        server.run("streamable-http", host="127.0.0.1", port=port)
    else:
        server.run()
