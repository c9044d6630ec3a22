"""How a run ends (``RunResult.outcome``), and the exceptions that carry it. The bottom layer.

completed: answered without a tool call; open_items: answered twice with the plan not done;
turn_limit, time_limit, request_limit, tool_call_limit, token_limit: max_turns, max_seconds,
max_requests, max_tool_calls, max_input_tokens used up; cancelled: ``cancel.is_set()`` or an
interrupt; model_error: a request failed; truncated, refused: the answer was cut off, or a
refusal; awaiting_approval: a call waits for a person (``result.pending``, pause.py). An
extension adds its own (``unverified``: harness/durable/verify.py)."""

OUTCOMES = ["completed", "open_items", "turn_limit", "time_limit", "cancelled", "model_error",
            "truncated", "refused", "request_limit", "tool_call_limit", "token_limit",
            "awaiting_approval"]
INTERRUPTED = "interrupted (KeyboardInterrupt)"  # the error of a run stopped by the keyboard


class RunOver(Exception):
    """Raised wherever a run's end is found; the loop turns it into the `RunResult`."""

    def __init__(self, outcome: str, final: str | None = None, error: str | None = None,
                 pending: list | None = None, held: set | None = None) -> None:
        super().__init__(outcome)
        self.outcome = outcome
        self.final = final
        self.error = error
        self.pending = pending or []  # the calls waiting for a person (awaiting_approval)
        self.held = held or set()  # the delegations whose sub-agent waits: no answer yet


class ModelError(RuntimeError):
    """A model request failed. The loop turns it into the outcome ``"model_error"``."""
