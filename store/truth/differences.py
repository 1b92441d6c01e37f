"""How a new memory text differs from an old one: the reasons a merge would lose a fact.

Given the Features of both texts (store.truth.features), `compare` names what they disagree about:

- polarity: a negation on one side only, unless the negated words are what the other side already
  ranked lower ("pip over uv", then "stopped using uv": the same opinion);
- antonyms: like/dislike, early/late, short/detailed, 深色/浅色…;
- swapped preference: "X over Y" on one side, "Y over X" on the other (or the new text prefers something
  else over what the old one named);
- values: a number or a name on one side only, or a changed slot ("my dog is called Rex" → "… Bruno");
- a change marker on the new side only.

store.truth.classify turns these and the cosine into merge, supersede, review or add. Why apart from
store.truth.features: a text is read once per memory, a pair is compared once per neighbour, and every
rule here is about the pair, never about one text alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher

from store.truth.features import Features, content_seq, stem
from store.truth.lexicon import ANTONYMS_EN, ANTONYMS_ZH, HAS_CJK, NEG_EN, NOT_NEG_EN, STOPWORDS


@dataclass(frozen=True, slots=True)
class Differences:
    """How a new text (b) differs from an old one (a). Each field names a reason a merge would lose a fact."""

    polarity: bool  # one side negated
    agrees: bool  # one side turns down what the other ranked below something: the same opinion
    antonym: str | None  # "like/dislike"
    swapped: bool  # opposite preference
    numbers_changed: bool  # each side has a number the other lacks
    numbers_differ: bool  # either side has a number the other lacks
    names_changed: bool  # each side has a name the other lacks (or a slot's value changed)
    names_differ: bool  # either side has a name the other lacks
    slot: bool  # one short stretch replaced, the rest word for word
    change_marker: bool  # the new text says something changed
    replaced: bool  # each side has content words the other lacks
    overlap: float  # shared content words / the shorter text's content words
    lexical: float  # Dice coefficient of content words (CJK: characters): the similarity used for Chinese

    @property
    def contradiction(self) -> bool:
        return self.polarity or self.antonym is not None or self.swapped

    @property
    def value_change(self) -> bool:
        return self.numbers_changed or self.names_changed

    @property
    def blocks_merge(self) -> bool:
        """A merge would keep one wording and lose what only the other said."""
        return self.contradiction or self.numbers_differ or self.names_differ

    def reasons(self) -> tuple[str, ...]:
        out = []
        if self.polarity:
            out.append("negation")
        if self.antonym:
            out.append(f"antonym {self.antonym}")
        if self.swapped:
            out.append("swapped preference")
        if self.numbers_changed:
            out.append("number changed")
        elif self.numbers_differ:
            out.append("numbers differ")
        if self.names_changed:
            out.append("name changed")
        elif self.names_differ:
            out.append("names differ")
        if self.change_marker:
            out.append("says it changed")
        return tuple(out)


def _antonym(a: Features, b: Features) -> str | None:
    pairs = ANTONYMS_ZH if (a.cjk or b.cjk) else ANTONYMS_EN
    if a.cjk or b.cjk:
        for x, y in pairs:
            for p, q in ((x, y), (y, x)):
                if p in a.text and q in b.text and q not in a.text and p not in b.text:
                    return f"{p}/{q}"
        return None
    ta, tb = set(a.tokens), set(b.tokens)
    for x, y in pairs:
        for p, q in ((x, y), (y, x)):
            if p in ta and q in tb and q not in ta and p not in tb:
                return f"{p}/{q}"
    return None


def _swapped(a: Features, b: Features) -> bool:
    for winner, loser in a.preferences:
        if any(l2 == winner or w2 == loser for w2, l2 in b.preferences):
            return True
    # Both compare, with the same words in another order ("black over ruff format" / "ruff format over black").
    if (
        a.preferences
        and b.preferences
        and sorted(a.sequence) == sorted(b.sequence)
        and a.sequence != b.sequence
    ):
        return True
    # The new text prefers something the old one never named over what the old one named.
    for winner, loser in b.preferences:
        if loser in a.content and winner not in a.content and not a.preferences:
            return True
    return False


def _negated_words(f: Features) -> list[str]:
    """The first content words after the first negation: what "stopped using uv" or "no longer X" is about."""
    if f.cjk:
        return []
    m = NEG_EN.search(NOT_NEG_EN.sub(" ", f.text))
    if m is None:
        return []
    return content_seq(f.text[m.end() :], False)[:2]


def _agrees(a: Features, b: Features) -> bool:
    """b turns down what a already ranked below something else ("pip over uv", then "stopped using uv"):
    the same opinion in other words, not a reversal."""
    negated = _negated_words(b)
    return any(loser in negated and winner not in negated for winner, loser in a.preferences)


def _slot_changed(a: Features, b: Features) -> bool:
    """The same sentence with short stretches replaced: "my dog is called Rex" → "… Bruno", "on Mondays and
    Fridays" → "on Tuesdays and Thursdays". Nothing inserted or deleted, most words kept."""
    x, y = a.tokens, b.tokens
    ops = [op for op in SequenceMatcher(None, x, y, autojunk=False).get_opcodes() if op[0] != "equal"]
    if not ops or any(tag != "replace" for tag, *_ in ops):
        return False
    if any(i2 - i1 > 3 or j2 - j1 > 3 for _, i1, i2, j1, j2 in ops):
        return False
    changed = sum(i2 - i1 for _, i1, i2, _, _ in ops)
    if len(x) - changed < max(2, 0.5 * len(x)):
        return False
    words = [t for _, i1, i2, j1, j2 in ops for t in (*x[i1:i2], *y[j1:j2]) if not HAS_CJK.match(t)]
    return not any(w in STOPWORDS for w in words)


def compare(a: Features, b: Features) -> Differences:
    """How b (the new text) differs from a (the old one)."""
    num_a, num_b = a.numbers - b.numbers, b.numbers - a.numbers
    tokens_a, tokens_b = set(a.tokens), set(b.tokens)
    names_a = {n for n in a.names if n not in tokens_b and stem(n) not in b.content}
    names_b = {n for n in b.names if n not in tokens_a and stem(n) not in a.content}
    slot = _slot_changed(a, b)
    agrees = _agrees(a, b) or _agrees(b, a)
    shared = len(a.content & b.content)
    sizes = len(a.content) + len(b.content)
    return Differences(
        polarity=a.negative != b.negative and not agrees,
        agrees=agrees,
        antonym=_antonym(a, b),
        swapped=_swapped(a, b),
        numbers_changed=bool(num_a and num_b),
        numbers_differ=bool((num_a - {"1"}) or (num_b - {"1"})),
        names_changed=bool(names_a and names_b) or slot,
        names_differ=bool(names_a or names_b) or slot,
        slot=slot,
        replaced=bool(a.content - b.content) and bool(b.content - a.content),
        change_marker=b.change and not a.change,
        overlap=shared / min(len(a.content), len(b.content)) if a.content and b.content else 0.0,
        lexical=2 * shared / sizes if sizes else 1.0,
    )
