"""Which earlier mention a pronoun or a definite noun phrase stands for.

The agreement tests here are shared by the ``rule`` parser's attachment rules (pronouns
inside one text, :mod:`parsers.rule_attachment`) and by the scene mode, which merges the
mentions of several sentences into the entities of one :class:`~parsers.scene.SceneGraph`
(:func:`merge_sentences`).

Agreement is by person and number only: ``he`` / ``she`` / ``him`` / ``her`` stand for a
person (a wearer of clothing in the lexicon: ``man``, ``girl``) or an animal (``dog``);
``it`` for a singular entity that is not a person; ``they`` / ``them`` for a plural head
(``dogs``, ``people``) or a group of coordinated entities (``a man and a woman``).
"""

from __future__ import annotations

from parsers.lexicon import WEARER_NOUNS, lexicon_form

__all__ = ["ANIMALS", "PRONOUNS", "REFLEXIVE", "SUBJECT_PRONOUNS", "POSSESSIVE_PRONOUNS",
           "agrees", "is_animal", "is_person", "is_plural"]

PERSONAL = frozenset({"he", "him", "himself", "she", "her", "herself"})
NEUTER = frozenset({"it", "itself"})
PLURAL = frozenset({"they", "them", "themselves"})
REFLEXIVE = frozenset({"himself", "herself", "itself", "themselves"})
#: pronouns that stand for an entity named earlier in the text
PRONOUNS = PERSONAL | NEUTER | PLURAL
#: pronouns that open a clause as its subject
SUBJECT_PRONOUNS = frozenset({"he", "she", "it", "they"})
#: possessive determiners and the pronoun each agrees like
POSSESSIVE_PRONOUNS = {"his": "he", "her": "she", "its": "it", "their": "they"}
#: animals: ``it`` as well as ``he`` / ``she`` may stand for one
ANIMALS = frozenset({"dog", "cat", "horse", "cow", "bull", "calf", "sheep", "lamb", "goat",
                     "pig", "elephant", "giraffe", "zebra", "bear", "bird", "duck", "goose",
                     "chicken", "pigeon", "seagull", "gull", "parrot", "owl", "puppy",
                     "kitten", "pony", "donkey", "mouse", "rabbit", "squirrel", "deer",
                     "monkey", "lion", "tiger", "fish", "animal", "pet", "dolphin", "whale"})
_PLURAL_HEADS = frozenset({"men", "women", "people", "children", "feet", "teeth", "mice",
                           "geese", "sheep", "deer", "fish", "cattle", "police"})


def _last_word(head: str) -> str:
    return head.split()[-1].lower() if head else ""


def is_plural(head: str) -> bool:
    """Whether a head noun is plural (``dogs``, ``people``; not ``glass``, ``bus``)."""
    w = _last_word(head)
    return w in _PLURAL_HEADS or (w.endswith("s") and not w.endswith(("ss", "us", "is")))


def is_animal(head: str) -> bool:
    """Whether a head noun names an animal."""
    return lexicon_form(_last_word(head), ANIMALS)


def is_person(head: str) -> bool:
    """Whether a head noun names a person (a wearer of clothing in the lexicon that is no
    animal)."""
    w = _last_word(head)
    return lexicon_form(w, WEARER_NOUNS) and not lexicon_form(w, ANIMALS)


def agrees(pronoun: str, head: str, group: bool = False) -> bool:
    """Whether an entity with head ``head`` agrees with the lowercase ``pronoun`` in person
    and number; ``group``: the entity is also the last of coordinated entities (``a man
    and a woman``), which ``they`` stands for together."""
    if pronoun in PERSONAL:
        return is_person(head) or is_animal(head)
    if pronoun in PLURAL:
        return group or is_plural(head)
    return not is_person(head) and not is_plural(head)
