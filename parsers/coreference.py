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

from collections.abc import Callable, Sequence
from functools import partial

from parsers.lexicon import (
    CANONICAL_HEADS,
    CLOTHING_NOUNS,
    OWNED_PART_NOUNS,
    PARTITIVE_NOUNS,
    WEARER_NOUNS,
    lexicon_form,
)
from parsers.noun_classes import DEPICTION_NOUNS, is_abstract, is_modifier
from parsers.paragraph import (
    JOINERS,
    fronted_place,
    inverted_place,
    paragraph_relation,
    possessed_by,
)
from parsers.scene import SceneEntity, SceneGraph, SceneRelation
from rcrn.structures import Entity, LanguageGraph, Relation

__all__ = ["ANIMALS", "PRONOUNS", "REFLEXIVE", "SETTING_PLACES", "SUBJECT_PRONOUNS",
           "POSSESSIVE_PRONOUNS", "agrees", "is_animal", "is_person", "is_plural",
           "merge_sentences"]

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


# ------------------------------------------------------------ scene mode
_DEFINITE = frozenset({"the", "this", "that", "these", "those"})
_ORDINALS = {"first": 0, "second": 1, "third": 2, "fourth": 3, "fifth": 4}
_COLOURS = frozenset({"red", "orange", "yellow", "green", "blue", "purple", "pink", "brown",
                      "black", "white", "gray", "grey", "silver", "gold", "golden", "beige",
                      "tan", "navy", "maroon", "blond", "blonde", "striped", "spotted"})


#: modifiers that tell mentions apart rather than describe the entity
_REFERRING_WORDS = frozenset({"other", "another", "same", *_ORDINALS})


def _attributes(e: Entity) -> list[str]:
    return [m for m in dict.fromkeys(e.modifiers) if m.lower() not in _REFERRING_WORDS]


class _Scene:
    """The entities and relations merged so far, and where each entity was last named."""

    def __init__(self) -> None:
        self.tokens: list[str] = []
        self.entities: list[SceneEntity] = []
        self.relations: list[SceneRelation] = []
        self.last_seen: list[int] = []
        self.edges: set[tuple[int, str, int]] = set()
        self.subject = -1  # the entity the previous sentence is about (its root)
        self.aliases: dict[int, int] = {}  # entities that name another (`its structure`)

    def add_mention(self, target: int, e: Entity, offset: int) -> int:
        span = (e.span[0] + offset, e.span[1] + offset)
        if target < 0:
            self.entities.append(SceneEntity(e.head, _attributes(e), e.text, [span]))
            self.last_seen.append(span[0])
            return len(self.entities) - 1
        ent = self.entities[target]
        ent.mentions.append(span)
        ent.attributes.extend(m for m in _attributes(e) if m not in ent.attributes)
        self.last_seen[target] = span[0]
        return target

    def add_relation(self, subject: int, r: Relation, obj: int, offset: int) -> None:
        key = (subject, r.text.lower(), obj)
        if r.text and key not in self.edges:
            self.edges.add(key)
            self.relations.append(SceneRelation(subject, r.text, obj,
                                                (r.span[0] + offset, r.span[1] + offset)))

    def recent(self, keep: Callable[[int], bool]) -> list[int]:
        """Entities for which ``keep`` holds, the most recently named first."""
        found = [k for k in range(len(self.entities)) if keep(k)]
        return sorted(found, key=lambda k: -self.last_seen[k])


def _partners(g: LanguageGraph, i: int, mapped: dict[int, int]) -> set[int]:
    """Scene entities already merged that the sentence relates directly to its entity ``i``."""
    out = set()
    for r in g.relations:
        if r.subject == i and r.object in mapped:
            out.add(mapped[r.object])
        elif r.object == i and r.subject in mapped:
            out.add(mapped[r.subject])
    return out


