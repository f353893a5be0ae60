"""Models built from the primitives."""

from rcrn.models.rcrn import RCRN, Belief, ModelOutput, RCRNConfig

__all__ = ["RCRN", "RCRNConfig", "Belief", "ModelOutput"]
