"""English word classes for words the relation lexicon lacks: verb forms, adverbs and
conjunctions (used by the ``rule`` parser, :mod:`parsers.rule_chunking`).

The table :mod:`parsers.word_class_table` lists, from WordNet 3.0, every single-word
verb lemma and adverb lemma with a class computed from the sense-tagged counts of
WordNet (SemCor, ``cntlist.rev``); :func:`build_table` makes it from a WordNet database
folder (Debian's ``wordnet-base`` installs one at ``/usr/share/wordnet``)::

    python -m parsers.word_classes /usr/share/wordnet > parsers/word_class_table.py

A verb form gets one of three classes (:func:`verb_class`):

* :data:`VERB` – only a verb (``ignores``, ``grabbing``): a relation wherever a verb can
  start one;
* :data:`WEAK` – also a noun or an adjective about as often (``drops``, ``stuffed``):
  a verb only where a verb is expected (after a copula or a relative pronoun) or before
  its object (a determiner, a pronoun, a number);
* :data:`NOUNISH` – mostly a noun or an adjective (``poles``, ``building``): a verb only
  where a verb is expected and its object follows.

Forms are made from the lemmas by the regular rules of English inflection
(:func:`inflections`: ``-s`` / ``-es`` / ``-ies``, ``-ing`` with a final ``e`` dropped or
a final consonant doubled, ``-ed`` likewise), plus the irregular forms of WordNet's
``verb.exc``.  The class of a form weighs the verb's count against the count of the
same spelling as a noun or an adjective (its plural for ``-s`` forms).  Adverbs
(:func:`is_adverb`) are those WordNet uses more often as an adverb than as a noun or an
adjective (``together``, ``apart``, ``closely``); conjunctions (:func:`is_conjunction`)
are a closed list.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

__all__ = ["VERB", "WEAK", "NOUNISH", "CONJUNCTION_WORDS", "SUBORDINATORS",
           "TEMPORAL_SUBORDINATORS", "verb_class", "is_verb_form", "is_adverb",
           "is_conjunction", "inflections", "build_table"]

#: verb-form classes (see the module docstring); 0 means not a verb form
VERB, WEAK, NOUNISH = 1, 2, 3
_CODES = {"V": VERB, "W": WEAK, "N": NOUNISH}

#: coordinating and subordinating conjunctions (a closed class WordNet does not list)
CONJUNCTION_WORDS: frozenset[str] = frozenset({
    "and", "or", "but", "nor", "yet", "while", "whilst", "whereas", "although", "though",
    "because", "plus", "&", "when", "whenever", "if", "unless", "until", "till", "once",
})
#: the conjunctions among them that open a clause of their own (``while``, ``because``)
SUBORDINATORS: frozenset[str] = CONJUNCTION_WORDS - {"and", "or", "but", "nor", "yet", "plus",
                                                     "&"}
#: those of time, after which an ``-ing`` word is the clause's verb (``while texting``)
TEMPORAL_SUBORDINATORS: frozenset[str] = frozenset({"while", "whilst", "when", "whenever",
                                                    "once", "until", "till"})

_VOWELS = frozenset("aeiou")

_forms: dict[str, int] | None = None
_adverbs: frozenset[str] | None = None


def wrap_words(words: Iterable[str], width: int = 88) -> str:
    """``words`` joined by spaces into lines of at most ``width`` characters (the word
    lists of the generated tables)."""
    lines, line = [], ""
    for w in words:
        if len(line) + len(w) + 1 > width:
            lines.append(line)
            line = ""
        line = f"{line} {w}" if line else w
    if line:
        lines.append(line)
    return "\n".join(lines)


def inflections(lemma: str) -> list[str]:
    """The regular inflected forms of a verb lemma (``-s``, ``-ing``, ``-ed``); where a final
    consonant may or may not double (``visit``, ``drop``) both spellings are made."""
    w = lemma
    out: list[str] = []
    # third person
    if w.endswith(("s", "x", "z", "ch", "sh", "o")):
        out.append(w + "es")
    elif len(w) > 1 and w.endswith("y") and w[-2] not in _VOWELS:
        out.append(w[:-1] + "ies")
    else:
        out.append(w + "s")
    double = (len(w) >= 3 and w[-1] not in _VOWELS and w[-1] not in "wxy"
              and w[-2] in _VOWELS and w[-3] not in _VOWELS)
    # present participle
    if w.endswith("ie"):
        out.append(w[:-2] + "ying")
    elif w.endswith("e") and not w.endswith(("ee", "ye", "oe")) and len(w) > 2:
        out.append(w[:-1] + "ing")
    else:
        out.append(w + "ing")
        if double:
            out.append(w + w[-1] + "ing")
    # past
    if w.endswith("e"):
        out.append(w + "d")
    elif len(w) > 1 and w.endswith("y") and w[-2] not in _VOWELS:
        out.append(w[:-1] + "ied")
    else:
        out.append(w + "ed")
        if double:
            out.append(w + w[-1] + "ed")
    return out


def _load() -> tuple[dict[str, int], frozenset[str]]:
    global _forms, _adverbs
    if _forms is None or _adverbs is None:
        from parsers import word_class_table as table

        forms: dict[str, int] = {}
        # weaker classes first: a spelling that is a form of several verbs keeps the
        # strongest verb class any of them gives it
        for code in ("N", "W", "V"):
            cls = _CODES[code]
            for entry in table.VERB_FORMS[code].split():
                forms[entry] = cls
        for entry in table.VERB_LEMMAS.split():
            lemma, _, codes = entry.partition(":")
            base, s, ing, ed = (_CODES[c] for c in codes)
            candidates = [(lemma, base)]
            infl = inflections(lemma)
            candidates.append((infl[0], s))
            for form in infl[1:]:
                candidates.append((form, ing if form.endswith("ing") else ed))
            for form, cls in candidates:
                old = forms.get(form)
                if old is None or cls < old:
                    forms[form] = cls
        _forms = forms
        _adverbs = frozenset(table.ADVERBS.split())
    return _forms, _adverbs


def verb_class(word: str) -> int:
    """:data:`VERB`, :data:`WEAK` or :data:`NOUNISH` for a lowercase verb form, else 0."""
    forms = _forms if _forms is not None else _load()[0]
    return forms.get(word, 0)


def is_verb_form(word: str) -> bool:
    """Whether the lowercase ``word`` is an English verb form of any class."""
    return verb_class(word) != 0


def is_adverb(word: str) -> bool:
    """Whether the lowercase ``word`` is mostly an adverb (``together``, ``apart``)."""
    adverbs = _adverbs if _adverbs is not None else _load()[1]
    return word in adverbs


def is_conjunction(word: str) -> bool:
    """Whether the lowercase ``word`` is a conjunction."""
    return word in CONJUNCTION_WORDS


# ------------------------------------------------------------------ building the table
def _index(path: Path) -> set[str]:
    out = set()
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.startswith(" ") or not line.strip():
                continue
            out.add(line.split(" ", 1)[0])
    return out


def _counts(path: Path) -> dict[tuple[str, str], int]:
    """Tagged counts per (lemma, part of speech) from ``cntlist.rev``."""
    pos_of = {"1": "n", "2": "v", "3": "a", "4": "r", "5": "a"}
    out: dict[tuple[str, str], int] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) != 3 or "%" not in parts[0]:
                continue
            lemma, _, rest = parts[0].partition("%")
            pos = pos_of.get(rest[:1])
            if pos is None:
                continue
            key = (lemma.lower(), pos)
            out[key] = out.get(key, 0) + int(parts[2])
    return out


def _word(w: str) -> bool:
    return w.isalpha() and w.isascii() and w.islower() and len(w) > 1


def _class(verb_count: int, other: int | None) -> str:
    """``V`` without another reading (``W`` for a verb never tagged, which may be a rare
    or archaic use: ``rede``), ``N`` when the other reading is clearly more frequent,
    else ``W``."""
    if other is None:
        return "V" if verb_count > 0 else "W"
    return "N" if other + 1 > 2 * (verb_count + 1) else "W"


def build_table(wordnet_dir: str | Path) -> str:
    """The source of :mod:`parsers.word_class_table` from a WordNet 3.0 database folder
    (``index.verb``, ``index.noun``, ``index.adj``, ``index.adv``, ``verb.exc``,
    ``noun.exc``, ``cntlist.rev``)."""
    root = Path(wordnet_dir)
    missing = [n for n in ("index.verb", "index.noun", "index.adj", "index.adv", "verb.exc",
                           "noun.exc", "cntlist.rev") if not (root / n).is_file()]
    if missing:
        raise FileNotFoundError(f"{root}: not a WordNet database folder (no "
                                f"{', '.join(missing)})")
    verbs = {w for w in _index(root / "index.verb") if _word(w)}
    nouns = _index(root / "index.noun")
    adjectives = _index(root / "index.adj")
    adverbs = {w for w in _index(root / "index.adv") if _word(w)}
    counts = _counts(root / "cntlist.rev")
    irregular_plurals: dict[str, str] = {}  # "shelves" -> "shelf"
    with open(root / "noun.exc", encoding="utf-8") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) >= 2:
                irregular_plurals[parts[0]] = parts[1]

    def other(form: str, plural_of: str | None = None) -> int | None:
        found = []
        if form in nouns:
            found.append(counts.get((form, "n"), 0))
        if form in irregular_plurals:
            found.append(counts.get((irregular_plurals[form], "n"), 0))
        if plural_of is not None and plural_of in nouns:
            found.append(counts.get((plural_of, "n"), 0))
        if form in adjectives:
            found.append(counts.get((form, "a"), 0))
        return max(found) if found else None

    lemmas = []
    for lemma in sorted(verbs):
        v = counts.get((lemma, "v"), 0)
        infl = inflections(lemma)
        ing = [f for f in infl[1:] if f.endswith("ing")]
        ed = [f for f in infl[1:] if not f.endswith("ing")]
        codes = (_class(v, other(lemma)), _class(v, other(infl[0], lemma)),
                 max((_class(v, other(f)) for f in ing), key="VWN".index),
                 max((_class(v, other(f)) for f in ed), key="VWN".index))
        lemmas.append(f"{lemma}:{''.join(codes)}")
    irregular: dict[str, list[str]] = {"V": [], "W": [], "N": []}
    with open(root / "verb.exc", encoding="utf-8") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) < 2 or not _word(parts[0]) or parts[1] not in verbs:
                continue
            v = counts.get((parts[1], "v"), 0)
            irregular[_class(v, other(parts[0]))].append(parts[0])
    adverb_list = []
    for w in sorted(adverbs):
        r = counts.get((w, "r"), 0)
        rivals = [counts.get((w, p), 0) for p, idx in (("n", nouns), ("a", adjectives),
                                                       ("v", verbs)) if w in idx]
        if not rivals or r > max(rivals) or (r == max(rivals) and r > 0 and w.endswith("ly")):
            adverb_list.append(w)

    out = [
        '"""Word classes from WordNet 3.0 for :mod:`parsers.word_classes` (generated by',
        "``python -m parsers.word_classes WORDNET_DIR``; do not edit by hand).",
        "",
        "``VERB_LEMMAS``: ``lemma:CODES`` with one class per form (base, ``-s``, ``-ing``,",
        "``-ed``): ``V`` only a verb, ``W`` also a noun or an adjective, ``N`` mostly a noun or",
        "an adjective.  ``VERB_FORMS``: the irregular forms of ``verb.exc`` by class.",
        "``ADVERBS``: words used more often as adverbs than otherwise.",
        "",
        "WordNet 3.0 Copyright 2006 by Princeton University.  All rights reserved.",
        "",
        "Permission to use, copy, modify and distribute this software and database and its",
        "documentation for any purpose and without fee or royalty is hereby granted, provided",
        "that you agree to comply with the following copyright notice and statements,",
        "including the disclaimer, and that the same appear on ALL copies of the software,",
        "database and documentation, including modifications that you make for internal use",
        "or for distribution.",
        "",
        'THIS SOFTWARE AND DATABASE IS PROVIDED "AS IS" AND PRINCETON UNIVERSITY MAKES NO',
        "REPRESENTATIONS OR WARRANTIES, EXPRESS OR IMPLIED.  BY WAY OF EXAMPLE, BUT NOT",
        "LIMITATION, PRINCETON UNIVERSITY MAKES NO REPRESENTATIONS OR WARRANTIES OF",
        "MERCHANTABILITY OR FITNESS FOR ANY PARTICULAR PURPOSE OR THAT THE USE OF THE LICENSED",
        "SOFTWARE, DATABASE OR DOCUMENTATION WILL NOT INFRINGE ANY THIRD PARTY PATENTS,",
        "COPYRIGHTS, TRADEMARKS OR OTHER RIGHTS.",
        "",
        "The name of Princeton University or Princeton may not be used in advertising or",
        "publicity pertaining to distribution of the software and/or database.  Title to",
        "copyright in this software, database and any associated documentation shall at all",
        "times remain with Princeton University and LICENSEE agrees to preserve same.",
        '"""',
        "",
        "# fmt: off",
        'VERB_LEMMAS = """',
        wrap_words(lemmas),
        '"""',
        "",
        "VERB_FORMS = {",
    ]
    for code in ("V", "W", "N"):
        out += [f'    "{code}": """', wrap_words(sorted(irregular[code])), '""",']
    out += ["}", "", 'ADVERBS = """', wrap_words(adverb_list), '"""', ""]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m parsers.word_classes WORDNET_DIR > parsers/word_class_table.py",
              file=sys.stderr)
        return 2
    try:
        sys.stdout.write(build_table(args[0]))
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
