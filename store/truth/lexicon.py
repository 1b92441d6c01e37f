"""The words the truth rules know: negations, antonyms, comparisons, change markers, numbers, months.

Why a module of its own: these lists are the part that grows (a missed antonym, a new change marker, a
Chinese idiom that looks like a negation but is not) and is reviewed as language, not as code. Keeping
them apart from store.truth.features (reading one text) and store.truth.differences (comparing two)
means adding a word never touches the logic, and the logic reads in a page.

English and Chinese side by side: "而不是" and "rather than" are comparisons, not negations, so each
negation pattern has a NOT_ pattern of look-alikes removed before it is searched.
"""

from __future__ import annotations

import re

CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
TOKEN = re.compile(rf"[{CJK}]|[0-9]+(?:[.:,][0-9]+)*|[A-Za-z][A-Za-z0-9.+#'’_-]*[A-Za-z0-9+#]|[A-Za-z]")
HAS_CJK = re.compile(f"[{CJK}]")

STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "i",
        "i'm",
        "im",
        "my",
        "me",
        "we",
        "our",
        "us",
        "you",
        "your",
        "he",
        "she",
        "it",
        "its",
        "they",
        "them",
        "their",
        "is",
        "am",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "to",
        "of",
        "in",
        "on",
        "at",
        "for",
        "with",
        "by",
        "from",
        "as",
        "and",
        "or",
        "but",
        "so",
        "that",
        "this",
        "these",
        "those",
        "there",
        "here",
        "it's",
        "do",
        "does",
        "did",
        "have",
        "has",
        "had",
        "having",
        "will",
        "would",
        "should",
        "can",
        "could",
        "may",
        "might",
        "must",
        "about",
        "into",
        "over",
        "than",
        "then",
        "just",
        "also",
        "really",
        "very",
        "please",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "all",
        "any",
        "each",
        "few",
        "more",
        "most",
        "other",
        "some",
        "such",
        "only",
        "own",
        "same",
        "too",
        "s",
        "t",
        "let's",
        "let",
        "one's",
    ]
)

# Negations and negative verbs: one side only flips the statement.
NEG_EN = re.compile(
    r"\b(?:not|no|never|none|nobody|nothing|neither|nor|cannot|without|"
    r"(?:do|does|did|is|are|was|were|wo|ca|could|would|should|have|has|had)n['’]?t|"
    r"no\s+longer|any\s?more|stopped|stop|quit|quitted|gave\s+up|give\s+up|dropped|"
    r"dislikes?|disliked|hates?|hated|avoids?|avoided|distrusts?|can['’]?t\s+stand|against)\b",
    re.IGNORECASE,
)
NOT_NEG_EN = re.compile(r"\b(?:rather\s+than|instead\s+of|not\s+only|no\s+matter)\b", re.IGNORECASE)
NEG_ZH = re.compile(r"不再|不|没有|没|别|从不|从没|讨厌|戒|放弃|停止|停用|拒绝")
NOT_NEG_ZH = re.compile(r"而不是|不是.{0,6}而是|不错|不同|不仅|不少|差不多|不管")

ANTONYMS_EN: tuple[tuple[str, str], ...] = (
    ("like", "dislike"),
    ("likes", "dislikes"),
    ("love", "hate"),
    ("loves", "hates"),
    ("enjoy", "dislike"),
    ("enjoys", "dislikes"),
    ("prefer", "avoid"),
    ("prefers", "avoids"),
    ("trust", "distrust"),
    ("trusts", "distrusts"),
    ("always", "never"),
    ("short", "long"),
    ("concise", "detailed"),
    ("brief", "detailed"),
    ("short", "detailed"),
    ("light", "dark"),
    ("early", "late"),
    ("morning", "night"),
    ("morning", "evening"),
    ("remote", "office"),
    ("enable", "disable"),
    ("enabled", "disabled"),
    ("agree", "disagree"),
    ("allow", "forbid"),
    ("include", "exclude"),
    ("more", "less"),
    ("before", "after"),
    ("with", "without"),
    ("junior", "senior"),
    ("married", "divorced"),
    ("single", "married"),
    ("employed", "unemployed"),
    ("smoker", "non-smoker"),
)
ANTONYMS_ZH: tuple[tuple[str, str], ...] = (
    ("喜欢", "讨厌"),
    ("早上", "晚上"),
    ("早上", "夜里"),
    ("深色", "浅色"),
    ("简短", "详细"),
    ("简洁", "详细"),
    ("总是", "从不"),
    ("打开", "关闭"),
    ("远程", "办公室"),
    ("支持", "反对"),
)

# "W over L": the word before the comparison is preferred to the word after it.
COMPARE_EN = re.compile(r"\b(?:over|than|rather\s+than|instead\s+of|versus|vs\.?)\b", re.IGNORECASE)
PREFER_TO = re.compile(r"\bprefer(?:s|red)?\b.*?\b(to)\b", re.IGNORECASE)
COMPARE_ZH = re.compile(r"而不是|胜过|多于|超过|比")

CHANGE_EN = re.compile(
    r"\b(?:now|nowadays|these\s+days|moved|move|switched|switch|upgraded|upgrade|downgraded|migrated|"
    r"changed|change|new|newly|anymore|any\s+more|no\s+longer|since|went\s+back|instead|promoted|raised|"
    r"went\s+up|went\s+down|dropped|sold|replaced|became|become|started|starting|quit|left|joined|"
    r"got|stopped|gave\s+up|from\s+\S+\s+to)\b",
    re.IGNORECASE,
)
CHANGE_ZH = re.compile(
    r"现在|搬到|搬去|换成|换了|换到|改用|改学|改成|改为|升级|迁移|转到|新的|新|不再|已经|提高|降到|开始|了$|了。?$"
)

NUMBER_WORDS = {
    "zero": "0",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "eleven": "11",
    "twelve": "12",
    "twenty": "20",
    "thirty": "30",
    "hundred": "100",
    "thousand": "1000",
    "twice": "2",
    "half": "0.5",
    "double": "2",
}
MONTHS = frozenset(
    [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        "mondays",
        "tuesdays",
        "wednesdays",
        "thursdays",
        "fridays",
        "saturdays",
        "sundays",
    ]
)
ZH_DIGITS = {
    "零": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
ZH_NUMBER = re.compile(r"[零一二两三四五六七八九十百千万]+(?=[个次岁年月日天号点小时分钟公里元块本只位台倍])")
# Chinese words that state the same slot: moving is the update of where one lives.
# And the verbs of a preference are one word here, as "prefer"/"like" are stopwords in English.
ZH_SAME = (
    ("搬到", "住"),
    ("搬去", "住"),
    ("住在", "住"),
    ("上班", "工作"),
    ("更喜欢", "喜欢"),
    ("喜欢用", "喜欢"),
    ("偏好", "喜欢"),
    ("爱用", "喜欢"),
    ("爱吃", "喜欢吃"),
)
