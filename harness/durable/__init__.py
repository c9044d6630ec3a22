"""Durable execution (lesson 09): the call log writes each call's intent before it runs
and its result after, so a run can resume, and a replay never repeats a side effect."""

from .calllog import CallLog

__all__ = ["CallLog"]
