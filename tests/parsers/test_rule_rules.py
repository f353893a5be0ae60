"""The ``rule`` parser's named rules: each is documented, listed once, and applies to the
construction its name says; a new rule is one function added to a list."""

from __future__ import annotations

import functools

import pytest

from parsers import rule_attachment, rule_chunking
from parsers.rule import RuleParser
from parsers.rule_chunking import Chunker

PARSER = RuleParser()

ATTACH_LISTS = {
    "link": "NP_LINK_RULES",
    "subject": "SUBJECT_RULES",
}


def all_rules() -> list[tuple[str, object]]:
    """(list, rule) for every rule of every list."""
    found = [("chunk", r) for r in rule_chunking.CHUNK_RULES]
    found += [("attach", r) for rules in rule_attachment.ATTACH_RULES.values() for r in rules]
    found += [(where, r) for where, name in ATTACH_LISTS.items()
              for r in getattr(rule_attachment, name)]
    return found


#: (list, rule name) -> a text whose parse applies that rule
EXAMPLES = {
    ("chunk", "detached_possessive"): "the man 's hat",
    ("chunk", "quoted_name"): "the sign \" stop \" on a pole",
    ("chunk", "quoted_words"): "a shirt that says \" hello \"",
    ("chunk", "punctuation"): "the cat , the dog .",
    ("chunk", "picture_frame"): "a photo of a dog on a couch",
    ("chunk", "there_is"): "There is a cat on the table",
    ("chunk", "subject_pronoun"): "A man and a woman sit on a bench. They smile at a dog.",
    ("chunk", "partitive_of"): "a pair of scissors on the desk",
    ("chunk", "attribute_list_comma"): "a red , white and blue flag on the pole",
    ("chunk", "attribute_coordination"): "a black and white cat on the mat",
    ("chunk", "compound_noun"): "a teddy bear on the bed",
    ("chunk", "adverb_before_relation"): "the lamp directly above the table",
    ("chunk", "light_verb_before_comparison"): "the square that has the same color as the cross",
    ("chunk", "participle_after_noun"): "two women sitting together",
    ("chunk", "participle_ending_where_clause"): "the chair where the kid is sitting",
    ("chunk", "participle_with_particle"): "a woman setting down a plate",
    ("chunk", "participle_and_particle_after_noun"): "a street light turned off .",
    ("chunk", "particle_ending_a_verb"): "a dog running away",
    ("chunk", "set_after_noun"): "a clock set into the bricks",
    ("chunk", "one_another"): "three pots near one another on a table",
    ("chunk", "participle_after_comma_ending_sentence"): "a woman on a bench , relaxing .",
    ("chunk", "participle_inside_noun_phrase"): "a cozy looking room with a table",
    ("chunk", "particle_inside_noun_phrase"): "a broken off branch on the path",
    ("chunk", "posture_of_part"): "a dog with its tongue out",
    ("chunk", "verb_after_coordinated_subject"): "A black dog and a white dog play",
    ("chunk", "relation_phrase"): "The bench is at the right side of the train.",
    ("chunk", "copula"): "The cat is under the laptop.",
    ("chunk", "negation"): "The cat is not under the laptop.",
    ("chunk", "relative_pronoun"): "the cup that is on the table",
    ("chunk", "conjunction"): "a dog and a cat",
    ("chunk", "as_well_as"): "a cup as well as a plate",
    ("chunk", "partitive_determiner"): "two of the buildings near the river",
    ("chunk", "determiner"): "the cup",
    ("chunk", "unknown_participle_before_preposition"): "a man kitesurfing on the lake",
    ("chunk", "one_after_plural"): "two girls one in a red coat",
    ("chunk", "unknown_adverb"): "two boats floating apart",
    ("chunk", "here_and_there"): "a field with tufts of weeds here and there",
    ("chunk", "what_appears_to_be"): "a cat in what looks like a basket",
    ("chunk", "adverbial_idiom"): "the jacket is grey in color",
    ("chunk", "floating_each"): "a boy and a girl each holding a kite",
    ("chunk", "infinitive"): "a girl about to bite into an apple",
    ("chunk", "content_word"): "the cup",
    ("attach", "attributes_after_copula"): "the banana is yellow",
    ("attach", "it_of_has_on_it"): "the wall has a clock on it",
    ("attach", "position_without_whole"): "the man on the right holding a cup",
    ("attach", "colour_after_verb"): "a fence painted white next to a barn",
    ("attach", "colour_after_in"): "the word stop in red on a sign",
    ("attach", "pronoun_object"): "a cat sitting on a box and chasing a mouse under it",
    ("attach", "pronoun_subject"): "A man holds a cup. He is standing on a rug.",
    ("attach", "noun_phrase"): "the cup",
    ("attach", "verb_of_prepositional_relative"): "the branch on which a bird sits",
    ("attach", "preposition_before_which"): "the branch on which a bird sits",
    ("attach", "verb_of_object_relative"): "the dog that the man is holding",
    ("attach", "coordinated_relation_phrase"): "the cup next to and to the left of the plate",
    ("attach", "has_y_on_it"): "a wall with a clock on it",
    ("attach", "relation_awaiting_object"): "the cup on the table",
    ("attach", "copula"): "The cat is under the laptop.",
    ("attach", "second_relative_clause"):
        "the dog that the man is holding and that is near the car",
    ("attach", "relative_pronoun"): "the cup that is on the table",
    ("attach", "conjunction"): "a dog and a cat",
    ("attach", "sentence_end"): "The cat is on the mat. The dog is under the table.",
    ("attach", "list_comma"): "a dog , a cat and a bird on a couch",
    ("attach", "there_is"): "There is a cat on the table",
    ("link", "object_of_sentence_initial_relation"): "To the left of the plate is a cup",
    ("link", "complement_of_copula"): "the cat is a pet",
    ("link", "object_of_relation"): "the cup on the table",
    ("link", "subordinate_clause_subject"): "a dog waits while the man eats a sandwich",
    ("link", "coordinated_clause"): "a cup on a plate and a fork is near the plate",
    ("link", "coordinated_object"): "the cup left of the plate and the bowl",
    ("link", "coordinated_subject"): "A dog and a cat on a couch",
    ("link", "coordinated_noun_phrase"): "a dog and a cat",
    ("link", "subject_of_object_relative"): "the dog that the man is holding",
    ("link", "subject_after_sentence_initial_relation"): "To the left of the plate is a cup",
    ("link", "first_noun_phrase_is_root"): "the cup",
    ("link", "sentence_subject"): "The cat is on the mat. The dog is under the table.",
    ("subject", "subject_of_relative_clause"): "the cup that is on the table",
    ("subject", "subject_of_copula"): "The cat is under the laptop.",
    ("subject", "subject_after_aside"): "a bear , holding a cup with a lid on it , next to a lamp",
    ("subject", "subject_of_coordinated_relation"):
        "the cup that is on the plate that is near the fork and left of the knife",
    ("subject", "participle_after_prepositional_object"): "the man next to the car wearing a hat",
    ("subject", "subject_after_y_on_it"): "a cup with a lid on it sits on a table",
    ("subject", "subject_of_finite_verb"): "the tray near the boy eating soup has a cup on it",
    ("subject", "subject_of_purpose"): "a boy climbing a tree to reach a kite",
    ("subject", "subject_after_quoted_words"): "a board that reads \" open \" on a door",
    ("subject", "subject_after_likeness"): "a cloud shaped like a heart above a tower",
    ("subject", "subject_of_head_before_of"): "a mug of tea on the desk",
    ("subject", "subject_described_after_object"): "a boy hitting a ball with a bat",
    ("subject", "subject_placed_in_scene"): "a girl throwing a ball on the beach",
    ("attach", "worn_with_on"): "a skier with a red helmet on",
    ("attach", "verb_of_relative_without_pronoun"): "the hat the man is wearing",
    ("subject", "worn_over_worn"): "a man wearing a vest over a shirt",
    ("attach", "time_after_preposition"): "a lighthouse at night",
    ("attach", "manner_of_relation"): "two cows facing the same direction",
    ("attach", "role_after_posture"): "a lamp stands guard by the door",
    ("attach", "attribute_after_linking_verb"): "a tower stands tall against the sky",
    ("subject", "subject_beside_on_ground"): "a cup on the floor near a chair",
    ("subject", "subject_after_formation"): "jars in a row on a shelf",
    ("subject", "subject_of_with_possessed"): "people on a sidewalk with their phones",
    ("subject", "nearest_noun_phrase"): "the cup left of the plate on the table",
}


