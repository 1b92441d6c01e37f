"""What one memory text says, read from its words alone (no model, no database).

Why rules at all: an embedding says two texts are about the same thing, not whether both can be true.
"I play the guitar." and "I play the piano." are 0.72 apart, closer than many true paraphrases; "My son
is 7" and "My daughter is 4" closer still. So each text is read once for what decides that:

- terms: its content words (lightly stemmed, synonyms folded: "television" = "tv"), each marked negated or
  not, read as a person reads a negation: "no sugar", "without sugar" and "sugar-free" all deny "sugar";
  "vegetarian" denies "meat"; "I'm not vegetarian" affirms it;
- subject: who or what it is about: the user ("I", "my", "the user", a bio line with no subject), another
  person ("my son", "the user's wife", "Sam", 我女儿), or a thing ("the billing API", "Project Falcon");
- qualifiers that make two like facts different ("work email" / "personal email", weekday / weekend);
- slots (store.truth.slots): the kinds of fact it states, each with its value;
- numbers, names, versions ("Python 3.12"), preferences ("X over Y");
- change cues ("moved", "now", "no longer", 搬到, 现在) and restatement cues ("still", 还).

Each function is pure and cheap (a few regexes over one short string).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from store.truth.lexicon import (
    ADDS,
    CLAUSE_END,
    COMPARE_EN,
    COMPARE_ZH,
    CUE_EN,
    CUE_ZH,
    DENIED_CUE_EN,
    DENIED_CUE_ZH,
    EN_PHRASES,
    FREE_STEMS,
    FROM_TO,
    GIVE_UP,
    HAS_CJK,
    HYPERNYMS,
    IMPLIES,
    LABEL,
    LABEL_NONE,
    LEAD_IN,
    MONTHS,
    NEG_FREE,
    NEG_PREFIX_WORDS,
    NEG_SCOPE,
    NEG_ZH,
    NEGATORS,
    NEW_IN_NAME,
    NOT_FREE,
    NOT_HYPONYM,
    NOT_NEG_ZH,
    NOT_NEGATION,
    NOT_SOFTWARE,
    NOT_TERMS,
    NOUN_NEGATORS,
    NOUN_SCOPE_ENDS,
    NUMBER_WORDS,
    PAST,
    PERSONS,
    PERSONS_ZH,
    PREFER_TO,
    PREPOSITIONS,
    QUALIFIERS,
    QUALIFIERS_ZH,
    REPLACE_EN,
    REPLACE_ZH,
    RESTATED,
    SCOPE_ENDS,
    SELF,
    SOFT_NEGATORS,
    SOFT_ZH,
    STILL,
    STOPWORDS,
    SYNONYMS,
    TEXTING,
    TIME_WORDS,
    TOKEN,
    UNDENIABLE_CUES,
    VERB_NEGATORS,
    VERBISH,
    ZH_DIGITS,
    ZH_GLOSS,
    ZH_PHRASES,
    ZH_SLOT_STOP,
    ZH_STOP,
    ZH_VERBS,
)
from store.truth.lexicon import (
    words as word_set,
)
from store.truth.numbers import number_term, numbers_in
from store.truth.slots import ASK, LABEL_SLOTS, MANY, MANY_LABELS, ONE, ONE_LABELS, PLURAL_ONLY, SLOTS

VERSION = re.compile(r"\b([A-Za-z][A-Za-z+#-]*)\s+v?(\d+(?:\.\d+)*)\b")


@dataclass(frozen=True, slots=True)
class SlotHit:
    name: str
    kind: str  # one | many | ask
    value: frozenset[str]  # the content terms the slot is filled with


@dataclass(frozen=True, slots=True)
class Reading:
    """What one text says, as far as these rules read it."""

    text: str
    cjk: bool
    tokens: tuple[str, ...]  # casefolded words (and single CJK characters), in order
    terms: tuple[str, ...]  # content terms in order
    negated: frozenset[str]  # the terms this text denies
    hedged: frozenset[str]  # the terms it both affirms and denies ("severe nut allergy, avoid nuts")
    subject: frozenset[str]  # who/what it is about; empty: the user
    person: bool  # the subject is a person other than the user
    qualifiers: frozenset[str]
    slots: tuple[SlotHit, ...]
    numbers: frozenset[str]
    names: frozenset[str]
    versions: frozenset[tuple[str, str]]  # (tool, version)
    preferences: frozenset[tuple[str, str]]  # (preferred, less preferred)
    cues: tuple[str, ...]  # change cues, casefolded
    still: bool
    replaces: bool  # a cue that one value took another's place ("switched to", 改学), even among many
    adds: bool = False  # it says it is one more ("too", "also", "another")
    kinds: frozenset[str] = frozenset()  # what its affirmed words are kinds of ("chicken": meat; HYPERNYMS)
    normal: str = (
        ""  # the text with its phrases in one form ("works from home" → "works remote", 在家办公 → 远程工作)
    )

    @property
    def words(self) -> frozenset[str]:
        """Its casefolded words as written and as normalised: where an antonym is looked for."""
        return frozenset(self.tokens) | frozenset(t.casefold() for t in TOKEN.findall(self.normal))

    @property
    def content(self) -> frozenset[str]:
        return frozenset(self.terms)

    def slot(self, name: str) -> SlotHit | None:
        return next((s for s in self.slots if s.name == name), None)


def stem(word: str) -> str:
    """A light, consistent stem: "lives", "lived", "living" -> "liv"; synonyms folded first."""
    w = word.casefold().strip("'’.-")
    for suffix in ("'s", "’s", "'"):
        w = w.removesuffix(suffix)
    w = SYNONYMS.get(w, w)
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 5 and w.endswith("ing"):
        w = w[:-3]
    elif len(w) > 4 and w.endswith("ed"):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    # A doubled last consonant is one, whatever the ending: "call" = "calls" = "called" ("cal"), as
    # "stop" = "stopped"; collapsing only after "-ed"/"-ing" read "called" and "calls" apart.
    if len(w) > 2 and w[-1] == w[-2] and w[-1].isalpha() and w[-1] not in "aeiou":
        w = w[:-1]
    return SYNONYMS.get(w, w)


VERB_STEMS = frozenset(stem(w) for w in VERBISH)


def _zh_normal(text: str) -> str:
    for word, same in ZH_PHRASES:
        text = text.replace(word, same)
    return text


def _label(text: str) -> tuple[str, int] | None:
    """(the label, where its value starts) of a "Label: value" note, or None."""
    m = LABEL.match(text)
    if m is None or (m.group(1) and m.group(1).split()[0].casefold() in ("i", "we", "i've", "we've", "i'm")):
        return None  # "We finished the upgrade: …" is a sentence, not a label
    if m.group(2) is not None:  # "label = value": a few plain nouns, not "I went there - it was great"
        lows = [w.casefold() for w in TOKEN.findall(m.group(2))]
        if len(lows) > 3 or any(w in SELF or w in VERBISH or w in STOPWORDS for w in lows):
            return None
    return (m.group(1) or m.group(2) or ""), m.end() - 1


def _self_denying(low: str) -> tuple[tuple[str, bool], ...]:
    """(term, denied) pairs a word states by itself: "vegetarian" denies meat, "sugar-free" denies sugar,
    "unhappy" denies happy; () for an ordinary word."""
    if low in IMPLIES:
        return tuple((stem(term), neg) for term, neg in IMPLIES[low])
    free = NEG_FREE.match(low)
    if free and (
        free.group(1) in FREE_STEMS
        or (free.group(2) and free.group(3) == "free" and free.group(1) not in NOT_FREE)
    ):
        return ((stem(free.group(1)), True),)
    if low in NEG_PREFIX_WORDS:
        return ((stem(low[2:]), True),)
    return ()


def _terms_en(text: str) -> tuple[list[str], set[str], set[str]]:
    """Content terms in order, the negated ones, and the hedged ones (affirmed and denied): a negator
    denies the next NEG_SCOPE content terms
    of its clause; "vegetarian" denies "meat" (and "not vegetarian" affirms it); "sugar-free" denies sugar."""
    terms: list[str] = []
    negated: set[str] = set()
    affirmed: set[str] = set()
    gone: set[str] = set()
    for m in FROM_TO.finditer(text):  # "moved the blog from WordPress to Hugo": WordPress is no more
        gone.update(stem(w) for w in TOKEN.findall(m.group(1)) if w.casefold() not in STOPWORDS)
    for clause in CLAUSE_END.split(NOT_NEGATION.sub(" ", GIVE_UP.sub("quit", text))):
        scope = soft = 0
        noun = False  # the running denial is of a noun phrase ("no sugar in my coffee")
        prev = ""
        tokens = TOKEN.findall(clause)
        for i, raw in enumerate(tokens):
            low = raw.casefold()
            state = _negation(low, scope, soft, noun)
            if state is not None:
                scope, soft, noun = state
                continue
            if noun and low in NOUN_SCOPE_ENDS and 0 < scope < NEG_SCOPE:
                scope = 0  # "no sugar in my coffee": the coffee is where, not what is denied
                continue
            implied = _self_denying(low)
            if implied:
                for term, neg in implied:
                    terms.append(term)
                    if neg != (scope > 0):
                        negated.add(term)
                scope = 0  # "not unhappy at work": the denial is spent on "unhappy", not on the work
                continue
            if low == "free" and prev in FREE_STEMS and terms and terms[-1] == stem(prev):
                negated.add(terms[-1])  # "sugar free everything", "dairy free": as "sugar-free"
                affirmed.discard(terms[-1])
                continue
            prev = low
            if low in SCOPE_ENDS and scope and scope < NEG_SCOPE and _when(tokens[i + 1 : i + 3]):
                scope = 0  # "never work on weekends": the weekends are when, not what is denied
                continue
            if low in STOPWORDS or low in NOT_TERMS or low in ("longer", "more", "up", "any"):
                continue
            term = number_term(low) or stem(low)
            if not term:
                continue
            terms.append(term)
            if scope > 0:
                negated.add(term)
                scope -= 1
            else:
                affirmed.add(term)
            if soft > 0:  # "rarely drinks": hedged, both affirmed and denied
                negated.add(term)
                affirmed.add(term)
                soft -= 1
    # A term the text both affirms and denies ("[red]not markup[/red]", "severe nut allergy, avoid nuts")
    # is not a denial of it; it is noted as hedged, so that it is never read as the other text's opposite.
    return terms, (negated - affirmed) | gone, (negated & affirmed) - gone


def _negation(low: str, scope: int, soft: int, noun: bool) -> tuple[int, int, bool] | None:
    """The running denial after a word that denies or hedges (scope, soft scope, of a noun phrase), or
    None for any other word. A denying verb right after a negator cancels it ("never skip breakfast")."""
    if low in NEGATORS or low.endswith(("n't", "n’t")):
        if scope == NEG_SCOPE and low in VERB_NEGATORS:
            return 0, soft, False
        return NEG_SCOPE, soft, low in NOUN_NEGATORS
    if low in SOFT_NEGATORS:
        return scope, NEG_SCOPE, noun
    return None


def _when(following: list[str]) -> bool:
    """Do the words after a preposition say when ("on weekends", "after 4pm", "before the holidays")
    rather than what ("talking on the phone", "learned to swim")?"""
    words = [w.casefold() for w in following if w.casefold() not in ("the", "a", "my", "our")]
    return bool(words) and (words[0] in TIME_WORDS or words[0][0].isdigit() or words[0] in NUMBER_WORDS)


def _terms_zh(text: str) -> tuple[list[str], set[str], set[str]]:
    """Chinese: one term per character (Latin words whole). A negator denies what follows it in its clause
    ("我喝咖啡不加糖" denies the sugar, not the coffee); when only a verb follows, the whole clause ("我一点辣
    都不能吃" denies 辣 as "我不吃辣" does)."""
    terms: list[str] = []
    negated: set[str] = set()
    hedged: set[str] = set()
    affirmed: set[str] = set()
    for clause in re.split(r"[，,。.；;！!？?]", NOT_NEG_ZH.sub(" ", _zh_normal(text))):
        if SOFT_ZH.search(clause):  # 很少喝酒 / 几乎不喝酒: "rarely", neither yes nor no
            soft_terms = _zh_clause_terms(SOFT_ZH.sub(" ", clause))
            terms += soft_terms
            hedged.update(soft_terms)
            continue
        latin = [w.casefold() for w in TOKEN.findall(clause) if not HAS_CJK.match(w)]
        neg = NEG_ZH.search(clause)
        denied = neg is not None or any(
            w in NEGATORS or w.endswith(("n't", "n’t")) for w in latin
        )  # "I don't drink 咖啡"
        before = _zh_clause_terms(NEG_ZH.sub(" ", clause[: neg.start()])) if neg else []
        after = _zh_clause_terms(NEG_ZH.sub(" ", clause[neg.end() :])) if neg else []
        # Only a verb after the negator, or no verb before it (牛肉我从来不碰: the object put first): the
        # whole clause is denied; else what follows (我喝咖啡不加糖: the sugar, not the coffee).
        whole = neg is None or not [t for t in after if t not in ZH_VERBS] or not set(before) & ZH_VERBS
        clause_terms = _zh_clause_terms(NEG_ZH.sub(" ", clause)) if whole else before + after
        terms += clause_terms
        if denied:
            negated.update(clause_terms if whole else after)
            affirmed.update(t for t in clause_terms if not whole and t not in after)
        else:
            affirmed.update(clause_terms)
    # 我只喝 decaf，不喝有咖啡因的: 喝 is said and denied, so it is neither (as in English)
    return terms, negated - affirmed, hedged | (negated & affirmed)


def _zh_clause_terms(clause: str) -> list[str]:
    out = []
    for word in TOKEN.findall(clause):
        if HAS_CJK.match(word):
            if word not in ZH_STOP:
                out.append(word)
        elif word.casefold() not in STOPWORDS:
            out.append(stem(word.casefold()))
    return out


# English words memapp knows the meaning of (glosses, implied refusals, kinds, synonyms, slot words).
ENGLISH_WORDS = frozenset(
    [en for _, en in ZH_GLOSS]
    + list(IMPLIES)
    + list(HYPERNYMS)
    + list(HYPERNYMS.values())
    + list(SYNONYMS)
    + list(SYNONYMS.values())
    + [term for implied in IMPLIES.values() for term, _ in implied]
    + ["teetotaler", "backend", "frontend", "remote", "office", "manager", "team", "project", "repo"]
)


def _names(raw: list[str], cjk: bool) -> frozenset[str]:
    out = set()
    for i, tok in enumerate(raw):
        if HAS_CJK.match(tok) or tok[0].isdigit():
            continue
        low = tok.casefold()
        if low in SELF or low in MONTHS or low in STOPWORDS:
            continue
        # In Chinese text an English word is a name when it looks like one ("Shopify", "iPhone", "k8s"), not
        # when it is a plain word said in English ("我不吃 meat", "我是 vegetarian").
        plain = (
            cjk and tok.islower() and tok.isalpha() and (low in ENGLISH_WORDS or stem(low) in ENGLISH_WORDS)
        )
        if (cjk and not plain) or (i > 0 and (tok[0].isupper() or any(c.isdigit() for c in tok[1:]))):
            out.add(stem(low))
    return frozenset(out)


def _versions(text: str) -> frozenset[tuple[str, str]]:
    out = set()
    for m in VERSION.finditer(text):
        name = m.group(1).casefold()
        if name in NOT_SOFTWARE or name in STOPWORDS or len(name) < 2:
            continue
        if m.group(1)[0].isupper() or name in ("ios", "node", "python", "java", "php", "go", "ruby"):
            out.add((name, m.group(2)))
    return frozenset(out)


def _preferences(text: str, cjk: bool) -> frozenset[tuple[str, str]]:
    out = set()
    spans = [(m.start(), m.end()) for m in (COMPARE_ZH if cjk else COMPARE_EN).finditer(text)]
    if not cjk and (m := PREFER_TO.search(text)) is not None:
        spans.append((m.start(1), m.end(1)))
    for start, end in spans:
        before = [t for t in _plain_terms(text[:start], cjk) if t not in ("prefer", "lik", "us")]
        after = _plain_terms(text[end:], cjk)
        if before and after:
            out.add((before[-1], after[0]))
    return frozenset(out)


def _plain_terms(text: str, cjk: bool) -> list[str]:
    return (_terms_zh if cjk else _terms_en)(text)[0]


def _subject_en(text: str, raw: list[str]) -> tuple[frozenset[str], bool, frozenset[str]]:
    """(subject words, is a person, head words): from a "Label:" or the words before the first verb.
    Empty subject words: the user."""
    label = _label(text)
    head = (TOKEN.findall(label[0]), "") if label else _head(raw)
    if head is None:
        return frozenset(), False, frozenset()
    words, stop = head
    lows = [w.casefold() for w in words]
    bare = [w.removesuffix("'s").removesuffix("’s") for w in lows]
    # "Ana is my manager", "Mia is my daughter": the name is the value of the user's slot.
    if (
        len(words) == 1
        and words[0][0].isupper()
        and re.search(r"\bis\s+(?:my|the\s+user'?s|our)\b", text, re.I)
    ):
        return frozenset(), False, frozenset()
    owners = [b for w, b in zip(lows, bare, strict=True) if w != b and b in PERSONS]
    if label and owners:  # "Wife's employer: NHS": the wife's, not the user's
        return frozenset(stem(w) for w in owners), True, frozenset()
    # "Partner: Leo": the user's partner, a slot; "Allergic: …", "Hobbies: …": the user's, too
    if label and (any(w in ONE_LABELS for w in lows) or all(w in MANY_LABELS for w in lows)):
        return frozenset(), False, frozenset(stem(w) for w in bare if w not in SELF and w not in STOPWORDS)
    # "I'm a teacher at a primary school", "I'm an only child": facts about the user
    i_am = bool(bare) and (
        bare[0] in ("i'm", "i’m", "im") or (bare[0] == "i" and bare[1:2] in (["am"], ["was"]))
    )
    persons = [
        stem(w)
        for i, w in enumerate(bare)
        if w in PERSONS and not i_am and not _compound(lows, words, i) and not (i and lows[i - 1] == "only")
    ]
    if persons:
        named = [
            stem(w)
            for w, orig in zip(bare, words, strict=True)
            if orig[0].isupper() and w not in PERSONS and w not in SELF and w not in STOPWORDS
        ]
        return frozenset(persons + named[:1]), True, frozenset()
    # A word that denies by itself ("sugarless coffee", "vegan cheese") says what, not whom.
    content = [stem(w) for w in bare if w not in SELF and w not in STOPWORDS and not _self_denying(w)]
    if label:
        named = TOKEN.findall(text[label[1] :])[:1]
        if (
            lows in (["repo"], ["project"], ["service"], ["app"]) and named
        ):  # "repo: ledger-api. …": ledger-api
            return frozenset([stem(named[0])]), False, frozenset()
        return frozenset(content), False, frozenset()
    if not lows or bare[0] in SELF or (bare[0] in ("the", "a") and len(bare) > 1 and bare[1] in SELF):
        return frozenset(), False, frozenset(content)
    owner = [  # lower-case too, first: "tom's manager is claire" (not "the app's auth")
        stem(w.removesuffix("'s").removesuffix("’s"))
        for i, (w, orig) in enumerate(zip(lows, words, strict=True))
        if w.endswith(("'s", "’s")) and w not in SELF and w not in STOPWORDS and (orig[0].isupper() or i == 0)
    ]
    if owner:  # "Sam's manager", "Tidy's backend": someone or something named owns the slot
        return frozenset(owner), True, frozenset(content)
    if len(words) == 1 and words[0][0].isupper() and stop in VERBISH and stop not in ("is", "are", "was"):
        return frozenset(content), True, frozenset()  # "Sam works at SAP": another person
    if len(words) == 1 and re.search(r"[-_./\d]", words[0]) and stop in VERBISH:
        return frozenset(content), False, frozenset()  # "billing-service is on Django 4.2": a thing named
    if len(content) < 2 and lows[0] not in ("the", "our", "their", "his", "her"):
        return frozenset(), False, frozenset(content)  # "Vegetarian", "Allergic to cats": a bio line
    return frozenset(content), False, frozenset()


def _head(raw: list[str]) -> tuple[list[str], str] | None:
    """The words before the first verb (or preposition, number, negation) and the word that ended them;
    None when they name the user with someone ("Leo and I split up"): the user's own fact."""
    words: list[str] = []
    for tok in raw[:8]:
        low = tok.casefold()
        if low in NOT_TERMS or (not words and low in LEAD_IN):
            continue
        verb = (
            low in VERBISH
            or low in NOUN_NEGATORS
            or (not words and low.endswith(("ing", "ed")) and tok[0].isupper())
        )
        if (
            verb
            or low in PREPOSITIONS
            or tok[0].isdigit()
            or low.endswith(("n't", "n’t"))
            or low in UNAPOSTROPHED
        ):
            return words, low
        if low in ("i", "me") and words and words[-1].casefold() in ("and", "&"):
            return None
        words.append(tok)
    return words, ""


def _compound(lows: list[str], words: list[str], i: int) -> bool:
    """Is the person word at i the first half of a compound ("team lead", "family doctor") rather than
    a person ("my son Sam", "my son's school")? A plain lower-case noun after it makes a compound."""
    if lows[i].endswith(("'s", "’s")) or i + 1 >= len(lows):
        return False
    nxt = lows[i + 1]
    # "my daughter swims", "the user's father smokes", "my kids both have": a verb or an adverb follows.
    if (nxt.endswith("s") and not nxt.endswith("ss")) or nxt in (
        "both",
        "all",
        "also",
        "always",
        "never",
        "just",
        "still",
    ):
        return False
    return not words[i + 1][0].isupper() and nxt not in PERSONS and nxt not in STOPWORDS


PERSONS_ZH_SAME = {"老公": "丈夫", "老婆": "妻子", "小孩": "孩子"}  # one person, two words


def _subject_zh(text: str) -> tuple[frozenset[str], bool]:
    head = re.sub(r"^(?:我的|我们的|我们家|我们|我家|我)", "", _zh_normal(text).strip())
    for p in PERSONS_ZH:
        if head.startswith(p):
            rest = head[len(p) :]
            nick = rest[:2] if rest[:1] in ("小", "老") else ""
            return frozenset([PERSONS_ZH_SAME.get(p, p) + nick]), True
    m = re.match(r"^\s*(?:项目\s*)?([A-Za-z][\w.-]*)", head)
    named = head.startswith("项目") or re.match(r"^\s*[A-Za-z][\w.-]*\s*(?:已经|现在|用|跑|的)", head)
    if m and named and m.group(1).casefold() not in ("manager", "i"):
        return frozenset([m.group(1).casefold()]), False
    return frozenset(), False


def _slot_name(name: str, trigger: str) -> str:
    """A favourite is one value per kind of thing: "favourite band" and "favourite film" are two slots."""
    if name != "favourite":
        return name
    what = TOKEN.findall(trigger)[1:2]
    return f"favourite {stem(what[0])}" if what else name


def _slots(text: str, cjk: bool) -> tuple[SlotHit, ...]:
    """The slots each clause states (the first that matches, per slot), each with its value: the
    clause's terms and numbers less the trigger's own words (a pet's trigger holds its value)."""
    hits = []
    taken: set[str] = set()
    for clause in re.split(r"[.;!?。；！？]\s*", text):
        numbers = numbers_in(clause, TOKEN.findall(clause))
        terms = [t for t in _plain_terms(clause, cjk) if not (cjk and (t in ZH_DIGITS or t in "十百千万"))]
        for s in SLOTS:
            pattern = s.zh if cjk and s.zh is not None else s.en
            if pattern is None or s.name in taken:
                continue
            found = list(pattern.finditer(clause))
            if not found:
                continue
            taken.add(s.name)
            # A pet's or a relationship's trigger is its value ("has a dog", 单身 / 结婚); a trigger's group
            # is its value too (在腾讯工作: 腾讯).
            hit = found[-1]
            inner = set(_plain_terms(hit.group(1), cjk)) if hit.re.groups and hit.group(1) else set()
            trigger = set() if s.name in ("pet", "partner") else set(_plain_terms(hit.group(), cjk)) - inner
            value = {t for t in terms if t not in trigger and not (cjk and t in ZH_SLOT_STOP)} | numbers
            hits.append(SlotHit(_slot_name(s.name, found[-1].group()), s.kind, frozenset(value)))
            break
    label = _label(text)
    if label and not cjk:
        name = " ".join(
            stem(w) for w in TOKEN.findall(label[0].casefold()) if w not in SELF and w not in NOT_TERMS
        )
        label_words = label[0].casefold().split()
        kind = ONE if any(w in ONE_LABELS for w in label_words) else ASK
        # "Editor plugins: …", "Kids: …": a label in the plural holds many values
        last = label_words[-1]
        plural = last.endswith("s") and not last.endswith(("ss", "us", "is")) and last not in PLURAL_ONLY
        kind = MANY if plural or any(w in MANY_LABELS for w in label_words) else kind
        rest = text[label[1] :]
        label_value = frozenset(_plain_terms(rest, cjk)) | numbers_in(rest, TOKEN.findall(rest))
        known = LABEL_SLOTS.get(label[0].casefold().strip()) or _known_slot(label[0])
        if known is not None:  # "Home: Leeds": the slot "Lives in Leeds" states, whatever it is called
            hits = [h for h in hits if h.name != known]
            hits.insert(0, SlotHit(known, ONE, label_value))
        else:
            hits.insert(0, SlotHit("label:" + name, kind, label_value))
    return tuple(hits)


def _known_slot(label: str) -> str | None:
    """The one-value slot a label names in words a slot's trigger knows ("fav band rn": favourite band)."""
    for s in SLOTS:
        if s.kind == ONE and s.en is not None and (m := s.en.search(label)):
            return _slot_name(s.name, m.group())
    return None


def _cues(said: str, cjk: bool) -> tuple[str, ...]:
    """The change cues of a text, less those a negator denies ("never went back", "didn't move", 没搬)."""
    found = [(m, DENIED_CUE_ZH) for m in CUE_ZH.finditer(said)] if cjk else []
    found += [(m, DENIED_CUE_EN) for m in CUE_EN.finditer(said)]
    return tuple(
        m.group().casefold()
        for m, denied in found
        if m.group().casefold() in UNDENIABLE_CUES
        or m.group().casefold().startswith(("these", "last", "no "))
        or not denied.search(said[: m.start()])
    )


def _kinds(text: str, cjk: bool, negated: frozenset[str]) -> frozenset[str]:
    """The hypernyms of the words a text affirms ("chicken" → meat), never of a denied word, nor in a
    compound that is not the thing ("ginger beer")."""
    if cjk:
        return frozenset()
    not_kinds = {m.group(1).casefold() for m in NOT_HYPONYM.finditer(text)}
    return frozenset(
        stem(HYPERNYMS[w])
        for w in (t.casefold() for t in TOKEN.findall(text))
        if w in HYPERNYMS and w not in not_kinds and stem(w) not in negated
    )


def _past(text: str) -> frozenset[str]:
    return frozenset(("past",)) if PAST.search(text) else frozenset()


def _en_normal(text: str) -> str:
    text = RESTATED.sub(" ", LABEL_NONE.sub(r"no \1", text))
    for pattern, same in EN_PHRASES:
        text = pattern.sub(same, text)
    return text


UNAPOSTROPHED = word_set("dont doesnt didnt isnt arent wasnt werent wont cant havent hasnt")


def _texting(text: str) -> str:
    """Text-speak in plain words, before anything reads it: "bike 2 work" is "bike to work", not a number."""
    for pattern, plain in TEXTING:
        text = pattern.sub(plain, text)
    return text


IS_CONTRACTED = re.compile(
    r"\b(\w+)['’]s\s+(?=(?:a|an|the|not|no|now|still|very|from|in|at|on|always|never|really|so|too|also)\b)",
    re.IGNORECASE,
)
LEADING_CLAUSE = re.compile(
    r"\s*(?:although|though|even\s+though|while|whereas|because|since|if|when|whenever|every\s+\w+|each\s+\w+)"
    r"\b[^,;.:]{0,80},\s*(?=\w)",
    re.IGNORECASE,
)


@lru_cache(maxsize=4096)  # pure and immutable: a neighbour met again (the next add, an import) is read once
def read(text: str) -> Reading:
    original = text
    cjk = bool(HAS_CJK.search(text))
    if not cjk:
        text = _texting(text)
    raw = TOKEN.findall(_zh_normal(text) if cjk else text)
    terms, negated, hedged = _terms_zh(text) if cjk else _terms_en(_en_normal(text))
    if cjk:
        subject, person = _subject_zh(text)
        head: frozenset[str] = frozenset()
        quals = frozenset(q for q in QUALIFIERS_ZH if q in text) | _past(text)
    else:
        # "Although Spanish is her native language, Marta writes …": whom it is about comes after the comma
        lead = LEADING_CLAUSE.match(text)
        said = IS_CONTRACTED.sub(r"\1 is ", text[lead.end() :] if lead else text)  # "my wife's a teacher"
        subject, person, head = _subject_en(text, TOKEN.findall(said))
        lows = {t.casefold() for t in raw}
        quals = frozenset(q for q in QUALIFIERS if q in lows) | (head & QUALIFIERS) | _past(text)
    restated = RESTATED.search(text) is not None  # "Again: tabs over spaces" repeats, changes nothing
    said = NEW_IN_NAME.sub(" ", RESTATED.sub(" ", text))
    cues = _cues(said, cjk)
    return Reading(
        text=original,
        cjk=cjk,
        tokens=tuple(t.casefold() for t in raw),
        terms=tuple(terms),
        negated=frozenset(negated),
        hedged=frozenset(hedged),
        subject=subject,
        person=person,
        qualifiers=quals,
        slots=_slots(_zh_normal(text) if cjk else text, cjk),
        numbers=numbers_in(text, raw),
        names=_names(raw, cjk),
        versions=_versions(text),
        preferences=_preferences(text, cjk),
        cues=cues,
        still=(restated or bool(STILL.search(text))) and not cues,
        replaces=bool(REPLACE_EN.search(text)) or (cjk and bool(REPLACE_ZH.search(text))),
        adds=bool(ADDS.search(text)),
        kinds=_kinds(text, cjk, frozenset(negated)),
        normal=_zh_normal(text) if cjk else _en_normal(text),
    )
