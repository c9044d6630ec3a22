"""Live models (lesson 12): `OpenAIModel` over the `openai` SDK, its settings, what real
providers add to a reply (wire.py), streaming, and the endpoint probe. Registered as the
``live`` extension: the ``tool_choice_fallback`` event, and the ``streaming`` service that
`ScriptedModel(stream=True)` plays its replies through."""

from ..extend import Extension, register
from .openai_model import OpenAIModel
from .settings import ModelSettings
from .streaming import play
from .wire import parse_reply

__all__ = ["ModelSettings", "OpenAIModel", "parse_reply"]

register(Extension("live", services={"streaming": play}, events={
    "tool_choice_fallback": "requested, sent, reminder, reason"}))
