"""The primitives of RCRN (paper Table 1): one module per primitive, the gates in one."""

from rcrn.nn.aggregate import Aggregate
from rcrn.nn.and_ import And
from rcrn.nn.classify import Classify
from rcrn.nn.compare import Compare
from rcrn.nn.functional import f_norm, masked_topk
from rcrn.nn.gate import Gate, GateProd, GateSum
from rcrn.nn.locate import Locate
from rcrn.nn.propagation import Belief, Propagation
from rcrn.nn.selection import Select
from rcrn.nn.sim import MLP, EntitySim, RelationSim

__all__ = ["Aggregate", "And", "Belief", "Classify", "Compare", "EntitySim", "Gate",
           "GateProd", "GateSum", "Locate", "MLP", "Propagation", "RelationSim", "Select",
           "f_norm", "masked_topk"]
