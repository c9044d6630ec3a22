"""Durable execution (lesson 11): the call log writes each call's intent before it runs
and its result after, so a run can resume (a record answers only the same call: same
tool, same arguments), and a replay never repeats a side effect nor runs a call whose
result is unknown. `resumed(log, model)` resumes a crashed run against a live model.
`Verification` (verify.py): a ``stop`` hook may refuse an answer; the outcome ``unverified``."""

from .calllog import CallLog
from .resume import Resumed, resumed
from .verify import Verification

__all__ = ["CallLog", "Resumed", "Verification", "resumed"]
