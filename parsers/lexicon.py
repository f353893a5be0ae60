"""Word lists and the relation-phrase trie shared by every parser backend.

The relation vocabulary is kept as multi-word units (``"at the right side of"``,
``"has as a part"``, ``"the same colour as"``) and compiled once into a token
trie, so a parser finds the longest relation phrase starting at a token with a
handful of dictionary look-ups.  Sources of the vocabulary:

* the 71 relations of the VSR relation table (every relation of its meta-category
  file, plus the relations listed in the paper but unused in the data);
* the relations of the GITM-MR substitution table and all their substitutes;
* What'sUp, COCO-spatial and GQA-spatial prepositions;
* the vocabulary of the synthetic scenes (comparatives and same-attribute phrases);
* common verbs of referring expressions, in all their inflected forms; a verb may
  be followed by a spatial preposition (``"standing in front of"``).

Word lists of Visual Genome annotation conventions (clothing, containers, part
nouns, passive verbs, ...) are used by :mod:`parsers.conventions`.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "PARTICLE_VERB_PHRASES",
    "PREPOSITION_PHRASES",
    "VERB_FORMS",
    "WEAK_VERB_FORMS",
    "POSTURE_VERB_FORMS",
    "COMPOUND_NOUNS",
    "CANONICAL_HEADS",
    "PARTITIVE_NOUNS",
    "PICTURE_NOUNS",
    "DISPLAY_VERB_FORMS",
    "DISPLAY_SURFACE_NOUNS",
    "ATTRIBUTE_WORDS",
    "DETERMINERS",
    "COPULAS",
    "RELATIVE_PRONOUNS",
    "CONJUNCTIONS",
    "NEGATIONS",
    "ADVERBS",
    "LOCATIVE_FILLERS",
    "LIGHT_VERBS",
    "PARTICIPLE_NOUNS",
    "CLOTHING_NOUNS",
    "WEARER_NOUNS",
    "SAYING_VERBS",
    "WORN_WITH_NOUNS",
    "CONTAINER_NOUNS",
    "SURFACE_NOUNS",
    "HOLDER_NOUNS",
    "POSITION_NOUNS",
    "REGION_NOUNS",
    "PART_NOUNS",
    "OWNED_PART_NOUNS",
    "PASSIVE_VERBS",
    "INSTRUMENT_PASSIVE_VERBS",
    "lexicon_form",
    "Trie",
    "RELATION_TRIE",
    "VERB_TRIE",
    "COMPOUND_TRIE",
    "COMPARISON_TRIE",
    "relation_phrases",
]

# ----------------------------------------------------------------- relations
VSR_RELATIONS = [
    # Adjacency
    "adjacent to", "alongside", "at the side of", "at the right side of", "at the left side of",
    "attached to", "at the back of", "ahead of", "against", "at the edge of",
    # Directional
    "off", "past", "toward", "towards", "down", "deep down", "up", "away from", "along", "around",
    "from", "into", "to", "across", "across from", "through", "down from",
    # Orientation
    "facing", "facing away from", "parallel to", "perpendicular to",
    # Projective
    "on top of", "beneath", "beside", "behind", "left of", "right of", "under", "in front of",
    "below", "above", "over", "in the middle of",
    # Proximity
    "by", "close to", "near", "far from", "far away from",
    # Topological
    "connected to", "detached from", "has as a part", "part of", "contains", "within", "at", "on",
    "in", "with", "surrounding", "among", "consists of", "out of", "between", "inside", "outside",
    "touching",
    # Unallocated
    "beyond", "next to", "opposite to", "after", "enclosed by",
]

GITM_MR_RELATIONS = [
    "to the left of", "to the right of", "wearing", "in front of", "behind", "holding",
    "on top of", "above", "below", "sitting on", "next to", "carrying", "inside", "under",
    "standing on", "walking on", "eating", "standing in", "playing with", "walking in", "riding",
    "riding on", "playing", "walking down", "throwing", "standing behind",
    "standing in front of",
    # substitutes
    "looking at", "on the side of", "near", "standing by",
]

SPATIAL_BENCHMARK_PREPOSITIONS = [
    "to the left of", "to the right of", "on", "under", "in front of", "behind", "left of",
    "right of", "above", "below", "on the left of", "on the right of", "on the left side of",
    "on the right side of", "at the top of", "at the bottom of", "on the top of",
    "on the bottom of",
]

SYNTHETIC_RELATIONS = [
    "to the left of", "to the right of", "above", "below", "near", "far from", "next to",
    "bigger than", "smaller than", "larger than", "taller than", "shorter than",
    "the same colour as", "the same color as", "the same shape as", "the same size as",
    "the same material as", "same colour as", "same color as", "same shape as", "same size as",
    "same material as", "a different colour from", "a different color from",
    "a different shape from", "different colour from", "different color from",
    "different shape from",
]

OTHER_PREPOSITIONS = [
    "of", "onto", "upon", "underneath", "inside of", "outside of", "out", "beside of",
    "next", "close by", "nearby", "near to", "closer to", "nearer to", "farther from",
    "closest to", "nearest to",
    "further from", "far away", "far apart from", "aside from", "opposite", "opposite of",
    "across from", "in between",
    "amongst", "amid", "amidst", "throughout", "without", "via", "like", "during", "for",
    "in the center of", "in the centre of", "in the corner of", "in the back of",
    "in the front of", "at the front of", "at the end of", "on the edge of", "on the other side of",
    "on the far side of", "on either side of", "on both sides of", "at the foot of",
    "at the base of", "on the back of", "on the front of", "on the side of", "by the side of",
    "in the shape of", "made of", "full of", "filled with", "covered in", "covered with",
    "covered by", "surrounded by", "pulled by", "driven by", "held by", "carried by",
    "worn by", "ridden by", "supported by", "hidden by", "blocked by", "followed by",
    "part of", "piece of", "a part of", "member of", "instead of", "in addition to",
    "rather than", "similar to", "different from", "higher than", "lower than",
    "closer than", "longer than", "wider than", "heavier than", "lighter than",
    "older than", "younger than", "darker than", "brighter than", "more than", "less than",
    "as big as", "as large as", "as small as", "as tall as", "the same height as",
    "w /",  # the shorthand "w/" for "with", which the tokenizer splits
]

#: verbs whose preposition comes after a particle of their own: relation phrases whose first
#: word is a verb also without the rest (``letting off passengers``)
PARTICLE_VERB_PHRASES = ["let go of", "lets go of", "letting go of"]


def _sided(preps: Iterable[str], nouns: Iterable[str]) -> list[str]:
    out = []
    for p in preps:
        for n in nouns:
            out.append(f"{p} the {n} of")
            out.append(f"{p} {n} of")
    return out


SIDE_NOUNS = ["left", "right", "left side", "right side", "left hand side", "right hand side",
              "left-hand side", "right-hand side", "far left", "far right", "side", "back",
              "front", "top", "bottom", "middle", "center", "centre", "edge", "corner", "rear",
              "base", "end", "near side", "far side", "other side", "top left", "top right",
              "bottom left", "bottom right", "upper left", "upper right", "lower left",
              "lower right", "left edge", "right edge", "top side", "bottom side"]
SIDED_PHRASES = _sided(["to", "on", "at", "in", "by", "toward", "towards", "from"], SIDE_NOUNS)

PREPOSITION_PHRASES: list[str] = sorted({
    p for p in (VSR_RELATIONS + GITM_MR_RELATIONS + SPATIAL_BENCHMARK_PREPOSITIONS
                + SYNTHETIC_RELATIONS + OTHER_PREPOSITIONS + PARTICLE_VERB_PHRASES
                + SIDED_PHRASES)
})

# ----------------------------------------------------------------------- verbs
# lemma: inflected forms (3rd person, -ing, past, participle ...)
_VERBS: dict[str, tuple[str, ...]] = {
    "wear": ("wears", "wearing", "wore", "worn"),
    "hold": ("holds", "holding", "held"),
    "carry": ("carries", "carrying", "carried"),
    "eat": ("eats", "eating", "ate", "eaten"),
    "ride": ("rides", "riding", "rode", "ridden"),
    "sit": ("sits", "sitting", "sat", "seated"),
    "stand": ("stands", "standing", "stood"),
    "lie": ("lies", "lying", "laying"),
    "walk": ("walks", "walking", "walked"),
    "run": ("runs", "running", "ran"),
    "play": ("plays", "playing", "played"),
    "throw": ("throws", "throwing", "threw", "thrown"),
    "catch": ("catches", "catching", "caught"),
    "look": ("looks", "looking", "looked"),
    "watch": ("watches", "watching", "watched"),
    "face": ("faces", "facing", "faced"),
    "touch": ("touches", "touching", "touched"),
    "contain": ("contains", "containing", "contained"),
    "consist": ("consists", "consisting"),
    "have": ("has", "having"),
    "lack": ("lacks", "lacking"),
    "miss": ("missing",),
    "hang": ("hangs", "hanging", "hung"),
    "lean": ("leans", "leaning", "leaned", "leant"),
    "rest": ("rests", "resting", "rested"),
    "park": ("parks", "parking", "parked"),
    "place": ("placed",),
    "cover": ("covers", "covering", "covered"),
    "surround": ("surrounds", "surrounding", "surrounded"),
    "fill": ("fills", "filling", "filled"),
    "attach": ("attaches", "attaching", "attached"),
    "connect": ("connects", "connecting", "connected"),
    "detach": ("detached",),
    "enclose": ("encloses", "enclosing", "enclosed"),
    "mount": ("mounted",),
    "perch": ("perched", "perching"),
    "grow": ("grows", "growing", "grew", "grown"),
    "fly": ("flies", "flying", "flew", "flown"),
    "swim": ("swims", "swimming", "swam"),
    "float": ("floats", "floating", "floated"),
    "pull": ("pulls", "pulling", "pulled"),
    "push": ("pushes", "pushing", "pushed"),
    "drive": ("drives", "driving", "drove", "driven"),
    "use": ("uses", "using", "used"),
    "read": ("reads", "reading"),
    "cut": ("cuts", "cutting"),
    "kick": ("kicks", "kicking", "kicked"),
    "hit": ("hits", "hitting"),
    "swing": ("swings", "swinging", "swung"),
    "feed": ("feeds", "feeding", "fed"),
    "pet": ("pets", "petting", "petted"),
    "drink": ("drinks", "drinking", "drank"),
    "graze": ("grazes", "grazing", "grazed"),
    "cross": ("crosses", "crossing", "crossed"),
    "show": ("shows", "showing", "showed", "shown"),
    "support": ("supports", "supporting", "supported"),
    "reflect": ("reflects", "reflecting", "reflected"),
    "approach": ("approaches", "approaching", "approached"),
    "follow": ("follows", "following", "followed"),
    "chase": ("chases", "chasing", "chased"),
    "lead": ("leads", "leading"),
    "hug": ("hugs", "hugging", "hugged"),
    "kiss": ("kisses", "kissing", "kissed"),
    "climb": ("climbs", "climbing", "climbed"),
    "jump": ("jumps", "jumping", "jumped"),
    "fall": ("falls", "falling", "fell", "fallen"),
    "move": ("moves", "moving", "moved"),
    "wait": ("waits", "waiting", "waited"),
    "sleep": ("sleeps", "sleeping", "slept"),
    "smile": ("smiles", "smiling", "smiled"),
    "point": ("points", "pointing", "pointed"),
    "talk": ("talks", "talking", "talked"),
    "stare": ("stares", "staring", "stared"),
    "block": ("blocks", "blocking", "blocked"),
    "overlook": ("overlooks", "overlooking", "overlooked"),
    "belong": ("belongs", "belonging"),
    "stick": ("sticks", "sticking", "stuck"),
    "tie": ("ties", "tying", "tied"),
    "drag": ("drags", "dragging", "dragged"),
    "bite": ("bites", "biting", "bitten"),
    "lick": ("licks", "licking", "licked"),
    "sniff": ("sniffs", "sniffing", "sniffed"),
    "wash": ("washes", "washing", "washed"),
    "brush": ("brushes", "brushing", "brushed"),
    "stack": ("stacked",),
    "lay": ("lays",),
    "hide": ("hides", "hiding", "hid", "hidden"),
    "sail": ("sails", "sailing", "sailed"),
    "surf": ("surfs", "surfing", "surfed"),
    "skate": ("skates", "skating"),
    "ski": ("skis", "skiing"),
    "shine": ("shines", "shining"),
    "pass": ("passes", "passing", "passed"),
    "enter": ("enters", "entering", "entered"),
    "exit": ("exits", "exiting"),
    "leave": ("leaves", "leaving"),
    "stop": ("stopped",),
    "line": ("lined", "lining"),
    "decorate": ("decorated", "decorating"),
    "topped": ("topped",),
    "make": ("made",),
    "locate": ("located",),
    "position": ("positioned",),
    "situate": ("situated",),
    "sew": ("sewn",),
    "print": ("printed",),
    "paint": ("painted",),
    "clad": ("clad",),
    "don": ("dons", "donning", "donned"),
    "cloak": ("cloaked",),
    "attire": ("attired",),
    "garb": ("garbed",),
    "draw": ("drawn",),
    "write": ("written",),
}

#: every inflected verb form that may start a relation phrase
VERB_FORMS: frozenset[str] = frozenset(
    form for lemma, forms in _VERBS.items() for form in forms
) | frozenset({"wear", "hold", "carry", "eat", "ride", "sit", "stand", "lie", "walk", "look",
               "watch", "touch", "contain", "have", "hang", "lean", "play", "throw", "use",
               "cover", "surround", "pull", "push", "drive", "chase", "follow", "face", "line"})

#: forms that are also common nouns; inside a noun phrase they count as a verb only
#: when a determiner or a preposition follows them (see ``RuleParser``)
WEAK_VERB_FORMS: frozenset[str] = frozenset({
    "wear", "hold", "carry", "eat", "ride", "sit", "stand", "lie", "walk", "look", "watch",
    "touch", "contain", "have", "hang", "lean", "play", "throw", "use", "cover", "surround",
    "pull", "push", "drive", "chase", "follow", "face", "faces", "covers", "plays", "walks",
    "rests", "parks", "drinks", "cuts", "hits", "swings", "pets", "kicks", "shows", "supports",
    "leads", "uses", "kisses", "hugs", "points", "looks", "runs", "falls", "stands", "lies",
    "rides", "throws", "watches", "flies", "floats", "grows", "sticks", "ties", "bites",
    "licks", "brushes", "skates", "skis", "passes", "exits", "leaves", "lays", "cut", "hit",
    "lead", "read", "reads", "stacked", "line", "lined", "lining", "made", "stop", "stopped",
    "moves", "waits", "blocks", "drags", "swims", "sails", "surfs", "hides", "enters",
    "printed", "painted", "drawn", "written", "sewn", "shine", "shines", "cross", "crosses",
    "climbs", "jumps", "talks", "stares", "sleeps", "pushes", "pulls", "drives", "chases",
    "follows", "hangs", "leans", "eats", "carries", "holds", "wears", "touches", "feeds",
    "washes", "sniffs", "approaches", "reflects", "overlooks", "belongs", "catches", "grazes",
    "covered", "filled", "parked", "placed", "mounted", "used", "shown", "perched",
    "smiling", "smiles", "smiled",
})

#: intransitive verbs of posture and motion, which combine with a following preposition
POSTURE_VERB_FORMS: frozenset[str] = frozenset(
    form
    for lemma in ("sit", "stand", "lie", "walk", "run", "look", "hang", "lean", "rest", "park",
                  "fly", "swim", "float", "play", "wait", "sleep", "jump", "climb", "point",
                  "stare", "smile", "talk", "graze", "grow", "move", "fall", "ride", "sail", "surf",
                  "skate", "ski", "hide", "shine", "place", "mount", "perch", "stack", "stick",
                  "locate", "position", "situate", "lay", "belong", "attach", "connect",
                  "detach", "enclose", "cover", "surround", "fill", "make", "line", "decorate",
                  "topped", "print", "paint", "draw", "write", "sew", "stop", "drive", "pull",
                  "reflect", "hold", "carry", "support", "block", "hit", "pass", "leave",
                  "enter", "exit", "show", "tie")
    for form in (lemma,) + _VERBS.get(lemma, ())
)

# --------------------------------------------------------------------- nouns
COMPOUND_NOUNS: list[str] = [
    # COCO classes
    "traffic light", "fire hydrant", "stop sign", "parking meter", "sports ball",
    "baseball bat", "baseball glove", "tennis racket", "wine glass", "hot dog", "potted plant",
    "dining table", "cell phone", "teddy bear", "hair drier", "hair dryer", "tooth brush",
    # What'sUp and everyday objects
    "beer bottle", "water bottle", "wine bottle", "coffee cup", "coffee mug", "tea cup",
    "coffee table", "side table", "cutting board", "remote control", "tape measure",
    "head phones", "sun glasses", "paper towel", "toilet paper", "tennis ball", "soccer ball",
    "golf ball", "swimming pool", "parking lot", "living room", "running shoes",
    "washing machine", "sleeping bag", "ironing board", "walking stick", "rocking chair",
    "frying pan", "baking sheet", "wedding cake", "ceiling fan", "picture frame",
    "light switch", "street light", "street lamp", "fire truck", "police car", "ice cream",
    "t shirt", "tank top", "baseball cap", "baseball player", "tennis player",
    "surf board", "skate board", "snow board", "polar bear", "brown bear", "computer mouse",
    "computer monitor", "laptop computer", "shopping bag", "trash can", "garbage can",
    "cereal box", "pizza box", "salt shaker", "pepper shaker", "flower pot", "plant pot",
    "power line", "power lines", "train tracks", "train track", "bus stop", "side walk",
    "cross walk", "tree trunk", "door handle", "window sill", "book shelf", "table cloth",
    "place mat", "wrist watch", "hand bag", "back pack", "suit case",
    "tee shirt", "wet suit", "counter top", "ferris wheel",
]

#: the names FACTUAL's scene graphs give entities that captions name otherwise: compounds
#: written as one word (``cell phone`` -> ``cellphone``), casual words for a person
#: (``guy`` -> ``person``) and pronouns that stand for no entity named in the caption
#: (``he`` -> ``man``)
CANONICAL_HEADS: dict[str, str] = {
    "cell phone": "cellphone", "surf board": "surfboard", "snow board": "snowboard",
    "side walk": "sidewalk", "t shirt": "t-shirt", "tee shirt": "t-shirt", "tshirt": "t-shirt",
    "wet suit": "wetsuit", "counter top": "countertop", "suit case": "suitcase",
    "guy": "person", "dude": "person", "someone": "person", "somebody": "person",
    "guys": "people", "dudes": "people", "individual": "person", "individuals": "people",
    "he": "man", "him": "man", "she": "woman", "her": "woman", "they": "people",
    "them": "people",
}

#: nouns of quantity that take ``of`` inside the noun phrase (``a pair of scissors``)
PARTITIVE_NOUNS: frozenset[str] = frozenset({
    "pair", "pairs", "couple", "group", "groups", "bunch", "bunches", "lot", "lots", "herd",
    "flock", "pile", "piles", "stack", "stacks", "set", "sets", "row", "rows", "number",
    "variety", "plenty", "dozen", "dozens", "slice", "slices", "piece", "pieces", "kind",
    "kinds", "type", "types", "sort", "handful", "collection", "pack", "crowd", "team",
    "line", "lines", "series", "bundle", "loaf", "cluster", "batch", "heap", "swarm",
    "school", "fleet", "array", "assortment", "bit", "bits", "half", "halves", "patch",
    "patches", "chain", "grouping", "expanse", "portion", "portions", "layer", "layers",
    "bouquet", "chunk", "chunks", "amount", "mass", "body", "clump", "clumps", "sheet",
    "blanket", "stream", "puff", "wisp", "wisps", "streak", "streaks", "cloud", "display",
    "picture", "photo", "photograph", "image", "view", "statue", "figurine", "drawing",
    "sculpture", "reflection", "strip", "strips", "roll", "rolls",
    # more measures, servings and depictions whose noun after "of" is the thing shown
    "bar", "bars", "tuft", "tufts", "blade", "blades", "wedge", "wedges", "bale", "bales",
    "drip", "drips", "drop", "drops", "splash", "tube", "tubes", "spoonful", "scoop",
    "scoops", "dollop", "blob", "glob", "sprig", "sprigs", "mound", "mounds", "slab",
    "formation", "species", "varieties", "remains", "trail", "gang", "pad", "pads",
    "photos", "pictures", "images", "painting", "paintings", "cartoon", "illustration",
    "illustrations", "close-up", "closeup", "portrait", "portraits",
    # groups of trees (``a stand of trees``, ``a grove of palms``); not ``stands`` (the
    # stands of a stadium)
    "stand", "grove",
})

#: pictures as things: what they show is the head of ``a picture of a dog`` unless the text
#: goes on about the picture itself (``a picture of a dog hanging on the wall``)
PICTURE_NOUNS: frozenset[str] = frozenset({
    "picture", "pictures", "photo", "photos", "photograph", "photographs", "image", "images",
    "painting", "paintings", "drawing", "drawings", "poster", "posters", "portrait",
    "portraits", "illustration", "illustrations", "sketch", "sketches", "mural", "murals",
})

#: verb forms that say where a picture is displayed (``hanging on``, ``taped to``)
DISPLAY_VERB_FORMS: frozenset[str] = frozenset({
    "hanging", "hangs", "hang", "hung", "mounted", "displayed", "posted", "framed", "taped",
    "pinned", "printed", "painted", "stuck", "attached", "glued", "propped", "leaning",
})

#: things pictures are displayed on or in (``a photo of a cat on the fridge``)
DISPLAY_SURFACE_NOUNS: frozenset[str] = frozenset({
    "wall", "walls", "window", "windows", "screen", "frame", "door", "fridge",
    "refrigerator", "board", "billboard", "easel", "blanket", "shirt", "sign", "page",
})

#: nouns ending like a participle (``-ing`` / ``-ed``); never guessed to be verbs
PARTICIPLE_NOUNS: frozenset[str] = frozenset({
    "building", "ceiling", "painting", "clothing", "railing", "awning", "frosting", "icing",
    "topping", "toppings", "stuffing", "wedding", "evening", "morning", "string", "ring", "king",
    "wing", "thing", "sibling", "pudding", "dumpling", "lighting", "siding", "landing",
    "parking", "opening", "housing", "carving", "drawing", "sling", "swing", "spring",
    "bedding", "filling", "wiring", "crossing", "sewing", "setting", "netting", "fencing",
    "molding", "moulding", "trimming", "paneling", "panelling", "flooring", "roofing",
    "shipping", "stocking", "stockings", "earring", "earrings", "ping", "sing", "bling",
    "seasoning", "dressing", "writing", "lettering", "marking", "markings", "heading",
    "bed", "shed", "sled", "seed", "weed", "reed", "steed", "sped", "red", "bread", "thread",
    "head", "forehead", "hundred",
})

# Visual Genome scene-graph conventions (see :mod:`parsers.conventions`).  Nouns are listed
# in the singular; :func:`lexicon_form` maps a plural head to its listed form.

#: garments and accessories: ``a man in a red shirt`` means the man wears the shirt
CLOTHING_NOUNS: frozenset[str] = frozenset({
    "shirt", "t-shirt", "tshirt", "tee", "suit", "pant", "pants", "trousers", "jean", "jeans",
    "short", "shorts", "uniform", "hat", "cap", "helmet", "outfit", "clothes", "clothing",
    "tie", "vest", "apron", "skirt", "blouse", "hoodie", "sweatshirt", "sweatpants", "jersey",
    "tank", "bikini", "swimsuit", "wetsuit", "costume", "robe", "gown", "tuxedo",
    "overalls", "leggings", "sneaker", "boot", "shoe", "sandal", "glove", "mitten", "scarf",
    "beanie", "visor", "veil", "bandana", "sunglasses", "goggles", "pajamas", "attire",
    "gear", "top", "tops", "bottoms",
})

#: garments that ``with`` also marks as worn (``a boy with glasses``); ``with`` before
#: other clothing keeps its meaning (``a girl with a hat`` is annotated ``with``)
WORN_WITH_NOUNS: frozenset[str] = frozenset({
    "shirt", "t-shirt", "tshirt", "glasses", "eyeglasses", "sunglasses", "goggles",
    "uniform", "suit", "pants", "jeans", "shorts", "outfit", "wetsuit", "helmet",
})

#: verbs that introduce the words written on a thing (``a sign that says `` stop ''``)
SAYING_VERBS: frozenset[str] = frozenset({"says", "say", "saying", "said", "reads", "read",
                                          "reading"})

#: people and animals that wear clothing; clothing after the object of a relation that is
#: not one of them is worn by the relation's subject (``a man on a bench in a red hat``)
WEARER_NOUNS: frozenset[str] = frozenset({
    "man", "men", "woman", "women", "person", "people", "boy", "girl", "child", "children",
    "kid", "guy", "lady", "gentleman", "player", "skier", "surfer", "skateboarder",
    "snowboarder", "batter", "catcher", "pitcher", "umpire", "referee", "rider", "biker",
    "cyclist", "baby", "toddler", "teen", "teenager", "adult", "worker", "officer", "chef",
    "cook", "waiter", "waitress", "student", "teacher", "soldier", "policeman", "bride",
    "groom", "mother", "father", "dad", "mom", "son", "daughter", "brother", "sister", "friend",
    "spectator", "fan", "tourist", "passenger", "driver", "pilot", "jockey", "athlete",
    "dog", "bear", "doll", "mannequin", "statue", "someone", "he", "she", "they",
    # more people by their trade, pastime or kin
    "actress", "actor", "vendor", "owner", "dude", "pedestrian", "fisherman", "farmer",
    "clown", "shopper", "customer", "diner", "cashier", "hiker", "jogger", "runner",
    "swimmer", "dancer", "musician", "singer", "guitarist", "drummer", "artist", "painter",
    "photographer", "traveler", "traveller", "visitor", "coach", "goalie", "goalkeeper",
    "cowboy", "sailor", "rancher", "merchant", "seller", "salesman", "butcher", "baker",
    "bartender", "nurse", "doctor", "mechanic", "firefighter", "fireman", "gardener",
    "hunter", "climber", "camper", "rower", "kayaker", "skater", "golfer", "wrestler",
    "teammate", "grandmother", "grandfather", "husband", "wife", "infant", "youngster",
    "individual", "somebody", "everyone", "anyone",
})

#: containers: ``a glass of water`` means water in a glass
CONTAINER_NOUNS: frozenset[str] = frozenset({
    "glass", "bottle", "box", "cup", "jar", "can", "mug", "bag", "basket", "carton", "jug",
    "pitcher", "bucket", "pot", "tin", "sack", "packet", "pouch", "crate", "barrel", "tub",
    "canister", "flask", "thermos", "kettle", "teapot", "glasses",
})

#: flat holders: ``a plate of food`` means food on a plate
SURFACE_NOUNS: frozenset[str] = frozenset({"plate", "platter", "saucer", "dish", "shelf"})

#: holders annotated as having their content: ``a bowl of soup`` means the bowl has soup
HOLDER_NOUNS: frozenset[str] = frozenset({
    "bowl", "tray", "vase", "field", "container", "bin", "cart", "wagon",
})

#: nouns of a place on something (``the side of the road``); after a relation they join
#: it (``along the side of``) instead of naming an entity
REGION_NOUNS: frozenset[str] = frozenset({
    "side", "sides", "edge", "edges", "top", "bottom", "back", "front", "middle", "end",
    "ends", "corner", "corners", "center", "centre", "background", "foreground", "base",
    "rim", "surface", "outskirts", "rear", "tip", "interior", "exterior", "inside",
    "outside", "underside", "face", "part", "section", "area",
})

#: nouns of a position; after a preposition with no whole after them (``on the right``,
#: ``in the middle``, ``in the distance``) they name no entity
POSITION_NOUNS: frozenset[str] = frozenset({
    "side", "sides", "top", "front", "back", "rear", "right", "left", "middle", "center",
    "centre", "distance", "edge", "bottom", "end", "inside", "outside",
})

#: parts of a whole: a noun before one of them names the whole (``the clock hands``: the
#: clock has hands)
PART_NOUNS: frozenset[str] = frozenset({
    "branch", "head", "door", "face", "screen", "window", "leg", "wing", "frame", "hand",
    "tail", "engine", "foot", "handle", "mouth", "wheel", "eye", "ear", "nose",
    "arm", "neck", "sleeve", "keyboard", "lid", "blade", "trunk", "shade", "tire", "tyre",
    "wrist", "paw", "feather", "pocket", "thumb", "waist", "collar", "windshield",
    "windscreen", "headlight", "taillight", "headboard", "propeller", "chin", "vent",
    "cockpit", "wiper", "roof", "hood", "bumper", "mane", "hoof", "horn", "beak", "claw",
    "whisker", "fur", "finger", "knee", "shoulder", "toe", "lip", "tooth", "teeth", "cheek",
    "forehead", "hair", "spoke", "pedal", "saddle", "rim", "knob", "button",
    "petal", "stem", "crust", "label", "cushion", "drawer", "shelf", "step",
    "chimney", "balcony", "porch", "steeple", "antenna", "rudder", "fin", "sail", "mast",
    "deck", "hull", "grill", "grille", "dial", "strap",
    "lens", "spout", "faucet", "cord", "plug", "brim", "heel", "sole", "lace", "buckle",
})

#: parts that a possessive determiner gives to its antecedent (``a dog with its tongue
#: out``: the dog has the tongue): the parts above and parts of a body they leave out
OWNED_PART_NOUNS: frozenset[str] = PART_NOUNS | frozenset({
    "lap", "torso", "body", "back", "belly", "chest", "stomach", "hip", "skin", "tongue",
    "eyebrow", "thigh", "ankle", "elbow", "palm", "fist", "beard", "mustache", "moustache",
    "tusk", "snout", "muzzle", "antler", "bill", "feet",
})

#: verbs whose passive with ``by`` is turned active (``a cart pulled by a horse``: the
#: horse pulls the cart); lemma: past participle
PASSIVE_VERBS: dict[str, str] = {
    "covered": "cover", "surrounded": "surround", "worn": "wear", "held": "hold",
    "carried": "carry", "ridden": "ride", "pulled": "pull", "pushed": "push",
    "driven": "drive", "lined": "line", "eaten": "eat", "chased": "chase",
    "followed": "follow", "watched": "watch", "flown": "fly", "thrown": "throw",
    "caught": "catch", "hit": "hit", "supported": "support", "blocked": "block",
    "shaded": "shade", "framed": "frame", "filled": "fill", "topped": "top",
    "crowded": "crowd", "occupied": "occupy", "used": "use", "fed": "feed",
    "petted": "pet", "kicked": "kick", "touched": "touch", "led": "lead", "hugged": "hug",
    "bordered": "border", "overlooked": "overlook",
    # what flanks a thing is on both sides of it, as FACTUAL and DiscoSG write it
    "flanked": "on both sides of",
}

#: of those, the verbs whose instrument with ``in`` / ``with`` is the logical subject as
#: well (``a street covered in snow``: snow covers the street)
INSTRUMENT_PASSIVE_VERBS: frozenset[str] = frozenset({
    "covered", "surrounded", "lined", "bordered", "flanked", "crowded",
})


def word_forms(*stems: tuple[str, tuple[str, ...]]) -> frozenset[str]:
    """Every ``stem + ending`` of ``(stem, endings)`` pairs: ``word_forms(("sit", ("",
    "s", "ting")), ("sat", ("",)))`` is ``{"sit", "sits", "sitting", "sat"}``."""
    return frozenset(f"{stem}{end}" for stem, ends in stems for end in ends)


def lexicon_form(word: str, words: frozenset[str]) -> bool:
    """Whether ``word`` (any case, singular or a regular plural) belongs to ``words``."""
    w = word.lower()
    if w in words:
        return True
    if w.endswith("ies") and w[:-3] + "y" in words:
        return True
    if w.endswith("es") and w[:-2] in words:
        return True
    if w.endswith("ves") and (w[:-3] + "f" in words or w[:-3] + "fe" in words):
        return True
    return w.endswith("s") and w[:-1] in words


ATTRIBUTE_WORDS: frozenset[str] = frozenset({
    # colours
    "red", "orange", "yellow", "green", "blue", "purple", "pink", "brown", "black", "white",
    "gray", "grey", "silver", "gold", "golden", "beige", "tan", "cyan", "magenta", "navy",
    "maroon", "dark", "light", "bright", "pale", "teal", "violet", "turquoise", "khaki",
    "blond", "blonde", "colorful", "colourful", "striped", "spotted", "plaid", "checkered",
    "multicolored", "multicoloured", "transparent", "clear",
    # sizes
    "big", "small", "large", "little", "tiny", "huge", "giant", "tall", "short", "long", "wide",
    "narrow", "thick", "thin", "medium", "gigantic", "massive", "mini", "miniature", "fat",
    "skinny", "high", "low", "smaller", "bigger", "larger", "largest", "smallest", "biggest",
    "tallest", "shorter", "taller", "longest", "shortest",
    # materials
    "wooden", "wood", "metal", "metallic", "plastic", "rubber", "leather", "stone", "brick",
    "ceramic", "paper", "cardboard", "cotton", "wool", "woolen", "woollen", "steel", "iron",
    "concrete", "marble", "silk", "denim", "fur", "furry", "matte", "shiny", "glass", "glossy",
    # shapes
    "round", "square", "rectangular", "circular", "triangular", "cylindrical", "spherical",
    "cubic", "oval", "flat", "curved", "pointy",
    # states and others
    "old", "young", "new", "empty", "full", "open", "closed", "clean", "dirty", "wet", "dry",
    "hot", "cold", "fresh", "ripe", "sliced", "broken", "cloudy", "sunny", "leafy", "bare",
    "tiled", "lit", "parked", "standing", "sitting", "smiling", "happy", "cute", "pretty",
    "ugly", "beautiful", "fluffy", "soft", "hard", "heavy", "busy", "calm", "other", "same",
    "left", "right", "top", "bottom", "front", "back", "rear", "hind", "middle", "upper", "lower",
    "far", "near", "nearest", "closest", "farthest", "first", "second", "third", "last", "only",
    "single", "double", "many", "several", "few", "one", "two", "three", "four", "five", "six",
    "seven", "eight", "nine", "ten",
})

DETERMINERS: frozenset[str] = frozenset({
    "a", "an", "the", "this", "these", "those", "some", "any", "each", "every", "another",
    "his", "her", "its", "their", "my", "your", "our", "both", "all", "either", "neither", "no",
})

COPULAS: frozenset[str] = frozenset({
    "is", "are", "was", "were", "be", "been", "being", "am", "'s", "’s", "seems", "seem",
    "appears", "appear", "remains", "remain", "stays", "stay",
})

#: auxiliaries that may introduce a verb relation (``has been``, ``can be``)
AUXILIARIES: frozenset[str] = frozenset({
    "can", "could", "will", "would", "may", "might", "must", "should", "does", "do", "did",
})

RELATIVE_PRONOUNS: frozenset[str] = frozenset({"that", "which", "who", "whom", "whose", "where"})

CONJUNCTIONS: frozenset[str] = frozenset({"and", "or", "but", "while", "whereas", "plus", "&"})

NEGATIONS: frozenset[str] = frozenset({"not", "n't", "never"})

ADVERBS: frozenset[str] = frozenset({
    "directly", "right", "just", "slightly", "partly", "partially", "completely", "fully",
    "mostly", "also", "immediately", "still", "currently", "exactly", "almost", "nearly",
    "somewhat", "very", "quite", "really", "entirely", "halfway", "further", "farther",
    "too", "both", "all", "even", "only", "clearly", "apparently", "probably", "possibly",
})

#: words between a copula and a relation that are not part of the relation phrase
LOCATIVE_FILLERS: frozenset[str] = frozenset({
    "located", "positioned", "situated", "found", "seen", "shown", "pictured", "visible",
    "set", "kept",
})

#: verbs and prepositions that only introduce an attribute comparison: in ``that has the
#: same colour as`` or ``with the same shape as`` the relation phrase is the comparison
LIGHT_VERBS: frozenset[str] = frozenset({"has", "have", "having", "had", "with"})


# ---------------------------------------------------------------------- trie
class Trie:
    """A token trie answering "longest phrase starting here" in a few dict look-ups.

    Phrases are stored lowercase, split on whitespace; hyphenated words of a
    phrase (``left-hand``) are single tokens, like the tokeniser makes them.
    """

    _END = ""

    def __init__(self, phrases: Iterable[str] = ()) -> None:
        self.root: dict[str, dict] = {}
        self.size = 0
        for p in phrases:
            self.add(p)

    def add(self, phrase: str) -> None:
        words = phrase.lower().split()
        if not words:
            return
        node = self.root
        for w in words:
            node = node.setdefault(w, {})
        if self._END not in node:
            node[self._END] = {}
            self.size += 1

    def longest(self, words: list[str], start: int) -> int:
        """End index (exclusive) of the longest phrase at ``words[start:]``; ``start`` if none."""
        node = self.root
        best = start
        i = start
        n = len(words)
        while i < n:
            node = node.get(words[i])  # type: ignore[assignment]
            if node is None:
                break
            i += 1
            if self._END in node:
                best = i
        return best

    def __contains__(self, phrase: str) -> bool:
        words = phrase.lower().split()
        return bool(words) and self.longest(words, 0) == len(words)

    def __len__(self) -> int:
        return self.size


RELATION_TRIE = Trie(PREPOSITION_PHRASES)
VERB_TRIE = Trie(VERB_FORMS)
COMPOUND_TRIE = Trie(COMPOUND_NOUNS)
#: relation phrases that compare an attribute (``the same colour as``, ``a different shape
#: from``); a light verb before one of them is not part of the relation
COMPARISON_TRIE = Trie(p for p in PREPOSITION_PHRASES
                       if "same" in p.split() or "different" in p.split())


def relation_phrases() -> list[str]:
    """All multi-word relation phrases of the preposition lexicon, sorted."""
    return list(PREPOSITION_PHRASES)
