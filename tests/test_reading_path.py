"""The counting of benchmarks/reading_path.py, on a small module written to tmp_path."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "reading_path.py"
SAMPLE = '''"""A sample core module:
two lines of docstring."""

from dataclasses import dataclass


def keep(fn):
    return fn


def entered(x):
    twice = lambda y: y * 2  # noqa: E731
    return twice(x) + (lambda z: z)(1)


def skipped():
    return 0


@keep
def decorated(x):
    return x


class Used:
    """A class whose method runs."""

    # a comment between fields is not in a statement
    size = 2

    def method(self):
        return self.size

    def other(self):
        return 1


class Untouched:
    """Never made."""

    name = "x"

    def method(self):
        return 0


@dataclass
class Point:
    """Made; its __init__ is generated code."""

    x: int
    y: int = 0
'''


@pytest.fixture(scope="module")
def rp():
    spec = importlib.util.spec_from_file_location("benchmark_reading_path", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def core(tmp_path, monkeypatch):
    (tmp_path / "rp_sample.py").write_text(SAMPLE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "rp_sample", raising=False)
    yield tmp_path
    sys.modules.pop("rp_sample", None)


def lines(first: str, last: str | None = None) -> set[int]:
    """The line numbers of SAMPLE from the line holding ``first`` to the one holding ``last``."""
    text = SAMPLE.splitlines()
    start = next(i for i, line in enumerate(text, 1) if first in line)
    end = next(i for i, line in enumerate(text, 1) if i >= start and (last or first) in line)
    return set(range(start, end + 1))


def traced(rp, core, run) -> tuple[set[int], list[tuple[str, int]]]:
    with rp.Trace(core) as trace:
        run()
    counted, functions = rp.reading_path(trace)
    return counted.get(str((core / "rp_sample.py").resolve()), set()), functions


DOCSTRING = lines('"""A sample', "two lines")


def test_a_function_entered_counts_whole_its_lambdas_once_and_others_not(rp, core):
    sample = importlib.import_module("rp_sample")
    counted, functions = traced(rp, core, lambda: sample.entered(1))
    assert counted == DOCSTRING | lines("def entered", "(lambda z")
    assert functions == [(f"rp_sample.py:{min(lines('def entered'))} entered", 3)]


def test_a_decorated_function_counts_from_its_decorator(rp, core):
    sample = importlib.import_module("rp_sample")
    counted, _ = traced(rp, core, lambda: sample.decorated(1))
    assert counted == DOCSTRING | lines("@keep", "return x")


def test_a_touched_class_counts_its_class_lines_and_an_untouched_class_does_not(rp, core):
    sample = importlib.import_module("rp_sample")
    counted, _ = traced(rp, core, lambda: sample.Used().method())
    class_lines = lines("class Used", "A class whose") | lines("size = 2")
    assert counted == DOCSTRING | class_lines | lines("def method(self)", "return self.size")


def test_a_dataclass_made_counts_its_class_lines_though_no_method_of_it_runs(rp, core):
    sample = importlib.import_module("rp_sample")
    counted, functions = traced(rp, core, lambda: sample.Point(1))
    assert counted == DOCSTRING | lines("@dataclass", "Made;") | lines("x: int", "y: int")
    assert functions == []


def test_code_run_while_a_module_is_imported_is_not_counted(rp, core):
    (core / "rp_sample.py").write_text(SAMPLE + "\nentered(1)\nUsed().method()\n",
                                       encoding="utf-8")
    counted, _ = traced(rp, core, lambda: importlib.import_module("rp_sample"))
    assert counted == set()
