"""Reference solutions for lesson 02 (same names as the exercise stubs)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from harness import tool


@tool
def convert_temperature(celsius: float, to: Literal["fahrenheit", "kelvin"]) -> float:
    """Convert a temperature in degrees Celsius to Fahrenheit or Kelvin.

    Args:
        celsius: the temperature in degrees Celsius, e.g. 21.5.
        to: the unit to convert to.
    """
    if to == "fahrenheit":
        return celsius * 9 / 5 + 32
    return celsius + 273.15


def confine(root: str | Path, path: str) -> Path:
    """The real location of ``path`` inside ``root``; ValueError if it leads outside."""
    base = Path(root).resolve()
    real = (base / path).resolve()
    if not real.is_relative_to(base):
        raise ValueError(f"'{path}' leads outside the workspace")
    return real
