"""Events: the Arrow schema, decoding wire payloads (JSON, CSV, Arrow IPC), validation into dead letters."""
