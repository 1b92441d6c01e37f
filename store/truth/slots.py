"""Kinds of fact ("slots") a memory can state, and how many values each holds at once.

Why slots: whether a new value replaces the old one depends on the kind of fact, not on the words or the
cosine. "I play the guitar." → "I play the piano." is a second instrument (many values at once); "I live in
Berlin." → "I live in Lisbon." is a move (one value at a time). So each text is read for the slots it
states (a trigger phrase, and the content words after it as the value), and the comparison of two texts
asks: the same slot? The same value? One value or many?

    one    a new value replaces the old one (where I live, employer, manager, age, partner, a project's
           version of a named tool, a favourite)
    many   values add up (instruments, languages, likes, skills, pets, places visited, allergies)
    ask    could be either (the tool someone uses, the car they drive): a change cue decides, else the
           user is asked

The lists are language: they grow with the evaluation (bench/eval/truth), never with the test half.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from store.truth.lexicon import words

ONE, MANY, ASK = "one", "many", "ask"


@dataclass(frozen=True, slots=True)
class Slot:
    name: str
    kind: str  # one | many | ask
    en: re.Pattern[str] | None
    zh: re.Pattern[str] | None = None
    vocab: str = ""  # words that say this slot in other ways: to find the memories stating it


VOCAB = {
    "residence": "live lives living based moved move relocated home flat apartment 住 搬",
    "employer": "work works job employer company joined hired left freelance freelancing contractor 工作 上班 离职 跳槽",
    "manager": "manager boss reports 经理 领导",
    "age": "age old years turned birthday 岁",
    "partner": "married engaged dating single partner wife husband separated split broke 单身 订婚 结婚 分手",
    "role": "title role promoted position",
    "team": "team",
    "school": "school year grade nursery 年级 小学",
    "plan": "plan subscription membership",
    "bank": "bank",
    "doctor": "doctor gp therapist",
    "timezone": "timezone zone",
    "contact": "phone email address",
}


def _en(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


# Order matters: the first slot whose trigger matches a clause names it (a favourite band is one value,
# though "likes" would read it as many).
SLOTS: tuple[Slot, ...] = (
    Slot("favourite", ONE, _en(r"\b(?:favou?rite|fav)\s+\w+(?:\s+is)?\b")),
    Slot(
        "residence",
        ONE,
        _en(
            r"\b(?:live[sd]?|living|livin|based|resides?|relocat\w*|mov(?:e|ed|ing)\s+(?:back\s+)?(?:to|out\s+of|from|in\s+with|in\s+to)|"
            r"home(?:\s+(?:town|base|city))?\s+is|flat\s+is|in\s+\w+\s+now)\b(?:\s+(?:in|to|at))?"
        ),
        re.compile(r"住|搬"),
    ),
    Slot(
        "employer",
        ONE,
        _en(
            r"\b(?:work(?:s|ed|ing)?\s+(?:at|for)|employed\s+(?:by|at)|employee\s+(?:of|at)|joined|hired|"
            r"job\s+at|employer(?:\s+is)?|contractor\s+for|freelanc\w*|left(?![-\w]|\s+hand))\b|\bwork(?:s|ing)?\s*@"
        ),
        re.compile(r"(?<![现正])在(.{1,8}?)(?:工作|做|当)|离职|入职|做后端|做前端|跳槽|辞职|创业"),
    ),
    Slot("manager", ONE, _en(r"\b(?:manager|boss|reports?\s+to)\b"), re.compile(r"经理|领导|主管|manager")),
    Slot(
        "age",
        ONE,
        _en(
            r"\b(?:\d+\s*(?:years?\s+old|yo)|age[d]?\s*:?\s*\d+|turned\s+\d+|\d+(?:st|nd|rd|th)\s+birthday|"
            r"i'?m\s+\d+\b|i'?m\s+(?:twenty|thirty|forty|fifty)\S*)"
        ),
        re.compile(r"岁"),
    ),
    Slot(
        "partner",
        ONE,
        _en(
            r"\b(?:married|engaged|dating|single|separated|divorced|relationship|partner\s+is|split\s+up|"
            r"broke\s+up|seeing\s+someone)\b"
        ),
        re.compile(r"单身|订婚|结婚|分手"),
    ),
    Slot("role", ONE, _en(r"\b(?:works?\s+as|job\s+title|title|promoted\s+to|position)\b")),
    Slot("team", ONE, _en(r"\bteam\s*:|\b(?:on|to)\s+the\s+\w+\s+team\b")),
    Slot(
        "school",
        ONE,
        _en(r"\b(?:year\s+\d+|grade\s+\d+|schools?|nursery|primary|academy)\b"),
        re.compile(r"年级|小学"),
    ),
    Slot("plan", ONE, _en(r"\b(?:plan|subscription|membership)\b")),
    Slot("bank", ONE, _en(r"\bbank(?:s|ing)?\s+with\b|\bbank\s+account\b")),
    Slot("doctor", ONE, _en(r"\b(?:doctor|gp|gps|therapist)\b")),
    Slot("timezone", ONE, _en(r"\btime\s?zone\b")),
    Slot(
        "contact", ONE, _en(r"\b(?:phone\s+number|e-?mail|address)\b"), re.compile(r"邮箱|电话|手机号|号码")
    ),
    Slot("plays", MANY, _en(r"\bplay(?:s|ed|ing)?\b"), re.compile(r"弹|打|踢")),
    Slot(
        "language",
        MANY,
        _en(r"\b(?:speaks?|speaking|native|fluent|learning|studying|mother\s+tongue)\b"),
        re.compile(r"会说|学"),
    ),
    Slot("skill", MANY, _en(r"\b(?:knows?|skilled|skills?|good\s+at|proficient)\b"), re.compile(r"会")),
    Slot(
        "pet",
        MANY,
        _en(
            r"\b(?:have|has|own|owns|adopted)\s+(?:a|an|\w+)\s+(?:cat|dog|rabbit|hamster|tortoise|parrot|"
            r"beagle|collie|pet)s?\b|^\s*(?:cat|dog|pet)\s*:"
        ),
        re.compile(r"养"),
    ),
    Slot("visited", MANY, _en(r"\b(?:been\s+to|visited|travell?ed\s+to)\b"), re.compile(r"去过")),
    Slot("allergy", MANY, _en(r"\ballerg\w*\b"), re.compile(r"过敏")),
    Slot(
        "likes",
        MANY,
        _en(r"\b(?:likes?|loves?|enjoys?|fan\s+of|into|reads?|watch(?:es)?|follows?|subscribes?\s+to)\b"),
        re.compile(r"喜欢|爱|看"),
    ),
    Slot(
        "uses",
        ASK,
        _en(
            r"\b(?:uses?|using|drives?|editor|shell|browser|laptop|phone|os|ide|commut\w*|runs?\s+on|"
            r"hosted\s+on|lives\s+in\s+\w+)\b"
        ),
        re.compile(r"用|开的是|坐|骑"),
    ),
)

# "Label: value" notes: the label names the slot. Labels whose slot holds many values at once.
MANY_LABELS = words(
    """hobby hobbies interest interests language languages instrument instruments pet pets skill skills
    allergy allergies allergic cuisine cuisines sport sports"""
)
# Labels whose slot holds one value.
ONE_LABELS = words(
    """manager main editor editor timezone title team shell os car phone laptop relationship age address
    home address indent gym rent salary weight theme city town employer company dentist doctor gp bank
    provider landlord school partner status height size"""
)


# Labels that name a slot memapp knows by another name ("Home: Leeds" is where the user lives, so that
# "Moved to York" is read as a new value of it).
LABEL_SLOTS = {
    **dict.fromkeys(words("home city town location residence lives based"), "residence"),
    **dict.fromkeys(words("employer company workplace"), "employer"),
    **dict.fromkeys(words("manager boss"), "manager"),
    **dict.fromkeys(words("timezone tz"), "timezone"),
    "age": "age",
}

# Nouns that are plural in form but name one thing ("Running shoes: Pegasus 39"): such a label is not a
# list.
PLURAL_ONLY = words(
    """shoes trainers sneakers boots glasses sunglasses headphones earbuds earphones trousers jeans pants
    shorts pyjamas scissors binoculars contacts lenses"""
)


def vocabulary(name: str) -> list[str]:
    """The words that find memories stating slot `name` (a "Label:" slot: its label's words)."""
    if name.startswith("label:"):
        return name[6:].split()
    return VOCAB.get(name, "").split()


def slot_kind(name: str) -> str:
    for s in SLOTS:
        if s.name == name:
            return s.kind
    return ASK