def _pronoun_target(scene: _Scene, e: Entity, first: bool, mapped: dict[int, int],
                    exclude: set[int], here: int) -> int:
    """The entity a pronoun mention stands for, -1 if none agrees.  A pronoun the sentence's
    parse already resolved (its head is its antecedent's) is the nearest entity of that
    head named in the sentence; any other one stands for the subject of the previous
    sentence if it opens the sentence and agrees, else for the nearest agreeing entity
    named before the sentence."""
    word = e.text.lower()
    if e.head.lower() not in (word, CANONICAL_HEADS.get(word)):
        same = [mapped[j] for j in sorted(mapped, reverse=True)
                if scene.entities[mapped[j]].head.lower() == e.head.lower()
                and (word in REFLEXIVE or mapped[j] not in exclude)]
        if same:
            return same[0]
    subject = scene.subject
    if first and 0 <= subject < here and agrees(word, scene.entities[subject].head) \
            and not is_abstract(scene.entities[subject].head):
        return subject
    for k in scene.recent(lambda k: k < here and k not in exclude):
        head = scene.entities[k].head
        if head.lower() not in PRONOUNS and agrees(word, head) and not is_abstract(head):
            return k
    return -1


def _definite_target(scene: _Scene, e: Entity, exclude: set[int]) -> int:
    """The entity a definite noun phrase (``the dog``) names again: the most recently named
    one of the same head (and number) whose colour does not contradict it; ``the second
    dog`` the second one named, ``the other dog`` the one named before the latest.  -1
    (a new entity) if none."""
    words = e.text.lower().split()
    if not words or words[0] not in _DEFINITE:
        return -1
    head = e.head.lower()
    found = scene.recent(lambda k: k not in exclude and scene.entities[k].head.lower() == head)
    for w in words:
        if w in _ORDINALS:
            order = sorted(found)
            return order[_ORDINALS[w]] if _ORDINALS[w] < len(order) else -1
    if "other" in words:
        return found[1] if len(found) >= 2 else -1
    colours = {w for w in (*words, *(m.lower() for m in e.modifiers)) if w in _COLOURS}
    for k in found:
        known = {a.lower() for a in scene.entities[k].attributes} & _COLOURS
        if not colours or not known or colours & known:
            return k
    return -1


def merge_sentences(text: str, graphs: Sequence[LanguageGraph]) -> SceneGraph:
    """The scene graph of ``text`` from the graphs of its sentences, in order.

    Each mention is an entity named before when it corefers with it: a pronoun
    (:func:`agrees`) stands for the subject of the previous sentence or the nearest
    agreeing entity; a definite noun phrase (``the dog``) for the latest entity of the
    same head and number; any other mention (``a dog``, ``another dog``, ``two dogs``) is a
    new entity.  Relations of every sentence join the merged entities; the empty relations
    a tree parse adds to connect what nothing links are left out.  Entities whose head
    names no visible thing (:func:`parsers.noun_classes.is_abstract`: ``the image``, ``a
    sense of calm``) are left out with their relations, and no pronoun stands for them; so
    are places and things named by a proper name (``a street in India``).
    """
    scene = _Scene()
    for g in graphs:
        offset = len(scene.tokens)
        scene.tokens.extend(g.tokens)
        here = len(scene.entities)
        mapped: dict[int, int] = {}
        order = sorted(range(len(g.entities)), key=lambda i: g.entities[i].span)
        for n, i in enumerate(order):
            e = g.entities[i]
            exclude = _partners(g, i, mapped)
            if e.text.lower() in PRONOUNS:
                target = _pronoun_target(scene, e, n == 0, mapped, exclude, here)
            else:
                target = _definite_target(scene, e, exclude)
            mapped[i] = scene.add_mention(target, e, offset)
        added = len(scene.relations)
        relations, inverted = _uninverted(g)
        relations = _shared_by_conjuncts(g, relations)
        relations = _participles_of_things(scene, g, relations, mapped)
        for r in relations:
            _add_paragraph_relation(scene, g, r, mapped, offset)
        _possessions(scene, g, mapped, offset, added)
        if not inverted:
            _fronted_place(scene, g, mapped, offset, added)
        root = mapped.get(g.root, -1)
        if root < 0 or not is_abstract(scene.entities[root].head):
            scene.subject = root  # a sentence about the picture (`The scene is calm`) keeps it
    graph = _merged(SceneGraph(text, scene.tokens, scene.entities, scene.relations),
                    scene.aliases)
    return _depicted(_wholes_of_partitives(graph))


