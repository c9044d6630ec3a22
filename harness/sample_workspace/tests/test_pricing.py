import pytest
from pricing import apply_discount


def test_discount_is_taken_off_the_price():
    assert apply_discount(100.0, 15) == 85.0


def test_discount_is_rounded_to_cents():
    assert apply_discount(59.90, 10) == 53.91


def test_discount_over_100_percent_is_refused():
    with pytest.raises(ValueError):
        apply_discount(50.0, 120)
