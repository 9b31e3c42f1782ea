"""Real providers: their message formats (to and from the lab's history, and each provider's own
history rules), their stream formats (read into the core's deltas and diagnosed), the official
OpenAI SDK as a model, LangChain's messages and tools, and a replay server for recorded streams.
Each name loads its module on first use: an SDK, or LangChain, only when asked for."""

from keel_lab._lazy import lazy

__getattr__, __dir__ = lazy(__name__, {
    "keel_lab.providers._openai_messages": ("from_openai", "to_openai"),
    "keel_lab.providers._responses_messages": ("from_responses", "to_responses",
                                              "validate_responses"),
    "keel_lab.providers._anthropic_messages": ("from_anthropic", "to_anthropic",
                                              "validate_anthropic"),
    "keel_lab.providers._gemini_messages": ("from_gemini", "to_gemini", "validate_gemini"),
    "keel_lab.providers._langchain_messages": ("from_langchain", "to_langchain"),
    "keel_lab.providers._langchain_tools": ("to_langchain_tool",),
    "keel_lab.providers._switches": ("anthropic_request", "anthropic_results",
                                    "openai_chat_request"),
    "keel_lab.providers._diagnosis": ("Diagnosis", "diagnose", "diagnose_file", "read_stream"),
    "keel_lab.providers._formats": ("detect_history", "detect_stream"),
    "keel_lab.providers._openai_adapter": ("OpenAIChatAdapter",),
    "keel_lab.providers._replay": ("ReplayServer",),
})

__all__ = [
    "Diagnosis", "OpenAIChatAdapter", "ReplayServer", "anthropic_request", "anthropic_results",
    "detect_history", "detect_stream", "diagnose", "diagnose_file", "from_anthropic",
    "from_gemini", "from_langchain", "from_openai", "from_responses", "openai_chat_request",
    "read_stream", "to_anthropic", "to_gemini", "to_langchain", "to_langchain_tool", "to_openai",
    "to_responses", "validate_anthropic", "validate_gemini", "validate_responses",
]
