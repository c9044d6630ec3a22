"""How a run ends: the outcomes, and the two exceptions that carry them. The bottom layer.

| outcome           | meaning                                                          |
|-------------------|------------------------------------------------------------------|
| `completed`       | the model answered without calling a tool (and the plan is done)  |
| `open_items`      | it answered twice while its plan still had open items             |
| `turn_limit`      | this agent's `max_turns` model requests were used up              |
| `time_limit`      | `max_seconds` ran out                                             |
| `cancelled`       | `cancel.is_set()` became true (or the kernel was interrupted)     |
| `model_error`     | a model request failed; `error` says why                         |
| `truncated`       | the answer was cut off (``finish_reason: "length"``)              |
| `refused`         | the model refused to answer; `final` holds its refusal            |
| `request_limit`   | the run's model requests (``max_requests``) were used up          |
| `tool_call_limit` | the run's tool calls (``max_tool_calls``) were used up            |
| `token_limit`     | the run's input tokens (``max_input_tokens``) were used up        |
| `unverified`      | a ``stop`` hook kept refusing the answer; `error` says why        |

Inside the harness a run ends by raising `RunOver`, wherever the reason is found (the
budget, the stop gate, an answer); the loop turns it into the `RunResult`, so the loop
itself keeps no bookkeeping for endings (mini-swe-agent's ``exceptions.py`` does the same).
"""

from __future__ import annotations

OUTCOMES = ("completed", "open_items", "turn_limit", "time_limit", "cancelled", "model_error",
            "truncated", "refused", "request_limit", "tool_call_limit", "token_limit",
            "unverified")


class RunOver(Exception):
    """The run ends now, with this outcome (and the answer or the error, if any)."""

    def __init__(self, outcome: str, final: str | None = None, error: str | None = None) -> None:
        super().__init__(outcome)
        self.outcome, self.final, self.error = outcome, final, error


class ModelError(RuntimeError):
    """A model request failed. The loop turns it into the outcome ``"model_error"``."""


INTERRUPTED = "interrupted (KeyboardInterrupt)"  # the error of a run stopped by the keyboard