#: word salad of the words the gated rules look at, each after many kinds of chunk
SALAD = [" ".join(words) for words in (
    "the and of as there 's a that is not was can be has been".split(),
    "is has been , which who and or the an as well as with the same color as".split(),
    "a man 's hat directly above very the of two of the pairs of is located on".split(),
    "cat not is and that is and which are there are a photo of a dog".split(),
)]


@pytest.fixture
def applied(monkeypatch) -> set[tuple[str, str]]:
    """Record (list, rule name) of every rule that applies while parsing."""
    seen: set[tuple[str, str]] = set()

    def spy(where: str, rule, subject: bool = False):
        @functools.wraps(rule)  # keeps the ``words`` a chunking rule declares
        def wrapper(*args):
            result = rule(*args)
            if (result is not None) if subject else result:
                seen.add((where, rule.__name__))
            return result
        return wrapper

    monkeypatch.setattr(rule_chunking, "CHUNK_RULES",
                        [spy("chunk", r) for r in rule_chunking.CHUNK_RULES])
    monkeypatch.setattr(rule_attachment, "ATTACH_RULES",
                        {k: [spy("attach", r) for r in rules]
                         for k, rules in rule_attachment.ATTACH_RULES.items()})
    for where, name in ATTACH_LISTS.items():
        monkeypatch.setattr(rule_attachment, name,
                            [spy(where, r, where == "subject")
                             for r in getattr(rule_attachment, name)])
    return seen


