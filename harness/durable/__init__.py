"""Durable execution (lesson 11): the call log writes each call's intent before it runs
and its result after, so a run can resume (a record answers only the same call: same
tool, same arguments), and a replay never repeats a side effect nor runs a call whose
result is unknown. `resumed(log, model)` resumes a crashed run against a live model.
`Verification` (harness/verify.py, in the core): a ``stop`` hook may refuse an answer."""

from ..verify import Verification  # the core's (harness/verify.py), where lesson 11 reads it
from .calllog import CallLog
from .resume import Resumed, resumed

__all__ = ["CallLog", "Resumed", "Verification", "resumed"]
