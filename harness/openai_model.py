"""`OpenAIModel`: any OpenAI-compatible chat-completions server, through the `openai` SDK.

    model = OpenAIModel()              # HARNESS_MODEL, OPENAI_BASE_URL, OPENAI_API_KEY
    model = OpenAIModel("qwen2.5:7b", base_url="http://localhost:11434/v1", timeout=60)

OpenAI, DeepSeek, GLM, Ollama, vLLM and OpenRouter all speak this protocol. The key is
never printed, logged or put in an error message.
"""

from __future__ import annotations

import os
from typing import Any

from .models import Message, ModelError, ModelReply, PromptSizer, estimate_tokens, parse_reply

# What moves the harness to a live model: these, and the ones the openai SDK reads itself.
# Tests and the notebook runner remove them all, so they always run offline.
PROVIDER_VARIABLES = ("HARNESS_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_ORG_ID",
                      "OPENAI_PROJECT_ID")


class OpenAIModel:
    """Any OpenAI-compatible chat-completions server, through the official SDK.

    Unset arguments come from the environment: ``HARNESS_MODEL`` (the model name),
    ``OPENAI_BASE_URL`` (leave unset for OpenAI itself) and ``OPENAI_API_KEY``
    (optional for a local server such as Ollama or vLLM). Extra keyword arguments go
    to ``openai.OpenAI`` (for example ``max_retries=2, timeout=60``). The key is never
    printed, logged or put in an error message.
    """

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        **client_kwargs: Any,
    ) -> None:
        self.model = model or os.environ.get("HARNESS_MODEL")
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        key = api_key or os.environ.get("OPENAI_API_KEY") or None
        if not self.model:
            raise ValueError(
                "No model name: pass OpenAIModel(model=...) or set HARNESS_MODEL "
                "(for example HARNESS_MODEL=gpt-4o-mini)"
            )
        if key is None and self.base_url is None:
            raise ValueError(
                "No API key for the OpenAI API: set OPENAI_API_KEY, or set OPENAI_BASE_URL "
                "to a local server (Ollama, vLLM) that needs no key"
            )
        import openai  # imported here so `import harness` stays light and works offline

        self._openai = openai
        self._secret = key
        self._sizer = PromptSizer()
        self._replies = 0
        # A keyless local server still needs a non-empty string for the SDK.
        self.client = openai.OpenAI(base_url=self.base_url, api_key=key or "no-key",
                                    **client_kwargs)

    def __repr__(self) -> str:
        return f"OpenAIModel(model={self.model!r}, base_url={self.base_url!r})"

    def complete(
        self, messages: list[Message], tools: list[dict], tool_choice: Any = None
    ) -> ModelReply:
        request: dict[str, Any] = {"model": self.model, "messages": messages}
        if tools:  # the API refuses tools=[]; with no tools, leave both keys out
            request["tools"] = tools
            request["tool_choice"] = tool_choice or "auto"
        try:
            response = self.client.chat.completions.create(**request)
        except self._openai.OpenAIError as exc:
            raise ModelError(self._redact(f"{type(exc).__name__}: {exc}")) from None
        except ValueError as exc:  # a 200 whose body is not JSON, or not a completion
            raise ModelError(self._redact(
                f"the server's reply could not be read ({type(exc).__name__}: {exc})"
            )) from None
        choices = getattr(response, "choices", None) or []
        message = getattr(choices[0], "message", None) if choices else None
        if message is None:
            raise ModelError("the server's reply had no choice with a message")
        usage = getattr(response, "usage", None)
        usage = usage.model_dump() if usage is not None else None
        estimate = 0 if usage else estimate_tokens(self._sizer.chars(messages, tools))
        # Some local servers send tool calls without ids: number them by reply, so they
        # stay unique across the run (the loop never runs a call id twice).
        self._replies += 1
        return parse_reply(message.model_dump(exclude_none=True), usage, estimate=estimate,
                           id_prefix=f"call_{self._replies}")

    def _redact(self, text: str) -> str:
        if self._secret and len(self._secret) >= 4:
            text = text.replace(self._secret, "***")
        return text
