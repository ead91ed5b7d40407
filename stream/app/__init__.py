"""The application: sources -> pipeline -> sinks in one loop, checkpoints, config, metrics and the CLI."""
