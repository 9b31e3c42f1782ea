"""The lesson's rules: protocol objects, the history rules, pairing, tools, batching, the
executor, streaming, partial success and the run loop. Nothing here knows a provider's wire
format or the course's notebooks."""
