"""Batching: micro-batches, their net effect (resolve), and external <-> internal vertex ids."""
