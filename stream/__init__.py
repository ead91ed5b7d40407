"""The streaming side of vinestream: events, batching, the pipeline, the application loop, benchmarks."""