#: parts that hold what is in them (``a cup in her hand``: she holds the cup)
HOLDING_PARTS = frozenset({"hand", "hands", "grasp", "grip", "fist", "fists", "palm", "palms",
                           "arms", "mouth", "jaws", "paw", "paws"})

#: nouns that, after a possessive determiner, name their owner itself (``a tower, its white
#: structure rising``: the tower is white)
SELF_NOUNS = frozenset({"structure", "form", "shape", "silhouette", "outline", "exterior",
                        "figure", "frame"})

#: nouns of what a thing is among or bound for, or of how it is made, that a possessive
#: does not make a part or possession of it (``its surroundings``, ``its companion``, ``its
#: design``): no ``has``
UNOWNED_NOUNS = frozenset({"surroundings", "surrounding", "world", "companion", "partner",
                           "destination", "journey", "path", "place", "space", "home",
                           "occupant", "neighbor", "neighbour", "design", "architecture",
                           "ensemble", "pattern", "composition", "arrangement"})


def _participles_of_things(scene: _Scene, g: LanguageGraph, relations: list[Relation],
                           mapped: dict[int, int]) -> list[Relation]:
    """``relations`` with a participle the parse gave to an abstract subject (``The image
    shows a dog running on the beach``: the image runs) given to the nearest thing that
    subject relates to before it (the dog)."""
    def thing(i: int) -> bool:
        return not is_abstract(scene.entities[mapped[i]].head)

    out = []
    for r in relations:
        first = r.text.lower().split()[:1]
        if first and first[0].endswith("ing") and not thing(r.subject):
            objects = {q.object for q in relations if q.subject == r.subject and q is not r}
            before = [i for i, e in enumerate(g.entities)
                      if e.span[1] <= r.span[0] and i != r.object and thing(i)
                      and i in objects]
            if before:
                nearest = max(before, key=lambda i: g.entities[i].span[1])
                r = Relation(subject=nearest, object=r.object, text=r.text, span=r.span)
        out.append(r)
    return out


#: phrases that add a thing to the one before as ``and`` does (``a shirt along with a
#: hat``, ``a jacket paired with jeans``)
ADDING_PHRASES = frozenset({"along with", "together with", "paired with", "as well as",
                            "coupled with"})


def _added_conjunct(g: LanguageGraph, relations: list[Relation], r: Relation) -> Relation:
    """``r`` (A ``along with`` B) as the relation B shares with the thing before it: A's
    latest relation before ``r`` (``wearing a shirt along with a hat``: the hat is worn), or
    the relation to A (``adorned with bows , along with ribbons``); else no relation (``a
    snowbank , along with trees``)."""
    def says_something(q: Relation) -> bool:      # a relation, not a joining word
        return q is not r and bool(q.text) and q.text.lower() not in ADDING_PHRASES \
            and q.text.lower() not in JOINERS

    before = [q for q in relations if q.subject == r.subject and says_something(q)
              and g.entities[q.object].span[1] <= r.span[0]
              and not is_abstract(g.entities[q.object].head)]
    if before:
        q = max(before, key=lambda q: g.entities[q.object].span[1])
        return Relation(subject=r.subject, object=r.object, text=q.text,
                        span=(r.span[0], r.span[0]))
    into = [q for q in relations if q.object == r.subject and says_something(q)]
    if into:
        return Relation(subject=into[0].subject, object=r.object, text=into[0].text,
                        span=(r.span[0], r.span[0]))
    return Relation(subject=r.subject, object=r.object, text="", span=r.span)


def _shared_by_conjuncts(g: LanguageGraph, relations: list[Relation]) -> list[Relation]:
    """``relations`` with each ``and`` from A to B that follows A's relation to the conjunct
    right before the ``and`` made that relation (``a boy in a shirt and jeans``: the boy
    wears the jeans too)."""
    out = []
    for r in relations:
        if r.text.lower() in ADDING_PHRASES:
            r = _added_conjunct(g, relations, r)
        elif r.text.lower() in JOINERS:
            before = [q for q in relations if q.subject == r.subject and q is not r
                      and q.text.lower() and q.text.lower() not in JOINERS
                      and g.entities[q.object].span[1] == r.span[0]]
            if before:
                r = Relation(subject=r.subject, object=r.object, text=before[0].text,
                             span=(r.span[0], r.span[0]))
        out.append(r)
    return out


