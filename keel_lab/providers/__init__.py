"""Real providers: their message formats, their stream formats (converted into the core's
deltas and diagnosed), the official SDK as a model, and a replay server for recorded streams."""
