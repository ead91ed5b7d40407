"""Benchmarks (`vinestream bench`): structures, algorithms and Kafka, JSON out, peers side by side."""