def _uninverted(g: LanguageGraph) -> tuple[list[Relation], bool]:
    """The relations of a sentence, turned around where it is in locative inversion
    (:func:`parsers.paragraph.inverted_place`: ``Above the sink hangs a mirror``: the mirror
    hangs above the sink, and what the parse said of the place after the mirror is said of
    the mirror), and whether it was."""
    spans = [e.span for e in g.entities]
    found = inverted_place(g.tokens, spans,
                           [(r.subject, r.text, r.object, r.span) for r in g.relations])
    if found is None:
        return list(g.relations), False
    k, phrase = found
    verb = g.relations[k]
    place, thing = verb.subject, verb.object
    out = []
    for j, r in enumerate(g.relations):
        if j == k:
            r = Relation(subject=thing, object=place, text=phrase, span=(r.span[0], r.span[0]))
        elif r.subject == place and r.span[0] > spans[thing][0] and r.object != thing:
            r = Relation(subject=thing, object=r.object, text=r.text, span=r.span)
        out.append(r)
    return out, True


#: the last words of a relation of looking or moving toward the viewer, or away from it
_TOWARD_WORDS = frozenset({"at", "into", "toward", "towards", "from", "for", "to", "facing",
                           "faces", "face", "meeting", "meets", "onto", "by"})


def _toward_the_camera(words: list[str], obj_text: str) -> bool:
    """Whether the relation ``words`` turns its subject to, or away from, the camera that
    took the picture (``looks straight at the camera``, ``walks away from the camera``,
    ``faces the camera``, ``captured by the camera``): that camera is the viewer, not a
    thing in the picture (``a camera on a tripod``, ``in front of a camera`` stay)."""
    return obj_text.lower() == "the camera" and bool(words) and words[-1] in _TOWARD_WORDS


def _add_paragraph_relation(scene: _Scene, g: LanguageGraph, r: Relation,
                            mapped: dict[int, int], offset: int) -> None:
    """Add a relation of a sentence as a paragraph's scene graph writes it
    (:func:`parsers.paragraph.paragraph_relation`)."""
    subject, obj = mapped[r.subject], mapped[r.object]
    if _toward_the_camera(r.text.lower().split(), g.entities[r.object].text):
        return  # `looks straight at the camera`: the picture's own camera, its viewer
    if r.text.lower() == "has" and r.span[0] < len(g.tokens) \
            and g.tokens[r.span[0]].lower() == "of" \
            and not any(lexicon_form(_last_word(scene.entities[obj].head), words)
                        for words in (OWNED_PART_NOUNS, PARTITIVE_NOUNS, SCENE_PARTITIVES)):
        return  # `the beauty of the city`, `a portrait of a city`: no part of it
    changed = paragraph_relation(r.text.lower().split(), scene.entities[subject].head,
                                 scene.entities[obj].head)
    if changed is not None:
        text, swap = changed
        r = Relation(subject=r.subject, object=r.object, text=text, span=(r.span[0], r.span[0]))
        if swap:
            subject, obj = obj, subject
    scene.add_relation(subject, r, obj, offset)


def _whole_of(scene: _Scene, part: int, agrees: Callable[[int], bool]) -> int:
    """The thing that has ``part`` where one agreeing with the determiner does (``a pitcher,
    its surface gleaming and its handle curved``: the second ``its`` is the pitcher, not
    its surface), else ``part``."""
    from parsers.conventions import HAS  # conventions imports this module

    for r in scene.relations:
        if r.object == part and r.text == HAS and agrees(r.subject):
            return r.subject
    return part


