"""Order look-up for the support team: a small in-memory stand-in for the shop database."""

ORDERS = {
    "ORD-1001": {"item": "Heron over-ear headphones", "status": "delivered", "total": 129.00},
    "ORD-1002": {"item": "Wren in-ear headphones", "status": "delivered", "total": 59.90},
    "ORD-1003": {"item": "Finch wireless earbuds", "status": "shipped", "total": 89.00},
}


def order_status(order_id: str) -> str:
    """One line about an order, or a message that says the id is unknown."""
    key = order_id.strip().upper()
    order = ORDERS.get(key)
    if order is None:
        return f"unknown order id {order_id!r}"
    return f"{key}: {order['item']}, {order['status']}, ${order['total']:.2f}"
