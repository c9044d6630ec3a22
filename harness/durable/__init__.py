"""Durable execution (lesson 09): the call log writes each call's intent before it runs
and its result after, so a run can resume (a record answers only the same call: same
tool, same arguments), and a replay never repeats a side effect nor runs a call whose
result is unknown. `resumed(log, model)` resumes a crashed run against a live model."""

from .calllog import CallLog
from .resume import Resumed, resumed

__all__ = ["CallLog", "Resumed", "resumed"]