def _possessions(scene: _Scene, g: LanguageGraph, mapped: dict[int, int], offset: int,
                 added: int) -> None:
    """Give each thing named after a possessive determiner (``its head``) to its owner
    (:func:`parsers.paragraph.possessed_by`); ``added``: the first relation of the
    sentence among the scene's."""
    from parsers.conventions import HAS, WEAR  # conventions imports this module

    starts: dict[int, int] = {}
    for j, e in enumerate(g.entities):
        k = mapped[j]
        starts[k] = min(starts.get(k, e.span[0]), e.span[0])
    for j, e in enumerate(g.entities):
        words = e.text.lower().split()
        if len(words) < 2 or words[0] not in POSSESSIVE_PRONOUNS or is_abstract(e.head) \
                or is_person(e.head) or is_animal(e.head) \
                or lexicon_form(_last_word(e.head), UNOWNED_NOUNS):
            continue
        target = mapped[j]

        def owner_agrees(pronoun: str, k: int, target: int = target) -> bool:
            head = scene.entities[k].head
            return (k != target and head.lower() not in PRONOUNS and not is_abstract(head)
                    and agrees(pronoun, head))

        pronoun = POSSESSIVE_PRONOUNS[words[0]]
        owner = possessed_by(pronoun, e.span[0], mapped.get(g.root, -1), starts,
                             owner_agrees, scene.subject)
        if owner < 0:
            continue
        part = owner
        owner = _whole_of(scene, part, partial(owner_agrees, pronoun))
        if owner != part:  # `its head ..., and its body`: the body is not the head's
            scene.relations[added:] = [q for q in scene.relations[added:]
                                       if (q.subject, q.text, q.object) != (part, HAS, target)]
            scene.edges.discard((part, HAS, target))
        if lexicon_form(_last_word(e.head), SELF_NOUNS):
            scene.aliases[target] = owner  # `its white structure`: the owner itself
            continue
        if lexicon_form(_last_word(e.head), HOLDING_PARTS) and (
                is_person(scene.entities[owner].head) or is_animal(scene.entities[owner].head)):
            # `a racket in his right hand`: he holds the racket
            held = set()
            for k in range(added, len(scene.relations)):
                r = scene.relations[k]
                if r.object == target and r.subject != owner \
                        and r.text.lower().split()[-1:] == ["in"]:
                    scene.relations[k] = SceneRelation(owner, "holding", r.subject,
                                                       (r.span[0], r.span[0]))
                    scene.edges.add((owner, "holding", r.subject))
                    held.add(r.subject)
            scene.relations[added:] = [  # `with a phone in his hand`: held, not had
                q for q in scene.relations[added:]
                if not (q.subject == owner and q.object in held
                        and q.text.lower() in ("has", "with"))]
        owner_head = scene.entities[owner].head
        text = WEAR if is_person(owner_head) and lexicon_form(
            _last_word(scene.entities[target].head), CLOTHING_NOUNS) else HAS
        between = [k for k in range(added, len(scene.relations))
                   if {scene.relations[k].subject, scene.relations[k].object} == {owner, target}]
        for k in between:
            r = scene.relations[k]
            gap = scene.tokens[r.span[1]:e.span[0] + offset]
            if r.subject == owner and r.object == target and "," in gap:
                scene.relations[k] = SceneRelation(owner, text, target, (r.span[0], r.span[0]))
                scene.edges.add((owner, text, target))
        if not any(scene.relations[k].text in (HAS, WEAR) for k in between):
            scene.add_relation(owner, Relation(subject=0, object=0, text=text,
                                               span=(e.span[0], e.span[0])), target, offset)


#: places of a whole picture (a city, a landscape): an opening place phrase naming one sets
#: the scene, and the things after its comma are not related to it
SETTING_PLACES = frozenset({"city", "town", "village", "metropolis", "cityscape", "landscape",
                            "countryside", "wilderness", "world", "habitat", "wonderland",
                            "park", "zoo"})


def _fronted_place(scene: _Scene, g: LanguageGraph, mapped: dict[int, int], offset: int,
                   added: int) -> None:
    """Place the subjects of a sentence that opens with a place phrase
    (:func:`parsers.paragraph.fronted_place`); ``added``: the first relation of the sentence
    among the scene's.  The relations the sentence's parse made from the opening
    preposition to the place are replaced; a place of the whole picture
    (:data:`SETTING_PLACES`: ``In the heart of a bustling city, ...``) relates nothing."""
    def thing(i: int) -> bool:
        head = scene.entities[mapped[i]].head
        return not is_abstract(head)

    def animate(i: int) -> bool:
        head = scene.entities[mapped[i]].head
        return is_person(head) or is_animal(head)

    found = fronted_place(g.tokens, [e.span for e in g.entities], thing, animate)
    if found is None:
        return
    preposition, place, subjects = found
    target = mapped[place]
    setting = _last_word(scene.entities[target].head).lower() in SETTING_PLACES
    opening = offset  # the opening preposition's token in the scene
    replaced = [r for r in scene.relations[added:]
                if r.object == target and r.span[0] == opening]
    scene.relations[added:] = [r for r in scene.relations[added:] if r not in replaced]
    scene.edges -= {(r.subject, r.text.lower(), r.object) for r in replaced}
    if setting:
        return  # "In the heart of a bustling city, a bus ...": where the whole picture is
    for i in subjects:
        scene.add_relation(mapped[i], Relation(subject=0, object=0, text=preposition,
                                               span=(0, 0)), target, offset)


