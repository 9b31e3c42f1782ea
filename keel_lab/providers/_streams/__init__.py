"""One converter per provider stream format, from wire payloads to the core's deltas."""
