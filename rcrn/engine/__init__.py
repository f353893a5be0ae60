"""Training and evaluation engine: configs, the trainer, predictions, the CLI commands."""