def _proper_name(graph: SceneGraph, e: SceneEntity) -> bool:
    """Whether an entity is named by a proper name (``India``, ``Main Street``): its head
    capitalised, not an acronym (``TV``), and its first mention not opening a sentence."""
    head = e.head.split()[-1] if e.head.split() else ""
    if not head[:1].isupper() or head.isupper() or not e.mentions:
        return False
    start = e.mentions[0][0]
    return start > 0 and graph.tokens[start - 1] not in (".", "!", "?")


#: more nouns whose ``of`` names what they are made of in a description: clothing as a
#: whole (``his attire of a t-shirt and jeans``) and mixtures (``a mix of old and new
#: buildings``, ``a sea of tents``)
SCENE_PARTITIVES = frozenset({"attire", "outfit", "ensemble", "mix", "blend", "combination",
                              "mosaic", "tapestry", "sea", "carpet", "medley", "spread",
                              "selection", "arrangement", "multitude", "myriad", "abundance"})


def _wholes_of_partitives(graph: SceneGraph) -> SceneGraph:
    """``graph`` with each partitive named right before ``of`` (``a tranquil body of
    water``, ``a row of trees``; :data:`parsers.lexicon.PARTITIVE_NOUNS`) merged into the
    whole after it: its relations and attributes are the whole's, as where such a phrase
    opens a sentence."""
    alias: dict[int, int] = {}
    tokens = [t.lower() for t in graph.tokens]
    for r in graph.relations:
        part, whole = graph.entities[r.object], graph.entities[r.subject]
        if r.text.lower() != "has" or r.object in alias or r.subject in alias \
                or not (lexicon_form(_last_word(part.head), PARTITIVE_NOUNS)
                        or lexicon_form(_last_word(part.head), SCENE_PARTITIVES)):
            continue
        if any(m[1] < len(tokens) and tokens[m[1]] == "of" and any(
                n[0] == m[1] + 1 for n in whole.mentions) for m in part.mentions):
            alias[r.object] = r.subject
    return _merged(graph, alias)


def _merged(graph: SceneGraph, alias: dict[int, int]) -> SceneGraph:
    """``graph`` with each entity of ``alias`` merged into the one it names: its mentions,
    attributes and relations are that entity's."""
    if not alias:
        return graph

    def final(i: int) -> int:
        seen = {i}
        while i in alias and alias[i] not in seen:
            i = alias[i]
            seen.add(i)
        return i

    alias = {part: final(part) for part in alias if final(part) != part}
    keep = [i for i in range(len(graph.entities)) if i not in alias]
    index = {i: k for k, i in enumerate(keep)}
    for part, whole in alias.items():
        index[part] = index[whole]
        target = graph.entities[whole]
        target.attributes.extend(a for a in graph.entities[part].attributes
                                 if a not in target.attributes)
        target.mentions.extend(graph.entities[part].mentions)
    relations, seen = [], set()
    for r in graph.relations:
        key = (index[r.subject], r.text.lower(), index[r.object])
        if key[0] != key[2] and key not in seen:
            seen.add(key)
            relations.append(SceneRelation(key[0], r.text, key[2], r.span))
    return SceneGraph(graph.text, graph.tokens, [graph.entities[i] for i in keep], relations)


#: nouns of being off the ground (``caught in mid-air``, ``a frisbee mid-flight``): a state
#: of what is in it, not a thing one sees
AIRBORNE_NOUNS = frozenset({"mid-air", "midair", "mid-flight", "midflight"})


