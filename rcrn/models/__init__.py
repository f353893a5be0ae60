"""Models built from the primitives."""

from rcrn.models.output import ModelOutput
from rcrn.models.rcrn import RCRN, Belief, RCRNConfig

__all__ = ["RCRN", "RCRNConfig", "Belief", "ModelOutput"]