def test_every_rule_is_named_documented_listed_once_and_has_an_example():
    keys = [(where, r.__name__) for where, r in all_rules()]
    assert len(keys) == len(set(keys))
    for _, r in all_rules():
        assert not r.__name__.startswith("_") and r.__doc__ and r.__doc__.strip(), r
    assert set(keys) == set(EXAMPLES)


@pytest.mark.parametrize("key", sorted(EXAMPLES), ids=lambda k: f"{k[0]}-{k[1]}")
def test_each_rule_applies_to_its_example(key, applied):
    PARSER.analyse(EXAMPLES[key])
    assert key in applied


def test_the_last_rules_always_apply():
    assert rule_chunking.CHUNK_RULES[-1] is rule_chunking.content_word
    assert rule_attachment.SUBJECT_RULES[-1] is rule_attachment.nearest_noun_phrase
    assert rule_attachment.ATTACH_RULES[rule_chunking.NP][-1] is rule_attachment.noun_phrase


def test_a_declared_word_list_covers_every_word_the_rule_applies_to():
    """``only_for`` is a speed-up: tried at every word, no rule applies at other words."""
    gated = {r.__name__: r.words for r in rule_chunking.CHUNK_RULES if hasattr(r, "words")}
    assert gated
    outside: list[tuple[str, str]] = []

    def check(rule):
        words = rule.words

        def tried_everywhere(s: Chunker) -> bool:
            result = rule(s)
            if result and s.w not in words:
                outside.append((rule.__name__, s.w))
            return result
        return tried_everywhere

    rules = [check(r) if hasattr(r, "words") else r for r in rule_chunking.CHUNK_RULES]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rule_chunking, "CHUNK_RULES", rules)
        for text in [*EXAMPLES.values(), *SALAD]:
            PARSER.analyse(text)
    assert not outside


def test_a_new_rule_is_one_function_added_to_a_list(monkeypatch):
    def zorp_relation(s: Chunker) -> bool:
        """``zorp`` is a relation."""
        if s.w != "zorp":
            return False
        s.close_np(s.i)
        s.add_relation(s.i + 1, False)
        return True

    before = PARSER.parse("the cup zorp the plate")
    assert [r.text for r in before.relations] != ["zorp"]
    rules = list(rule_chunking.CHUNK_RULES)
    rules.insert(rules.index(rule_chunking.content_word), zorp_relation)
    monkeypatch.setattr(rule_chunking, "CHUNK_RULES", rules)
    g = PARSER.parse("the cup zorp the plate")
    assert [(g.entities[r.subject].text, r.text, g.entities[r.object].text)
            for r in g.relations] == [("the cup", "zorp", "the plate")]
