"""Experiment runners built on the training engine (``rcrn lengthgen``)."""

from rcrn.experiments.lengthgen import (
    Experiment,
    ExperimentReport,
    aggregate,
    load_experiment,
    run_experiment,
    select_fraction,
)

__all__ = ["Experiment", "ExperimentReport", "aggregate", "load_experiment", "run_experiment",
           "select_fraction"]
