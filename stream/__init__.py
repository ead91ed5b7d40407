"""The pipeline: event schema, decoding and validation, micro-batching, net effect, the worker loop."""
