"""Mismatched expressions: one relation phrase replaced, kept only when surely false.

The substitution table follows the spirit of the GITM-MR table of relation
substitutions (paper Table 4): each relation is replaced by contextually close
but semantically different ones.  Substitutes keep the clause verb ("is" /
"has"), so only the relation phrase itself changes.

A candidate mismatch is kept only when executing it on the scene finds no
object even with ambiguous relations counted as holding -- the automatic
counterpart of the human filtering of false mismatches in GITM-MR.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from benchmarks.synthetic.expressions import Expression, execute
from benchmarks.synthetic.relations import PHRASES, SceneRelations

__all__ = ["SUBSTITUTIONS", "Mismatch", "find_mismatch"]

#: Replacement candidates of every relation.
SUBSTITUTIONS: dict[str, tuple[str, ...]] = {
    "left_of": ("right_of", "above", "below"),
    "right_of": ("left_of", "above", "below"),
    "above": ("below", "left_of", "right_of"),
    "below": ("above", "left_of", "right_of"),
    "near": ("far_from",),
    "far_from": ("near", "next_to"),
    "next_to": ("far_from", "above", "below"),
    "bigger_than": ("smaller_than",),
    "smaller_than": ("bigger_than",),
    "same_color": ("same_shape",),
    "same_shape": ("same_color",),
}


@dataclass
class Mismatch:
    """A mismatched counterpart of an expression.

    Attributes:
        expression: the mismatched expression (same tree, one relation replaced).
        edge: index of the replaced edge in ``expression.edges``.
        original: the replaced relation key.
        replacement: the new relation key.
    """

    expression: Expression
    edge: int
    original: str
    replacement: str

    @property
    def original_phrase(self) -> str:
        return PHRASES[self.original]

    @property
    def replacement_phrase(self) -> str:
        return PHRASES[self.replacement]


def find_mismatch(rng: random.Random, expression: Expression, relations: SceneRelations
                  ) -> Mismatch | None:
    """Replace one relation of ``expression`` so that it describes no object of the scene.

    Edges are tried in random order, and the substitutes of each edge in random
    order; the first candidate whose lenient execution is empty is returned.

    Args:
        rng: random generator.
        expression: a positive expression with at least one relation.
        relations: the scene's relation tables.

    Returns:
        The mismatch, or None when every substitution could still describe an object.
    """
    edges = list(range(len(expression.edges)))
    rng.shuffle(edges)
    for k in edges:
        original = expression.edges[k].relation
        substitutes = list(SUBSTITUTIONS[original])
        rng.shuffle(substitutes)
        for replacement in substitutes:
            candidate = expression.with_relation(k, replacement)
            if execute(candidate, relations, lenient=True) == 0:
                return Mismatch(expression=candidate, edge=k, original=original,
                                replacement=replacement)
    return None
