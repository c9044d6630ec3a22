"""Prices: discounts computed in one place, so every page shows the same amount."""


def apply_discount(price: float, percent: float) -> float:
    """``price`` minus ``percent`` per cent, rounded to cents. ``percent`` is 0 to 100."""
    if not 0 <= percent <= 100:
        raise ValueError(f"percent must be between 0 and 100, got {percent}")
    return round(price * (100 - percent) / 100, 2)
