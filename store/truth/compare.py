"""Two readings side by side: the evidence store.truth.classify decides on.

Given what an old and a new text say (store.truth.reading), `compare` names, in the order a person would
check them: is it about the same subject? The same kind of fact (slot)? Does one deny what the other
says? Did a value change (a number, a name, a version, the slot's value), and does the new text say that
something changed? Nothing here decides; every field is a fact about the pair.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from difflib import SequenceMatcher

from store.truth.lexicon import (
    ANTONYMS_EN,
    ANTONYMS_ZH,
    HAS_CJK,
    MONTHS,
    PERSONS,
    PREDICATES,
    QUALIFIERS,
    QUALIFIERS_ZH_EN,
    STOPWORDS,
    STRONG_QUALIFIERS,
    ZH_DIGITS,
    ZH_GLOSS,
    ZH_VERBS,
)
from store.truth.numbers import number_term
from store.truth.reading import VERB_STEMS, Reading, SlotHit, stem
from store.truth.slots import MANY

PREDICATE_STEMS = frozenset(stem(w) for w in PREDICATES)  # as flips are: stems ("scared" is "scar")


@dataclass(frozen=True, slots=True)
class Evidence:
    other_subject: tuple[str, str] | None  # (old's subject, new's) when they are different people or things
    qualifiers: tuple[str, str] | None  # ("work", "personal") when the same kind of fact is qualified apart
    flips: tuple[str, ...]  # terms one text denies and the other affirms
    agrees: bool  # the new text turns down what the old one ranked lower: the same opinion
    swapped: bool  # "X over Y" / "Y over X"
    antonym: str | None  # "light/dark"
    antonym_words: frozenset[str]  # the words of every antonym pair found
    slot: SlotHit | None  # the old text's hit of a slot both state
    new_slot: SlotHit | None
    version: tuple[str, str, str] | None  # (tool, old version, new version)
    numbers_changed: bool  # each side has a number the other lacks
    numbers_differ: bool  # either side has one
    names_changed: bool
    names_differ: bool
    frame: bool  # the same sentence with short stretches replaced, nothing inserted or deleted
    number_only: bool  # ... and only numbers were replaced
    cues: tuple[str, ...]  # change cues of the new text the old one lacks
    replaces: bool  # the new text says one value took another's place
    denies_other: bool  # the new text denies something the old one never said, and the old one says more
    # ("I play the piano." / "I stopped playing the guitar.": a denial of the guitar, not of the piano)
    still: bool  # the new text says "still"
    old_extra: frozenset[str]  # content terms only the old text has
    new_extra: frozenset[str]
    overlap: float  # shared terms / the smaller text's terms
    lexical: float  # Dice coefficient of the terms (CJK: characters)
    cjk: bool
    anchors: frozenset[str]  # the names and numbers of both texts: what identifies a value
    subjects: frozenset[str]  # both texts' subject words (never a slot's value)
    shared_nouns: int = 0  # shared content terms that are not verbs
    noun_overlap: float = 0.0  # ... over the smaller text's non-verb terms
    close: bool = False  # the caller's similarity says the texts mean nearly the same (set by classify)
    shared_denied: frozenset[str] = frozenset()  # terms both texts deny ("no tabs" / "never uses tabs")
    shared_anchors: frozenset[str] = frozenset()  # names and numbers both texts hold
    # Each text denies a thing the other never mentions ("no sugar" / "no milk", "I don't eat pork" / "I
    # don't eat beef"): two refusals, both true at once, like two values of a slot that holds many.
    denied_apart: tuple[str, str] | None = None
    denied: frozenset[str] = frozenset()  # every term either text denies
    new_denied: frozenset[str] = frozenset()  # the terms the new text denies
    # One text denies the opposite of what the other says ("prefers short answers" / "doesn't like long
    # answers", "early riser" / "doesn't sleep late"): the same fact, as "short / not long".
    antonym_agrees: str | None = None
    # A kind of a thing one text rules out, done by the other ("Vegetarian" / "eating chicken": meat).
    kind_flip: str | None = None
    adds: bool = False  # the new text says it is one more ("too", "also"), and the old one does not
    old_text: str = ""
    new_text: str = ""

    @property
    def same_slot(self) -> bool:
        return self.slot is not None and self.new_slot is not None

    @property
    def slot_changed(self) -> bool:
        """Both state the slot with different values: each has a value word the other lacks, and no name
        or number in common ("Europe/Amsterdam" / "the Amsterdam time zone (CET)" is one value)."""
        if self.slot is None or self.new_slot is None:
            return False
        a, b = _parts(self.slot.value - self.subjects), _parts(self.new_slot.value - self.subjects)
        if not (a - b and b - a):
            return False
        # A name both share is one value; a number both share is not, in a slot that holds many ("allergic
        # 2 cashews" / "allergic 2 prawns": "2" is "to").
        shared = a & b & self.anchors
        if shared and not (self.slot.kind == MANY and all(w[:1].isdigit() for w in shared)):
            return False
        # Values that share a word ("peanut" / "severe peanut allergy"): the same value when the texts are
        # close in meaning, another one when not ("Vietnamese food" / "Georgian food").
        return not (a & b) or not self.close

    @property
    def verb_flips_only(self) -> bool:
        """Only a verb is denied on one side ("never uses emojis" / "the squad uses Java"): that says
        nothing unless the rest is the same, so it does not make the texts related."""
        return bool(self.flips) and all(f in VERB_STEMS for f in self.flips)

    @property
    def other_object(self) -> bool:
        """Only the predicate is denied, and each text has its own object ("doesn't like jazz" / "likes
        blues", "never works on Sundays" / "works Saturdays", "not allergic to cats" / "allergic to
        dogs"): two facts, unless the new text says something changed."""
        if (
            self.cues
            or not self.flips
            or not all(f in VERB_STEMS or f in PREDICATE_STEMS for f in self.flips)
        ):
            return False
        return bool(self.old_extra - VERB_STEMS) and bool(self.new_extra - VERB_STEMS)

    @property
    def contradiction(self) -> bool:
        return bool(self.flips) or self.swapped or self.antonym is not None

    @property
    def value_change(self) -> bool:
        return self.numbers_changed or self.names_changed or self.version is not None or self.slot_changed


def _parts(value: frozenset[str]) -> frozenset[str]:
    """A value's words with hyphenated ones split: "Berlin-Kreuzberg" is "Kreuzberg, Berlin"."""
    return frozenset(p for v in value for p in (v.split("-") if "-" in v.strip("-") else (v,)) if p)


def _other_subject(a: Reading, b: Reading) -> tuple[str, str] | None:
    """Different people or things: my son / my daughter, my wife / me, the billing API / the reporting
    service. A subject named in the other text too is not another subject ("Mia is my daughter")."""
    if a.subject == b.subject:
        return None
    if not a.subject or not b.subject:
        other = a if a.subject else b
        rest = b if a.subject else a
        if not other.person:
            return None  # a thing next to an unnamed subject: cannot tell
        if other.subject <= PARTNER_STEMS and _states(a, "partner") and _states(b, "partner"):
            return None  # "The user's partner is Sam" / "The user is now dating Lee": the user's partner
        # ... unless the other text says "I" first: "I work there, the same place as my wife" is the user's
        mine = rest.tokens[:1] in (("i",), ("i'm",), ("i’m",), ("im",), ("i've",), ("i’ve",)) and _beside(
            rest, other
        )
        if other.subject & (rest.content | set(rest.tokens)) and not _owned(other, rest) and not mine:
            return None
        if other.cjk and any(w in rest.text for w in other.subject):  # 我女儿叫小雨 / 小雨是我女儿
            return None
    elif (a.subject & b.subject) and not (a.subject - b.subject and b.subject - a.subject):
        return None  # "staging" / "the staging environment"
    elif a.subject <= _said(b) and b.subject <= _said(a):
        return None  # "Repo uses Docker Compose" / "Docker Compose was removed from the repo": one topic
    return (" ".join(sorted(a.subject)) or "you", " ".join(sorted(b.subject)) or "you")


PARTNER_STEMS = frozenset(
    stem(w) for w in ("partner", "wife", "husband", "boyfriend", "girlfriend", "spouse")
)


def _states(r: Reading, slot: str) -> bool:
    return any(h.name == slot for h in r.slots)


def _beside(rest: Reading, other: Reading) -> bool:
    """`rest` names other's subject only beside the user: "as my wife", "with my wife", "than my son"."""
    t = rest.tokens
    return any(
        stem(t[i]) in other.subject
        and t[i - 1] in ("my", "our")
        and t[i - 2] in ("as", "with", "than", "like", "and")
        for i in range(2, len(t))
    )


def _english_in(r: Reading) -> frozenset[str]:
    """The English words of a Chinese text: not names ("我不吃 meat"), but what a value is ("骑 bike")."""
    return frozenset(t for t in r.content if t.isascii() and t.isalpha()) if r.cjk else frozenset()


def _said(r: Reading) -> frozenset[str]:
    return r.content | frozenset(stem(t) for t in r.tokens)


def _owned(other: Reading, rest: Reading) -> bool:
    """`other` is about someone's thing ("tom's manager is claire") and `rest` names that someone without
    the possessive ("tom is my manager"): Tom's manager is not the user's manager."""
    possessives = {t[:-2] for t in other.tokens if t.endswith(("'s", "’s"))} - PERSONS  # "my partner's"
    owners = {stem(t) for t in possessives} & other.subject
    return bool(owners) and not owners & {stem(t) for t in rest.tokens if t.endswith(("'s", "’s"))}


def _qualifier_words(r: Reading) -> frozenset[str]:
    """Its qualifiers in one language and number: 周末 = weekend = weekends."""
    words = (QUALIFIERS_ZH_EN.get(q, q) for q in r.qualifiers)
    # "weekends" = "weekend", but "previous" and "business" keep their s (as STRONG_QUALIFIERS has them).
    return frozenset(w[:-1] if w.endswith("s") and w[:-1] in QUALIFIERS else w for w in words)


def _qualifiers(a: Reading, b: Reading) -> tuple[str, str] | None:
    """Qualified apart: "work email" / "personal email", or a qualifier on one side only when nothing
    says it changed ("Skip-level manager: Ana" / "Manager: Priya")."""
    qa, qb = _qualifier_words(a) - _qualifier_words(b), _qualifier_words(b) - _qualifier_words(a)
    # The old text about the past ("I used to live in Paris") stays true whatever the new one says.
    if (qa and qb) or (((qa | qb) & STRONG_QUALIFIERS) and not b.cues) or "past" in qa:
        return (" ".join(sorted(qa)) or "—", " ".join(sorted(qb)) or "—")
    return None


def _antonym_words(a: Reading, b: Reading) -> tuple[str | None, frozenset[str]]:
    """The first antonym pair the texts hold on opposite sides, and every word of such pairs (stemmed):
    "short and concise" / "long and detailed" differ by antonyms alone."""
    first = _antonym(a, b)
    pairs = ANTONYMS_ZH if (a.cjk or b.cjk) else ANTONYMS_EN
    words: set[str] = set()
    aw, bw, at, bt = a.words, b.words, a.text + a.normal, b.text + b.normal  # once, not per pair
    for x, y in pairs:
        for p, q in ((x, y), (y, x)):
            if (p in aw or p in at) and (q in bw or q in bt):
                words.update((stem(p), stem(q), p, q, *p, *q) if (a.cjk or b.cjk) else (stem(p), stem(q)))
    return first, frozenset(words)


def _antonym(a: Reading, b: Reading) -> str | None:
    if a.cjk or b.cjk:
        at, bt = a.text + " " + a.normal, b.text + " " + b.normal
        for x, y in ANTONYMS_ZH:
            for p, q in ((x, y), (y, x)):
                if p in at and q in bt and q not in at and p not in bt:
                    return f"{p}/{q}"
        return None
    ta, tb = a.words, b.words
    for x, y in ANTONYMS_EN:
        for p, q in ((x, y), (y, x)):
            if p in ta and q in tb and q not in ta and p not in tb:
                return f"{p}/{q}"
    return None


def _antonym_agrees(a: Reading, b: Reading) -> str | None:
    """ "short / not long": one text affirms a word, the other denies its antonym (English only)."""
    if a.cjk or b.cjk:
        return None
    for x, y in ANTONYMS_EN:
        for p, q in ((x, y), (y, x)):
            if p not in a.tokens or q not in b.tokens or q in a.tokens or p in b.tokens:
                continue
            if stem(p) not in a.negated and stem(q) in b.negated:
                return f"{p} / not {q}"
            if stem(p) in a.negated and stem(q) not in b.negated:
                return f"not {p} / {q}"
    return None


def _swapped(a: Reading, b: Reading) -> bool:
    for winner, loser in a.preferences:
        if any(l2 == winner or w2 == loser for w2, l2 in b.preferences):
            return True
    # The new text prefers something the old one never named over what the old one preferred
    # ("Prefers remote work" -> "Prefers working in the office over remote work").
    return (
        any(loser in a.content and winner not in a.content for winner, loser in b.preferences)
        and not a.preferences
    )


def _agrees(a: Reading, b: Reading) -> bool:
    """b denies what a ranked below something ("pip over uv", then "stopped using uv")."""
    return any(loser in b.negated and winner not in b.negated for winner, loser in a.preferences)


def _frame(a: Reading, b: Reading) -> tuple[bool, bool]:
    """(the same sentence with one short stretch replaced, only numbers replaced)."""
    x, y = a.tokens, b.tokens
    ops = [op for op in SequenceMatcher(None, x, y, autojunk=False).get_opcodes() if op[0] != "equal"]
    if not ops or any(tag != "replace" for tag, *_ in ops):
        return False, False
    words = [t for _, i1, i2, j1, j2 in ops for t in (*x[i1:i2], *y[j1:j2])]
    number_only = all(w[0].isdigit() or w in ZH_DIGITS or w in "十百千万" or w in MONTHS for w in words)
    if len(ops) > 1 and not number_only:
        return False, False
    if any(i2 - i1 > 3 or j2 - j1 > 3 for _, i1, i2, j1, j2 in ops):
        return False, False
    changed = sum(i2 - i1 for _, i1, i2, _, _ in ops)
    if len(x) - changed < max(2, 0.5 * len(x)):  # "faded 3" / "faded 4": too little is the same
        return False, False
    latin = all(not HAS_CJK.match(w) for w in words)  # 京A12345 / 京B67890: a code, not a character
    if any(w in STOPWORDS for w in words) or ((a.cjk or b.cjk) and not (number_only or latin)):
        return False, False
    if ops[0][1] == 0 and not number_only:  # "Rent 1200" / "Electricity 80": what the value is of changed
        return False, False
    return True, number_only


def _denies_other(a: Reading, b: Reading, slot: SlotHit | None, new_slot: SlotHit | None) -> bool:
    """In a slot that holds many values, the new text denies another value than the old one's."""
    if slot is None or new_slot is None or slot.kind != "many":
        return False
    return bool(b.negated - a.content) and not (slot.value & b.negated)


GLOSS = tuple((zh, stem(en)) for zh, en in ZH_GLOSS)


def _bridged(x: Reading, other: Reading) -> frozenset[str]:
    """x's content terms; a Chinese text next to an English one also gets the English words its Chinese
    words say (ZH_GLOSS), and the other's words it already holds as Latin words count once."""
    if not x.cjk or other.cjk:
        return x.content
    return x.content | {en for zh, en in GLOSS if zh in x.text}


def _bridged_slot(x: Reading, other: Reading, hit: SlotHit) -> SlotHit:
    """A Chinese text's slot value next to an English text, with the English words of its Chinese words
    (我住在北京 / I live in Beijing: one value)."""
    if not x.cjk or other.cjk:
        return hit
    extra = {en for zh, en in GLOSS if zh in x.text and all(c in hit.value for c in zh)}
    return replace(hit, value=hit.value | extra) if extra else hit


def _bridged_negated(x: Reading, other: Reading) -> frozenset[str]:
    """x's denied terms; a Chinese text next to an English one also denies the English word of a Chinese
    word it denies whole (我不吃猪肉 denies "pork", "eat" and "meat")."""
    if not x.cjk or other.cjk:
        return x.negated
    return x.negated | {en for zh, en in GLOSS if zh in x.text and all(c in x.negated for c in zh)}


def _denied_apart(a: Reading, b: Reading) -> tuple[str, str] | None:
    """(what only the old text denies, what only the new one denies): things rather than verbs, neither
    mentioned by the other text, and no thing denied by both; None otherwise."""
    if a.cjk or b.cjk:
        return _denied_apart_zh(a, b)
    verbs = VERB_STEMS | ZH_VERBS
    only_a = [t for t in dict.fromkeys(a.terms) if t in a.negated - b.content - verbs and t not in b.tokens]
    only_b = [t for t in dict.fromkeys(b.terms) if t in b.negated - a.content - verbs and t not in a.tokens]
    # A thing both deny ("hates phone calls" / "dislikes talking on the phone"): one refusal in two wordings.
    both = (a.negated & b.negated) - verbs
    if not (only_a and only_b) or both:
        return None
    return " ".join(only_a), " ".join(only_b)


def _denied_apart_zh(a: Reading, b: Reading) -> tuple[str, str] | None:
    """Chinese, where a shared character is often half of two words (牛肉 / 羊肉): the same sentence with
    one stretch replaced, denied on both sides (我不喝酒 / 我不喝可乐). Next to English: never (糖 / sugar)."""
    if not (a.cjk and b.cjk):
        return None
    ops = [
        op
        for op in SequenceMatcher(None, a.tokens, b.tokens, autojunk=False).get_opcodes()
        if op[0] != "equal"
    ]
    if len(ops) != 1 or ops[0][0] != "replace":
        return None
    _, i1, i2, j1, j2 = ops[0]
    x, y = a.tokens[i1:i2], b.tokens[j1:j2]
    if all(t in a.negated for t in x) and all(t in b.negated for t in y):
        return "".join(x), "".join(y)
    return None


def _digits(r: Reading) -> tuple[str, ...]:
    """The numbers written in digits, in the order the text says them."""
    return tuple(number_term(t) for t in r.tokens if t[:1].isdigit())


def _numbered(r: Reading) -> frozenset[tuple[str, str]]:
    """Each number with the word it belongs to (the last word before it that is not a stopword, or the
    first after it): "Ella is 8 and Noah is 5" and "Noah (5) and Ella (8)" number the same things."""
    words = [("", n) if (n := number_term(t)) else (stem(t), "") for t in r.tokens if t not in STOPWORDS]
    out = set()
    for i, (_, n) in enumerate(words):
        if n:  # "2" and "two" alike; the word before it, or else after it: "Kids: 2 (…)" / "Two kids: …"
            before = next((w for w, _ in reversed(words[:i]) if w), "")
            out.add((before or next((w for w, _ in words[i + 1 :] if w), ""), n))
    return frozenset(out)


def compare(a: Reading, b: Reading) -> Evidence:
    """How b (the new text) differs from a (the old one)."""
    num_a, num_b = a.numbers - b.numbers, b.numbers - a.numbers
    # The same numbers in another order: "handler 0 … fact 1" / "handler 1 … fact 0" is a change, but not
    # when each still belongs to the same word.
    if not (num_a or num_b) and _digits(a) != _digits(b) and _numbered(a) != _numbered(b):
        num_a, num_b = frozenset(_digits(a)), frozenset(_digits(b))
    names_a = {n for n in a.names if n not in b.content and n not in b.tokens}
    names_b = {n for n in b.names if n not in a.content and n not in a.tokens}
    # Across languages the terms and denials are compared through the glosses (我不吃猪肉 / I don't eat pork).
    shared = _bridged(a, b) & _bridged(b, a)
    neg_a, neg_b = _bridged_negated(a, b), _bridged_negated(b, a)
    agrees = _agrees(a, b) or _agrees(b, a)
    hedged = a.hedged | b.hedged
    flips = tuple(sorted(t for t in shared - hedged if (t in neg_a) != (t in neg_b))) if not agrees else ()
    slot = new_slot = None
    for hit in a.slots:
        other = b.slot(hit.name)
        if other is not None:
            slot, new_slot = _bridged_slot(a, b, hit), _bridged_slot(b, a, other)
            break
    tools_a, tools_b = dict(a.versions), dict(b.versions)
    version = next(((t, tools_a[t], v) for t, v in tools_b.items() if t in tools_a and tools_a[t] != v), None)
    frame, number_only = _frame(a, b)
    antonym, antonym_words = _antonym_words(a, b)
    bridged_a, bridged_b = _bridged(a, b), _bridged(b, a)
    bridged = bridged_a & bridged_b
    sizes = len(bridged_a) + len(bridged_b)
    nouns_a, nouns_b = a.content - VERB_STEMS, b.content - VERB_STEMS
    return Evidence(
        shared_nouns=len(nouns_a & nouns_b),
        noun_overlap=len(nouns_a & nouns_b) / min(len(nouns_a), len(nouns_b)) if nouns_a and nouns_b else 0.0,
        other_subject=_other_subject(a, b),
        qualifiers=_qualifiers(a, b),
        flips=flips,
        agrees=agrees,
        swapped=_swapped(a, b),
        antonym=antonym,
        antonym_words=antonym_words,
        slot=slot,
        new_slot=new_slot,
        version=version,
        numbers_changed=bool(num_a and num_b),
        numbers_differ=bool(num_a or num_b),
        names_changed=bool(names_a and names_b),
        names_differ=bool(names_a or names_b),
        frame=frame,
        number_only=number_only,
        cues=tuple(c for c in b.cues if c not in a.cues),
        replaces=b.replaces and not a.replaces,
        denies_other=_denies_other(a, b, slot, new_slot),
        still=b.still,
        old_extra=a.content - b.content,
        new_extra=b.content - a.content,
        overlap=len(bridged) / min(len(bridged_a), len(bridged_b)) if bridged_a and bridged_b else 0.0,
        lexical=2 * len(bridged) / sizes if sizes else 1.0,
        cjk=a.cjk or b.cjk,
        anchors=a.names | b.names | a.numbers | b.numbers | _english_in(a) | _english_in(b),
        subjects=a.subject | b.subject,
        shared_denied=frozenset(t for t in shared if t in neg_a and t in neg_b),
        shared_anchors=(a.names | a.numbers) & (b.names | b.numbers | b.content),
        denied_apart=_denied_apart(a, b),
        denied=a.negated | b.negated,
        new_denied=neg_b,
        antonym_agrees=_antonym_agrees(a, b),
        kind_flip=next(
            iter(sorted((a.negated & b.kinds - b.negated) | (b.negated & a.kinds - a.negated))), None
        ),
        adds=b.adds and not a.adds,
        old_text=a.text,
        new_text=b.text,
    )
