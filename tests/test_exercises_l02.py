"""Lesson 02 exercise checks: each accepts the reference solution and rejects a wrong one."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Literal

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lessons"))

from exercises.l02 import check_confine, check_convert_temperature
from solutions import l02 as solution

from harness import tool


def test_convert_temperature_check_accepts_the_reference():
    assert check_convert_temperature(solution.convert_temperature) is True


def test_convert_temperature_check_rejects_a_plain_function():
    def convert_temperature(celsius: float, to: str) -> float:
        return celsius * 9 / 5 + 32 if to == "fahrenheit" else celsius + 273.15

    assert check_convert_temperature(convert_temperature) is False


def test_convert_temperature_check_rejects_a_unit_typed_as_plain_str():
    @tool
    def convert_temperature(celsius: float, to: str) -> float:
        """Convert a temperature in degrees Celsius.

        Args:
            celsius: degrees Celsius.
            to: fahrenheit or kelvin.
        """
        return celsius * 9 / 5 + 32 if to == "fahrenheit" else celsius + 273.15

    assert check_convert_temperature(convert_temperature) is False


def test_convert_temperature_check_rejects_a_wrong_kelvin_offset():
    @tool
    def convert_temperature(celsius: float, to: Literal["fahrenheit", "kelvin"]) -> float:
        """Convert a temperature in degrees Celsius.

        Args:
            celsius: degrees Celsius.
            to: the unit to convert to.
        """
        return celsius * 9 / 5 + 32 if to == "fahrenheit" else celsius + 273

    assert check_convert_temperature(convert_temperature) is False


Unit = Literal["fahrenheit", "kelvin"]


def _documented(fn):
    """``fn`` as a tool, with a docstring that describes both parameters."""
    fn.__doc__ = """Convert a temperature in degrees Celsius.

    Args:
        celsius: degrees Celsius.
        to: the unit to convert to.
    """
    return tool(fn)


def test_convert_temperature_check_rejects_a_unit_with_a_default(capsys):
    def convert_temperature(celsius: float, to: Unit = "fahrenheit") -> float:
        return solution.convert_temperature.fn(celsius, to)

    assert check_convert_temperature(_documented(convert_temperature)) is False
    assert "both parameters should be required" in capsys.readouterr().out


def test_convert_temperature_check_rejects_whole_degrees_only(capsys):
    def convert_temperature(celsius: int, to: Unit) -> float:
        return solution.convert_temperature.fn(celsius, to)

    assert check_convert_temperature(_documented(convert_temperature)) is False
    assert "annotate it as float" in capsys.readouterr().out


def test_convert_temperature_check_rejects_a_result_rounded_to_one_decimal():
    def convert_temperature(celsius: float, to: Unit) -> float:
        return round(solution.convert_temperature.fn(celsius, to), 1)

    assert check_convert_temperature(_documented(convert_temperature)) is False


def test_convert_temperature_check_rejects_the_number_with_its_unit_as_text(capsys):
    def convert_temperature(celsius: float, to: Unit) -> str:
        return f"{solution.convert_temperature.fn(celsius, to):.2f} {to}"

    assert check_convert_temperature(_documented(convert_temperature)) is False
    assert "return the number itself" in capsys.readouterr().out


def test_confine_check_accepts_the_reference():
    assert check_confine(solution.confine) is True


def test_confine_check_rejects_a_check_on_the_text_of_the_path():
    def text_only(root, path):
        if ".." in path or path.startswith("/"):
            raise ValueError(f"{path} leads outside")
        return Path(root) / path

    assert check_confine(text_only) is False


def test_confine_check_rejects_a_string_prefix_comparison():
    def prefix(root, path):
        real = (Path(root) / path).resolve()
        if not str(real).startswith(str(Path(root).resolve())):
            raise ValueError(f"{path} leads outside")
        return real

    assert check_confine(prefix) is False


def test_confine_check_rejects_normpath_without_resolving_symlinks():
    def normpath_only(root, path):
        real = Path(os.path.normpath(Path(root).resolve() / path))
        if not real.is_relative_to(Path(root).resolve()):
            raise ValueError(f"{path} leads outside")
        return real

    assert check_confine(normpath_only) is False


def test_confine_check_rejects_returning_the_joined_path_instead_of_the_real_one(capsys):
    def joined(root, path):
        solution.confine(root, path)  # the right test...
        return Path(root) / path      # ...but not the path it tested

    assert check_confine(joined) is False
    assert "not the path joined to the root" in capsys.readouterr().out


def test_confine_check_rejects_returning_the_path_relative_to_the_root():
    def relative(root, path):
        return solution.confine(root, path).relative_to(Path(root).resolve())

    assert check_confine(relative) is False


def test_confine_check_rejects_a_confine_that_needs_the_file_to_exist():
    def strict(root, path):
        real = (Path(root).resolve() / path).resolve(strict=True)
        if not real.is_relative_to(Path(root).resolve()):
            raise ValueError(f"{path} leads outside")
        return real

    assert check_confine(strict) is False


def test_confine_check_rejects_returning_none_instead_of_raising():
    def quiet(root, path):
        try:
            return solution.confine(root, path)
        except ValueError:
            return None

    assert check_confine(quiet) is False


def test_confine_check_accepts_the_real_path_as_text():
    assert check_confine(lambda root, path: str(solution.confine(root, path))) is True


def test_confine_check_rejects_a_root_that_is_not_resolved(capsys):
    def unresolved_root(root, path):
        real = (Path(root) / path).resolve()
        if not real.is_relative_to(Path(root)):
            raise ValueError(f"{path} leads outside")
        return real

    assert check_confine(unresolved_root) is False
    assert "resolve the root too" in capsys.readouterr().out


def test_confine_check_rejects_a_root_made_absolute_but_not_resolved(capsys):
    def absolute_root(root, path):
        base = Path(os.path.abspath(root))
        real = (base / path).resolve()
        if not real.is_relative_to(base):
            raise ValueError(f"{path} leads outside")
        return real

    assert check_confine(absolute_root) is False
    assert "given as a symlink" in capsys.readouterr().out


def test_confine_check_rejects_a_relative_root_joined_to_the_wrong_folder(capsys):
    def resolved_from_the_path_only(root, path):
        real = (Path(root) / path).resolve()
        base = Path(root).absolute().resolve() if Path(root).is_absolute() else Path(root)
        if not real.is_relative_to(base):
            raise ValueError(f"{path} leads outside")
        return real

    assert check_confine(resolved_from_the_path_only) is False
    assert "relative path" in capsys.readouterr().out


def test_convert_temperature_check_rejects_the_number_returned_as_text(capsys):
    def convert_temperature(celsius: float, to: Unit) -> str:
        return str(solution.convert_temperature.fn(celsius, to))

    assert check_convert_temperature(_documented(convert_temperature)) is False
    assert "a float" in capsys.readouterr().out


def test_confine_check_rejects_a_confine_that_needs_the_folder_to_exist(capsys):
    def folder_must_exist(root, path):
        base = Path(root).resolve()
        joined = base / path
        real = joined.parent.resolve(strict=True) / joined.name
        if not real.is_relative_to(base):
            raise ValueError(f"{path} leads outside")
        return real

    assert check_confine(folder_must_exist) is False
    assert "nor its folder" in capsys.readouterr().out
