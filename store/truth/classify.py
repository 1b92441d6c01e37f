"""Same, update, second fact or contradiction? One new memory against one existing memory.

Precision first (SPEC "Long-term memories"): a silent supersede of a fact that is still true is the worst
error this product can make, worse than a missed update; a wrong merge loses a wording; a question costs
the user one keypress. So the checks run in the order a careful person would make them, and a supersede
needs evidence of change about the same subject and the same kind of fact:

    another subject (my son / my daughter, my wife / me, project A / B)   -> keep both   (distinct)
    the same fact qualified apart (work / personal email)                  -> keep both   (distinct)
    one denies what the other says ("I eat meat" / "I no longer eat meat") -> supersede   (reversal)
    the same one-value slot, a new value (where I live, manager, age)      -> supersede   (update)
    the same many-value slot, another value (instruments, languages)       -> keep both   (distinct)
    the same slot of either kind (the car I drive), a change cue           -> supersede   (update)
    ... no change cue                                                      -> ask         (unsure)
    a new version of the same tool, only a number changed in the same sentence -> supersede (update)
    the same words or a paraphrase, nothing that differs                   -> merge       (paraphrase)
    close in meaning but one side adds a name or number                    -> ask, offering the merge
    anything else                                                          -> keep both

"No sugar" = "without sugar" = "sugar-free" is read as one negated term (store.truth.reading), so it is
a paraphrase, never a reversal. The embedding's cosine only says whether two texts are related enough to
compare and how close a paraphrase is; every supersede rests on the words, so the rules hold with any
embedder (the tests use a hashed bag of words). Chinese texts use the share of characters instead of the
cosine (the model's vocabulary is English). Thresholds were tuned on the tune half of bench/eval/truth.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from store.truth.compare import PREDICATE_STEMS, Evidence, compare
from store.truth.lexicon import CJK, ORDER_WORDS_EN, TOKEN, WEAK_CUES
from store.truth.reading import VERB_STEMS, Reading, read, stem
from store.truth.slots import ASK, MANY, ONE

SENTENCE_END = re.compile(r"[.;!?。；！？]+(?:\s+|$)|[。；！？]")
CAPITALISED_RUN = re.compile(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)+")
RELATIONS = ("duplicate", "paraphrase", "reversal", "update", "unsure", "distinct", "unrelated")
SLOT_WORDS = {
    "residence": "where you live",
    "employer": "where you work",
    "manager": "who your manager is",
    "age": "an age",
    "partner": "a relationship",
    "role": "a job title",
    "team": "a team",
    "school": "a school or school year",
    "plan": "a plan or membership",
    "bank": "a bank",
    "doctor": "a doctor",
    "timezone": "a time zone",
    "contact": "contact details",
    "favourite": "a favourite",
    "plays": "something played",
    "language": "a language",
    "skill": "a skill",
    "pet": "a pet",
    "visited": "a place visited",
    "allergy": "an allergy",
    "likes": "something liked",
    "uses": "something used",
}


@dataclass(frozen=True, slots=True)
class Thresholds:
    """Similarity bounds: cosine (all-MiniLM-L6-v2 scale) for English, `zh_*` the shared-character Dice
    score when either text is Chinese."""

    related: float = 0.35  # below this nothing is compared (unless both state the same slot)
    ask_related: float = 0.25  # ... a slot that may hold one value or many: not below this
    duplicate: float = 0.90
    paraphrase: float = 0.80
    paraphrase_overlap: float = 0.62  # ... with at least `overlap` of the shorter text's terms shared
    overlap: float = 0.6
    slot_paraphrase: float = 0.45  # the same slot and value, worded differently
    offer: float = 0.72  # close but cannot merge silently: ask, offering the merge
    cue_review: float = 0.4  # related, and the new one says it changed with a verb of change: ask
    weak_cue_review: float = 0.6  # ... with a word that says other things too ("new", "now"): closer
    cue_review_shared: float = 0.25  # ... a verb of change, and both share what the fact is about
    cue_overlap: float = 0.3  # "share what it is about": this share of the shorter text's nouns
    anchored_merge: float = 0.55  # ... sharing a name or number and nothing that clashes
    anchored_offer: float = 0.55
    shared_offer: float = 0.53  # ... sharing half of what the texts are about (nouns), nothing clashing
    shared_overlap: float = 0.5
    update: float = 0.4  # a changed name or number with a change cue (and shared words)
    denied_offer: float = 0.2  # both deny the same thing, nothing else apart: offered from this cosine
    one_alias: float = 0.85  # a one-value slot's new value this close, no cue, no number: another name?
    zh_related: float = 0.2
    zh_duplicate: float = 0.95
    zh_paraphrase: float = 0.6
    zh_paraphrase_overlap: float = 0.45
    zh_slot_paraphrase: float = 0.3
    zh_offer: float = 0.5
    zh_update: float = 0.2
    zh_cue_overlap: float = 0.6


DEFAULT = Thresholds()


@dataclass(frozen=True, slots=True)
class Verdict:
    relation: str  # one of RELATIONS
    action: str  # merge | supersede | review | add
    similarity: float
    reasons: tuple[str, ...] = field(default_factory=tuple)  # plain words, shown on the conflict card

    def to_json(self) -> dict[str, Any]:
        return {
            "relation": self.relation,
            "action": self.action,
            "similarity": round(self.similarity, 4),
            "reasons": list(self.reasons),
        }


def classify(new: str, old: str, similarity: float | None, t: Thresholds = DEFAULT) -> Verdict:
    """What adding `new` next to `old` (cosine `similarity`, None without a model) should do."""
    a, b = read(old), read(new)
    return decide(a, b, compare(a, b), similarity, t)


def _slot_words(e: Evidence) -> str:
    name = e.slot.name if e.slot else ""
    if name.startswith("label:"):
        return f"“{name[6:]}”"
    if name.startswith("favourite "):  # "favourite languag": the slot's stem, shown as written
        return f"a favourite {_as_written(name.removeprefix('favourite '), e.old_text, e.new_text)}"
    return SLOT_WORDS.get(name, "the same kind of fact")


def _as_written(stems: str, *texts: str) -> str:
    """Stemmed words ("api billing") as the texts write them, in their order ("billing API"), each in its
    shortest form ("language", not "languages"); where a word is not in them, as it is and in its place."""
    written: dict[str, tuple[int, str]] = {}
    for n, w in enumerate(w for text in texts for w in TOKEN.findall(text)):
        word = w.removesuffix("'s").removesuffix("’s")
        seen = written.get(stem(w))
        written[stem(w)] = (seen[0], min(seen[1], word, key=len)) if seen else (n, word)
    words = stems.split()
    if not all(w in written for w in words):
        return " ".join(written[w][1] if w in written else w for w in words)
    return " ".join(word for _, word in sorted(written[w] for w in words))


def _values(e: Evidence) -> str:
    """The words that differ between the two values, as the user wrote them: "Berlin → Lisbon"."""
    if e.slot is None or e.new_slot is None:
        return ""
    old_only, new_only = e.slot.value - e.new_slot.value, e.new_slot.value - e.slot.value
    return f"{_shown(e.old_text, old_only)} → {_shown(e.new_text, new_only)}"


def _shown(text: str, stems: frozenset[str]) -> str:
    words = [w for w in TOKEN.findall(text) if stem(w) in stems or w in stems]
    return re.sub(f"(?<=[{CJK}]) (?=[{CJK}])", "", " ".join(dict.fromkeys(words))) or "…"


def _cue_words(e: Evidence) -> str:
    return ", ".join(f"“{c}”" for c in dict.fromkeys(e.cues))


def decide(a: Reading, b: Reading, e: Evidence, cosine: float | None, t: Thresholds = DEFAULT) -> Verdict:
    """The table in the module docstring, in its order; a supersede of a memory that says more than the
    new one is asked instead ("I live in Berlin. I work in Potsdam." / "I live in Potsdam now.":
    superseding it would drop "I work in Potsdam" from what is current, and nobody would be told)."""
    v = _decide(a, b, e, cosine, t)
    if v.action == "supersede" and len(_sentences(a.text)) > len(_sentences(b.text)):
        why = "the old memory says more than the new one, and replacing it would drop the rest"
        return replace(v, action="review", reasons=(*v.reasons, why))
    return v


def _sentences(text: str) -> list[str]:
    return [s for s in SENTENCE_END.split(text) if TOKEN.search(s)]


def _decide(a: Reading, b: Reading, e: Evidence, cosine: float | None, t: Thresholds = DEFAULT) -> Verdict:
    lexical = e.cjk or cosine is None
    sim = e.lexical if lexical else float(cosine or 0.0)
    shown = e.lexical if cosine is None else float(cosine)
    e = replace(e, close=sim >= (t.zh_duplicate if e.cjk else t.paraphrase))

    def verdict(relation: str, action: str, *reasons: str) -> Verdict:
        return Verdict(relation, action, shown, tuple(r for r in reasons if r))

    related = sim >= (t.zh_related if e.cjk else t.related)
    flips = e.flips and not e.verb_flips_only
    # A slot that holds one value or many makes two texts comparable at any cosine ("I live in Berlin." /
    # "I moved to Lisbon.", 0.33); "something used" alone is too loose ("never uses emojis" / "the
    # payments squad uses Java") below a low floor.
    slot = e.same_slot and (e.slot is None or e.slot.kind != ASK or sim >= t.ask_related or lexical)
    kind_flip = e.kind_flip is not None and bool(e.cues)
    if not (
        related
        or slot
        or flips
        or kind_flip
        or e.version
        or e.antonym
        or e.shared_denied
        or _cue_asks(e, sim, t)
    ):
        return verdict("unrelated", "add")
    apart = _apart_or_agreeing(e, verdict)
    if apart is not None:
        return apart
    if _order_only(e):  # "stretch before runs" / "stretch after runs": maybe both are true; asked
        return verdict(
            "unsure", "review", f"the same sentence in another order ({e.antonym})", _cue_reason(e)
        )
    contradiction = _contradiction(e, sim, t)
    if contradiction is not None:
        why, doubt = contradiction
        if not doubt:
            return verdict("reversal", "supersede", why, _cue_reason(e))
        return verdict("unsure", "review", why, doubt)
    by_slot = _by_slot(e, sim, t)
    if by_slot is not None:
        relation, action, why = by_slot
        return verdict(relation, action, why, _cue_reason(e))
    if e.version is not None:
        tool, old_v, new_v = e.version
        if "." not in old_v + new_v and not e.cues:  # "Server 1" / "Server 2": a version, or another one
            return verdict(
                "unsure",
                "review",
                f"another number after {tool}: {old_v} → {new_v}",
                "nothing says the old one stopped being true",
            )
        if not e.cues and (e.still or not _later(old_v, new_v)):  # "… still use Python 3.9" after 3.12
            return verdict(
                "unsure",
                "review",
                f"another version of {tool}: {old_v} → {new_v}",
                "nothing says the old one stopped being true",
            )
        return verdict("update", "supersede", f"a new version of {tool}: {old_v} → {new_v}", _cue_reason(e))
    changed = _changed_value(e, sim, t, verdict)
    if changed is not None:
        return changed
    return _paraphrase_or_both(e, sim, t, verdict)


def _apart_or_agreeing(e: Evidence, verdict: Callable[..., Verdict]) -> Verdict | None:
    """Two facts kept apart (another subject, qualified apart, two refusals of different things), or two
    that agree in other words and are asked about, never merged or superseded; None when neither."""
    if e.other_subject is not None:
        x, y = (_as_written(side, e.old_text, e.new_text) for side in e.other_subject)
        return verdict("distinct", "add", f"about different subjects ({x} / {y})")
    # "works from home" / "back in the office since March": the qualifiers are what changed, and it says so
    if e.qualifiers is not None and not (e.cues and e.antonym):
        x, y = e.qualifiers
        if "past" in y.split() and e.flips:  # "I smoke" / "I used to smoke": a reversal, read as one
            return None
        if "past" in (x + " " + y).split():
            return verdict("distinct", "add", "one of them says how it was before, the other how it is")
        return verdict("distinct", "add", f"the same kind of fact, qualified apart ({x} / {y})")
    if e.antonym_agrees is not None:  # "short" / "not long": never a reversal; asked, not merged
        if e.cues:
            return verdict("unsure", "review", f"one turns down the other's opposite ({e.antonym_agrees})")
        return verdict(
            "paraphrase", "review", f"the same in opposite words ({e.antonym_agrees}); asked, not merged"
        )
    if e.denied_apart is not None and not e.flips and not e.cues:  # "no sugar" / "no milk": two refusals
        x, y = (_as_written(side, e.old_text, e.new_text) for side in e.denied_apart)
        return verdict("distinct", "add", f"each turns down something else ({x} / {y})")
    if e.flips and e.shared_denied and not e.cues:  # "sugar-free drinks only" / "no sugary drinks"
        return verdict(
            "paraphrase", "review", "both deny the same thing; what else each denies reads differently"
        )
    return None


def _changed_value(e: Evidence, sim: float, t: Thresholds, verdict: Callable[..., Verdict]) -> Verdict | None:
    """The same sentence with another number, name or value: an update with a cue, asked without one."""
    if e.frame and e.number_only and e.numbers_changed:
        if e.cues:
            return verdict("update", "supersede", "the same sentence with another number", _cue_reason(e))
        return verdict(
            "unsure",
            "review",
            "the same sentence with another number",
            "nothing says the old one stopped being true",
        )
    if e.frame and (e.names_changed or e.numbers_changed or (e.new_extra and not e.number_only)):
        if e.cues:
            return verdict("update", "supersede", "the same sentence with another value", _cue_reason(e))
        return verdict(
            "unsure",
            "review",
            "the same sentence with another value",
            "nothing says the old one stopped being true",
        )
    if (
        e.cues
        and (e.names_changed or e.numbers_changed)
        and sim >= (t.zh_update if e.cjk else t.update)
        and (e.cjk or e.overlap >= 0.2)
    ):
        return verdict("update", "supersede", "a changed name or number", _cue_reason(e))
    return None


def _order_only(e: Evidence) -> bool:
    """The texts differ by before/after, above/below, earlier/later: never merged (the words are
    stopwords to the rest of the reading) and, without a change cue, never superseded."""
    if e.antonym is None or e.cues:
        return False
    pair = tuple(e.antonym.split("/"))
    return pair in ORDER_WORDS_EN or pair[::-1] in ORDER_WORDS_EN


def _strong(e: Evidence) -> bool:
    """A verb of change among the new text's cues ("moved", "switched"), not only words that say other
    things too ("new", "now", "started")."""
    return any(c not in WEAK_CUES and not c.startswith(("these", "last")) for c in e.cues)


def _cue_asks(e: Evidence, sim: float, t: Thresholds) -> bool:
    """The new text says something changed, and is near enough the old one for that change to be of it:
    a verb of change ("moved", "switched", "migrated") from a lower cosine than a word that says other
    things too ("new", "now", "starting"), and lower still when the two share what the fact is about
    ("the office" / "the office relocated to King's Cross"). Queued, never superseded, on this alone."""
    if not e.cues:
        return False
    if e.cjk:  # 我在读研究生 / 我研究生毕业了: most of the old one's characters, and a cue
        return sim >= t.zh_offer or (e.overlap >= t.zh_cue_overlap and sim >= t.zh_related)
    strong = _strong(e)
    about_the_same = e.shared_nouns >= 1 and e.noun_overlap >= t.cue_overlap
    if strong:
        return sim >= t.cue_review or (about_the_same and sim >= t.cue_review_shared)
    return sim >= t.weak_cue_review or (about_the_same and sim >= t.cue_review)


def _cue_reason(e: Evidence) -> str:
    return f"the new one says it changed ({_cue_words(e)})" if e.cues else ""


def _contradiction(e: Evidence, sim: float, t: Thresholds) -> tuple[str, str] | None:
    """(why the new text denies the old one, why it may not: "" when sure enough to supersede), or None.

    A denied term only counts when the rest of the old text is still there (or the new text says it
    changed): "I never work on weekends" / "Weekends are work-free" deny the same thing in other words.
    Without a change cue, a denial is sure only when it is the old sentence turned round ("I eat meat" /
    "I don't eat meat"); when each side has words of its own, or the new one does what the old one ruled
    out somewhere ("I use Windows at work"), it is asked (_doubt)."""
    if e.swapped:
        return "the preference is the other way round", ""
    verb_only = e.verb_flips_only and sim < (t.zh_related if e.cjk else t.related)
    if e.flips and not e.denies_other and not verb_only and not e.other_object:
        rest = len(e.old_extra) <= max(1, len(e.flips)) or len(e.flips) >= 2
        # "Coffee: yes, 2/day" / "Coffee: none": the label itself denied, whatever the old one said of it
        label_denied = e.slot is not None and any(e.slot.name == f"label:{f}" for f in e.flips)
        # "smoke maybe 5 cigs a day" / "dont smoke": the new one is the denial and nothing more (asked)
        bare_denial = not (e.new_extra - VERB_STEMS) and bool(e.old_extra)
        if rest or e.cues or label_denied or bare_denial:
            about = ", ".join(f"“{_as_written(f, e.old_text, e.new_text)}”" for f in e.flips)
            why = f"one says the opposite of the other about {about}"
            # Asked without a cue: each side in its own words; "I play tennis" / "I used to play tennis as a
            # kid" (about the past); "I don't use Windows" / "I use Windows at work" (the new one does what
            # the old one ruled out, somewhere or somehow: an exception as often as a change).
            affirms = all(f in e.denied for f in e.flips) and not any(f in e.new_denied for f in e.flips)
            if e.cues:
                return why, ""
            if not (rest or label_denied):
                return why, "the new one denies it outright, but the old one said more of it"
            return why, _doubt(e, affirms)
    if e.kind_flip is not None and e.cues:  # "Vegetarian." / "Started eating chicken again last month."
        return f"one now does what the other ruled out ({e.kind_flip})", ""
    if e.antonym is not None:
        old_rest, new_rest = e.old_extra - e.antonym_words, e.new_extra - e.antonym_words
        if e.cues and len(old_rest) <= 1:
            return f"opposite words ({e.antonym})", ""
        if len(old_rest) <= 1 and len(new_rest) <= 1:
            doubt = (
                "each says it in its own words, and nothing says it changed" if old_rest or new_rest else ""
            )
            return f"opposite words ({e.antonym})", doubt
    return None


def _doubt(e: Evidence, affirms: bool) -> str:
    """Why a denial said without a change cue is asked rather than superseded ("" when it is not)."""
    if e.qualifiers is not None:  # "I play tennis" / "I used to play tennis as a kid"
        return "the new one says how it was before, not that it changed"
    if e.old_extra and e.new_extra:  # "I'm allergic to peanuts" / "I can't eat peanuts"
        return "each says it in its own words, and nothing says it changed"
    said_by = (e.old_extra | e.new_extra) & PREDICATE_STEMS
    if said_by:  # "intolerant to lactose" / "can't have lactose": the word may deny it by itself
        return f"one says it with a word that may deny it by itself ({', '.join(sorted(said_by))})"
    if affirms and e.new_extra:  # "I don't use Windows" / "I use Windows at work"
        return "the new one may say where or when it holds, not that it changed"
    return ""


def _by_slot(e: Evidence, sim: float, t: Thresholds) -> tuple[str, str, str] | None:
    """Both state the same kind of fact with different values: replace, add up, or ask."""
    if not e.slot_changed or e.slot is None or e.new_slot is None:
        return None
    what = _slot_words(e)
    kind = e.slot.kind
    partial = bool(e.slot.value & e.new_slot.value - e.subjects)
    if kind == ONE and e.adds and not e.replaces:  # "I also work at a startup": a second job, or a move?
        return "unsure", "review", f"both say {what} ({_values(e)}); the new one says it is one more"
    if kind == ONE and not e.cues and _alias(e, sim, t):  # "NYC" / "New York City", "Bombay" / "Mumbai"
        return (
            "unsure",
            "review",
            f"both say {what} ({_values(e)}): another value, or the same one named differently?",
        )
    label = e.slot.name.startswith("label:")  # "Bank: lloyds" / "Bank: nationwide": a value whatever its case
    if kind == ONE and not (e.cues or e.cjk or partial or label) and not _named_values(e):
        # "Lives alone" / "Lives by himself", "a freelance illustrator" / "draws illustrations as a
        # freelancer": a one-value slot's value in common words is as often the same value reworded.
        return (
            "unsure",
            "review",
            f"both say {what} ({_values(e)}); nothing says the old one stopped being true",
        )
    if kind == ONE and not e.cues and _qualified_new(e):
        # "My manager is Tom" / "My manager at my side gig is Ana", "In summer I live in Lisbon": the new
        # value comes with words of its own, which may say where or when it holds: a second one, or a change?
        return (
            "unsure",
            "review",
            f"both say {what} ({_values(e)}); the new one may say where or when it holds, not that it changed",
        )
    if kind == ONE and (e.cues or not partial):
        return "update", "supersede", f"both say {what}, which holds one value at a time ({_values(e)})"
    if kind == ONE:  # "near the sea" / "close to the sea": the same value, or another one? Ask.
        return (
            "unsure",
            "review",
            f"both say {what} ({_values(e)}); nothing says the old one stopped being true",
        )
    if kind == MANY and e.replaces:
        return "update", "supersede", f"{what}: the new one says it took the old one's place ({_values(e)})"
    if kind == MANY:
        return "distinct", "add", f"{what}: one of many that can be true at once ({_values(e)})"
    if e.cues and _strong(e):
        return "update", "supersede", f"both say {what} ({_values(e)})"
    if e.cues:  # "uses Todoist for tasks" / "started using Obsidian for notes": a switch, or a second tool?
        return "unsure", "review", f"both say {what} ({_values(e)}); the new one may add to the old one"
    old_only = e.slot.value - e.new_slot.value - e.anchors
    new_only = e.new_slot.value - e.slot.value - e.anchors
    if len(old_only) > 1 and len(new_only) > 1:  # "Sentry for error tracking" / "Grafana for dashboards"
        return "distinct", "add", f"{what}, for different things ({_values(e)})"
    return "unsure", "review", f"both say {what} ({_values(e)}); nothing says the old one stopped being true"


def _qualified_new(e: Evidence) -> bool:
    """Does the new value hold words beside its name that the old value lacks ("side gig Ana" / "Tom"),
    while the old one is a name alone?"""
    if e.slot is None or e.new_slot is None:
        return False
    old_only, new_only = e.slot.value - e.new_slot.value, e.new_slot.value - e.slot.value
    return bool(new_only & e.anchors) and not (old_only - e.anchors) and bool(new_only - e.anchors)


def _named_values(e: Evidence) -> bool:
    """Does each side's own part of the slot's value hold a name or a number ("Berlin" / "Lisbon", "34" /
    "35")?"""
    if e.slot is None or e.new_slot is None:
        return False
    old_only, new_only = e.slot.value - e.new_slot.value, e.new_slot.value - e.slot.value
    return bool(old_only & e.anchors) and bool(new_only & e.anchors)


def _later(old: str, new: str) -> bool:
    """Is version `new` after `old` ("3.12" → "3.12.1", "15" → "16")?"""
    return tuple(int(p) for p in new.split(".") if p.isdigit()) > tuple(
        int(p) for p in old.split(".") if p.isdigit()
    )


def _alias(e: Evidence, sim: float, t: Thresholds) -> bool:
    """Two values of a one-value slot that may name one thing: one is the other's initials ("NYC" / "New
    York City", "SF" / "San Francisco"), or the texts are as close in meaning as paraphrases are while no
    number changed ("Bombay" / "Mumbai", 0.86; a move between two cities is 0.54-0.84)."""
    if _initials(e.old_text, e.new_text) or _initials(e.new_text, e.old_text):
        return True
    return not e.cjk and not e.numbers_changed and sim >= t.one_alias


def _initials(short: str, long: str) -> bool:
    """Is a word of `short` written in capitals (2-5 letters) the initials of a run of capitalised words
    of `long` that `short` does not have?"""
    caps = {w.casefold() for w in TOKEN.findall(short) if 2 <= len(w) <= 5 and w.isupper() and w.isalpha()}
    if not caps:
        return False
    for run in CAPITALISED_RUN.finditer(long):
        words = run.group().split()
        if "".join(w[0] for w in words).casefold() in caps and not any(w in short for w in words):
            return True
    return False


def _same_fact(e: Evidence, sim: float, t: Thresholds, same_value: bool, verdict: Any) -> Verdict | None:
    """Nothing differs in names or numbers: merged when the words or the meaning say it is the same fact,
    asked when most words are shared but each side names a thing of its own; None when neither."""
    duplicate = t.zh_duplicate if e.cjk else t.duplicate
    para = t.zh_paraphrase if e.cjk else t.paraphrase
    para_overlap = t.zh_paraphrase_overlap if e.cjk else t.paraphrase_overlap
    slot_para = t.zh_slot_paraphrase if e.cjk else t.slot_paraphrase
    # The same content words, nothing on either side only ("likes short replies" / "prefers brief
    # answers", synonyms folded): the same fact, at a cosine a slot paraphrase needs.
    same_words = not e.old_extra and not e.new_extra and e.overlap >= 0.99
    if sim >= duplicate:
        return verdict("duplicate", "merge", "the same fact, nearly the same words")
    if same_words and sim >= slot_para:
        return verdict("paraphrase", "merge", "the same fact in other words (the same words, or synonyms)")
    if sim >= para or (same_value and sim >= slot_para):
        return verdict("paraphrase", "merge", "the same fact in other words")
    if sim >= para_overlap and e.overlap >= t.overlap:
        # Most words shared, but each side names a thing of its own ("… route is along the river" /
        # "… route is the loop around the reservoir"): the same fact reworded, or a new value. Asked.
        if not e.cjk and e.old_extra - VERB_STEMS and e.new_extra - VERB_STEMS:
            return verdict(
                "paraphrase", "review", "most words are the same, but each names something the other does not"
            )
        return verdict("paraphrase", "merge", "the same fact in other words")
    return None


def _paraphrase_or_both(e: Evidence, sim: float, t: Thresholds, verdict: Any) -> Verdict:
    """Nothing changed: the same fact (merge), close but with a detail on one side only (ask, offering
    the merge), or another fact (keep both)."""
    same_value = e.same_slot and not e.slot_changed
    changed = e.numbers_changed or e.names_changed
    detail = changed or e.numbers_differ or e.names_differ
    if e.contradiction:
        return verdict("distinct", "add")
    if e.cues and (e.new_extra or detail):  # a change is never merged: ask when it may be one, else keep both
        if not (same_value or _cue_asks(e, sim, t)):
            return verdict("distinct", "add")
        return verdict(
            "unsure",
            "review",
            "related to the old one, and the new one says something changed",
            _cue_reason(e),
        )
    if changed and not same_value:
        return verdict("distinct", "add")
    if e.adds and e.old_extra and e.new_extra:  # "I teach math" / "I teach physics too"
        return verdict("distinct", "add", "the new one says it is one more")
    para_overlap = t.zh_paraphrase_overlap if e.cjk else t.paraphrase_overlap
    slot_para = t.zh_slot_paraphrase if e.cjk else t.slot_paraphrase
    # Both deny the same thing and say nothing else apart: "Black coffee, no sugar" / "Green tea, no
    # sugar" deny the same, but are about two drinks.
    own_words = not e.cjk and bool(
        e.old_extra - e.denied - VERB_STEMS and e.new_extra - e.denied - VERB_STEMS
    )
    if e.shared_denied and not detail and not own_words and (sim >= slot_para or e.overlap >= 0.99):
        return verdict("paraphrase", "merge" if sim >= para_overlap else "review", "both deny the same thing")
    if e.shared_denied and not (detail or own_words or e.cues or e.cjk) and sim >= t.denied_offer:
        # "Is a vegan." / "Eats no animal products at all." (0.39): asked, offering the merge
        return verdict("paraphrase", "review", "both deny the same thing, in other words")
    same = None if detail else _same_fact(e, sim, t, same_value, verdict)
    if same is not None:
        return same
    # The same name or number, nothing that clashes, and only a word or two worded differently.
    anchored = bool(e.shared_anchors) and not changed and e.overlap >= 0.5 and not e.cjk
    # Half of what it is about in common, nothing that clashes: the same fact worded apart ("Works as a
    # plumber." / "Plumber by trade.") more often than another one. Asked, never merged on this alone.
    shares_what = not e.cjk and not detail and e.shared_nouns >= 1 and e.noun_overlap >= t.shared_overlap
    if (
        anchored
        and not detail
        and sim >= t.anchored_merge
        and len(e.old_extra) <= 2
        and len(e.new_extra) <= 2
    ):
        return verdict("paraphrase", "merge", "the same fact in other words (the same name or number)")
    if (
        sim >= (t.zh_offer if e.cjk else t.offer)
        or (same_value and sim >= slot_para)
        or (anchored and sim >= t.anchored_offer and not e.cjk)
        or (shares_what and sim >= t.shared_offer)
    ):
        return verdict(
            "paraphrase", "review", "close in meaning, but one of them says something the other does not"
        )
    return verdict("distinct" if sim >= para_overlap else "unrelated", "add")


@dataclass(frozen=True, slots=True)
class Neighbour:
    """An existing, currently valid memory near the new text, as the planner needs it."""

    id: int
    content: str
    category: str
    similarity: float | None  # cosine; None when either has no vector (the words decide alone)
    protected: bool  # pinned or edited by hand: never merged or superseded without the user


@dataclass(frozen=True, slots=True)
class Plan:
    """What adding one memory does to its neighbours. `merge_into` excludes adding a new row."""

    merge_into: tuple[Neighbour, Verdict] | None = None
    supersede: tuple[tuple[Neighbour, Verdict], ...] = ()
    review: tuple[tuple[Neighbour, Verdict], ...] = ()


def plan(
    new: str, category: str, neighbours: list[Neighbour], t: Thresholds = DEFAULT, *, allow_merge: bool = True
) -> Plan:
    """Classify `new` against each neighbour (best first). A merge happens only within the category; a
    paraphrase in another category, and any supersede of a pinned or hand-edited memory, is asked."""
    merge: tuple[Neighbour, Verdict] | None = None
    supersede: list[tuple[Neighbour, Verdict]] = []
    review: list[tuple[Neighbour, Verdict]] = []
    b = read(new)
    for n in neighbours:
        a = read(n.content)
        v = decide(a, b, compare(a, b), n.similarity, t)
        if v.action == "merge":
            if allow_merge and merge is None and n.category == category:
                merge = (n, v)
            else:
                review.append((n, Verdict("paraphrase", "review", v.similarity, v.reasons)))
        elif v.action == "supersede":
            (review if n.protected else supersede).append((n, v))
        elif v.action == "review":
            review.append((n, v))
    return Plan(merge, tuple(supersede), tuple(review))