def _airborne(graph: SceneGraph, e: SceneEntity) -> bool:
    """Whether ``e`` is a state of being off the ground: ``mid-air``, ``mid-flight``, or
    ``flight`` right after ``in`` (``a gull in flight``; ``a flight of stairs`` is a
    thing)."""
    head = e.head.lower()
    if head in AIRBORNE_NOUNS:
        return True
    return head == "flight" and e.text.lower() == "flight" and bool(e.mentions) \
        and e.mentions[0][0] > 0 and graph.tokens[e.mentions[0][0] - 1].lower() == "in"


def _airborne_states(graph: SceneGraph) -> set[int]:
    """The entities that name being off the ground (:func:`_airborne`); what is related to
    one takes it as an attribute (``a frisbee captured in mid-flight``: the frisbee is
    ``mid-flight``), as DiscoSG writes it."""
    states = {i for i, e in enumerate(graph.entities) if _airborne(graph, e)}
    for r in graph.relations:
        if r.object in states and r.subject not in states:
            word = graph.entities[r.object].head.lower()
            if word != "flight":
                attributes = graph.entities[r.subject].attributes
                if word not in attributes:
                    attributes.append(word)
    return states


def _absent(e: SceneEntity) -> bool:
    """Whether ``e`` is named only as not there: ``no`` opens its first mention (``there
    are no clouds in the sky``, ``no other people``)."""
    words = e.text.lower().split()
    return len(words) > 1 and words[0] == "no"


#: nouns of a part of a whole's extent: of the picture they are regions of it (``the left
#: side of the image``, ``the top edge of the frame``)
EXTENT_NOUNS = frozenset({"side", "sides", "edge", "edges", "top", "bottom", "half", "end",
                          "part", "portion", "section", "area", "quadrant", "third"})


def _regions_of_picture(graph: SceneGraph) -> set[int]:
    """The entities that name a part of the picture's extent (:data:`EXTENT_NOUNS` before
    ``of`` and the picture: ``She faces the left side of the image``): regions of the
    picture, where a thing is, no thing; a side of a thing (``the side of the bus``) stays
    one."""
    tokens, out = graph.tokens, set()
    for i, e in enumerate(graph.entities):
        if e.head.lower() not in EXTENT_NOUNS or not e.mentions:
            continue
        k = e.mentions[0][1]
        if k + 1 < len(tokens) and tokens[k].lower() == "of":
            k += 1
            while k < len(tokens) and tokens[k].lower() in ("the", "this", "that", "its"):
                k += 1
            if k < len(tokens) and tokens[k].lower() in DEPICTION_NOUNS:
                out.add(i)
    return out


def _depicted(graph: SceneGraph) -> SceneGraph:
    """``graph`` without the entities whose head is abstract or a proper name, or that
    name being off the ground (:func:`_airborne_states`), and their relations."""
    states = _airborne_states(graph) | _regions_of_picture(graph)
    keep = [i for i, e in enumerate(graph.entities)
            if not is_abstract(e.head) and not _proper_name(graph, e) and i not in states
            and not _absent(e)]
    if len(keep) == len(graph.entities):
        return graph
    index = {i: k for k, i in enumerate(keep)}
    relations = [SceneRelation(index[r.subject], r.text, index[r.object], r.span)
                 for r in graph.relations if r.subject in index and r.object in index]
    seen = {(r.subject, r.text.lower(), r.object) for r in relations}
    for d, e in enumerate(graph.entities):
        # an adjective a parse took for the object of a verb bridges the verb to the
        # preposition after it: `a sign standing tall on a pole` -> standing on
        if d in index or not (is_modifier(e.head) or d in states):
            continue
        into = [r for r in graph.relations if r.object == d and r.subject in index]
        out = [r for r in graph.relations if r.subject == d and r.object in index]
        for r1 in into[:1]:
            for r2 in out:
                text = f"{r1.text} {r2.text}"
                key = (index[r1.subject], text.lower(), index[r2.object])
                if key not in seen and key[0] != key[2]:
                    seen.add(key)
                    relations.append(SceneRelation(key[0], text, key[2],
                                                   (r1.span[0], r1.span[0])))
    return SceneGraph(graph.text, graph.tokens, [graph.entities[i] for i in keep], relations)
