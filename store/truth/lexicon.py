"""The words the truth rules read with: negations, change cues, who a memory is about, synonyms, numbers.

Why a module of its own: these lists are the part that grows (a missed cue, a new way to say "no sugar",
a Chinese idiom that looks like a negation but is not) and are reviewed as language, not as code. The
logic that reads one text (store.truth.reading), names the kind of fact (store.truth.slots) and
compares two (store.truth.compare) never holds a word list itself.
"""

from __future__ import annotations

import re


def words(text: str) -> frozenset[str]:
    """A word list written as one string (easier to read and to grow than one item a line)."""
    return frozenset(text.split())


CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
TOKEN = re.compile(
    rf"[{CJK}]|[0-9]+(?:[.:,][0-9]+)*(?:st|nd|rd|th|k|km|kg|am|pm)?|"
    r"[A-Za-z][A-Za-z0-9.+#'’_-]*[A-Za-z0-9+#]|[A-Za-z]"
)
HAS_CJK = re.compile(f"[{CJK}]")
CLAUSE_END = re.compile(r"[.;!?。；！？]|,\s|，|\bbut\b|\bthough\b|\bso\b")

STOPWORDS = words(
    """a an the i i'm im i've i'd i'll my me mine we we're we've our ours us you your he she it its they
    them their is am are was were be been being 's to of in on at for with by from as and or but so that
    this these those there here it's do does did have has had having will would should can could may
    might must about into over than then just also really very please what which who whom whose when
    where why how all any each few more most other some such only own same too s t let's let one's user
    user's users remember note that's i’m it’s actually honestly pretty quite mostly usually mainly lot
    bit kind sort thing things"""
)
# The words that name the person the memories are about (the user): not a subject of their own.
SELF = words("""i i'm im i've i'd i'll me my mine myself we we're we've our ours us user user's""")

# -- negation ------------------------------------------------------------------------------------------
# A negator turns the content words after it (to the end of the clause, at most NEG_SCOPE of them)
# negative: "no sugar", "doesn't eat meat", "stopped playing the guitar", "never flies Ryanair".
NEG_SCOPE = 4
NEGATORS = words(
    """not no never none nobody nothing neither nor cannot without n't dont doesnt didnt isnt arent wasnt
    werent wont cant couldnt wouldnt shouldnt havent hasnt hadnt don't doesn't didn't isn't aren't
    wasn't weren't won't can't couldn't wouldn't shouldn't haven't hasn't hadn't don’t doesn’t didn’t
    isn’t can’t won’t stop stopped stops quit quits quitting dropped dislike dislikes disliked hate
    hates hated distrust distrusts distrusted avoid avoids avoided cancel cancels cancelled canceled left leave leaving sold
    skip skips deleted removed uninstalled ditched zero non"""
)
# Of those, the verbs: right after a plain negator they deny the denial ("never skip breakfast", "don't
# hate mornings", "never left Berlin") and affirm what follows.
VERB_NEGATORS = words(
    """stop stopped stops quit quits quitting dropped dislike dislikes disliked hate hates hated distrust
    distrusts distrusted avoid avoids avoided cancel cancels cancelled canceled left leave leaving sold skip
    skips deleted removed uninstalled ditched"""
)
# Words that say "not often": what follows is neither affirmed nor denied ("rarely drinks", "almost never
# watches TV"), so it never reads as the opposite of "drinks" or of "doesn't drink".
SOFT_NEGATORS = words("rarely seldom hardly barely scarcely infrequently")
# Of those, the ones that deny a noun phrase, not a verb: their denial ends at a preposition once it has
# denied something ("no sugar in my coffee" denies the sugar, not the coffee; "zero sugar in drinks").
# A verb's denial reaches on ("dislikes talking on the phone": the phone is part of what is disliked).
NOUN_NEGATORS = words("no without zero non")
NOUN_SCOPE_ENDS = words("in on at for with from during after before inside into per")
# Words that look like a negation but compare ("rather than X", "instead of X") or do not deny anything.
NOT_NEGATION = re.compile(
    r"\b(?:rather\s+than|instead\s+of|not\s+only|no\s+matter|no\s+problem|not\s+bad|never\s+mind)\b",
    re.IGNORECASE,
)
# Read as "quit": a denial of what follows, and a change cue.
GIVE_UP = re.compile(
    r"\b(?:(?:gave|give|gives|giving)\s+up|step(?:ped|s)?\s+down\s+(?:as|from)|resigned\s+(?:as|from)|"
    r"(?:shut|closed|wound)\s+down|discontinued)\b",
    re.IGNORECASE,
)
# Suffixes and prefixes that deny their stem: "sugar-free", "sugarless", "non-smoker", "unhappy".
NEG_SUFFIX = re.compile(r"^(.+?)-?(?:free|less)$")
NEG_PREFIX_WORDS = words(
    """unhappy unemployed unmarried unvaccinated unsure unwilling unable uninterested unsatisfied"""
)
# Chinese: the characters after a negator, to the end of the clause.
NEG_ZH = re.compile(
    r"不再|不要|不能|不会|不用|从不|从没|没有|没|不|别|无|戒掉|戒了|戒|退了|放弃|停止|停用|讨厌"
)
SOFT_ZH = re.compile(r"很少|几乎不|几乎没|不怎么|偶尔|难得")  # "rarely": as SOFT_NEGATORS
NOT_NEG_ZH = re.compile(r"而不是|不是.{0,6}而是|不错|不同|不仅|不少|差不多|不管|不久")

# Words that state a negated term themselves ("vegetarian" = no meat), and plain synonyms.
IMPLIES: dict[str, tuple[tuple[str, bool], ...]] = {
    "vegetarian": (("meat", True), ("fish", True)),
    "veggie": (("meat", True),),
    "vegan": (("meat", True), ("dairy", True), ("animal", True)),
    "pescatarian": (("meat", True), ("fish", False)),
    "teetotal": (("alcohol", True), ("drink", True)),
    "teetotaler": (("alcohol", True), ("drink", True)),
    "teetotaller": (("alcohol", True), ("drink", True)),
    "non-driver": (("drive", True),),
    "childless": (("kid", True),),
    "ex-smoker": (("smoke", True),),
    "sweetened": (("sugar", False),),  # so that "never sweetened" denies sugar
    "sober": (("alcohol", True), ("drink", True)),
    "decaf": (("caffeine", True), ("coffee", False)),
    "black": (("milk", True),),
    "non-smoker": (("smoke", True),),
    "nonsmoker": (("smoke", True),),
    "meat-free": (("meat", True),),
    "unsweetened": (("sugar", True),),
    "only-child": (("siblings", True),),  # stemmed as "siblings" is: "sibling"
}
# Kinds of a thing a refusal names ("vegetarian" → no meat; "chicken" is meat): read one way only. A
# text that does what another rules out ("Started eating chicken again" after "Vegetarian") is a
# reversal when it says it changed; a denied kind denies nothing more ("I don't eat pork" is not "no meat").
HYPERNYMS = {
    **dict.fromkeys(words("chicken beef pork bacon lamb steak ham sausage sausages burger burgers"), "meat"),
    **dict.fromkeys(
        words(
            "wine beer beers gin whisky whiskey vodka pint pints cocktail cocktails champagne prosecco cider rum"
        ),
        "alcohol",
    ),
    **dict.fromkeys(words("iphone pixel android"), "smartphone"),
    **dict.fromkeys(words("puppy kitten dog cat dogs cats"), "pet"),
    "baby": "kid",
    **dict.fromkeys(
        words("latte lattes cappuccino cappuccinos espresso espressos americano mocha macchiato"), "coffee"
    ),
    **dict.fromkeys(words("chocolate cake cakes dessert desserts candy biscuits cookies"), "sweet"),
}
# ... not in these compounds: "ginger beer" is not alcohol.
NOT_HYPONYM = re.compile(
    r"\b(?:ginger|root|alcohol[\s-]*free|non[\s-]*alcoholic|zero|vegan|veggie|plant[\s-]*based|fake|toy|hot)\s+(\w+)",
    re.IGNORECASE,
)
SYNONYMS = {
    "television": "tv",
    "telly": "tv",
    "children": "kid",
    "child": "kid",
    "kids": "kid",
    "apartment": "flat",
    "boss": "manager",
    "smoking": "smoke",
    "smoker": "smoke",
    "cigarette": "smoke",
    "drinking": "drink",
    "alcoholic": "alcohol",
    "emojis": "emoji",
    "fortnightly": "biweekly",
    "booze": "alcohol",
    "religious": "religion",
    "cilantro": "coriander",
    "bicycle": "bike",
    "bicycles": "bike",
    "cycle": "bike",
    "cycles": "bike",
    "cycling": "bike",
    "cycled": "bike",
    "biking": "bike",
    "commuter": "commute",
    "spouse": "partner",
    "prod": "production",
    "reply": "answer",
    "replies": "answer",
    "response": "answer",
    "responses": "answer",
    "guitarist": "guitar",
    "based": "live",
    "reside": "live",
    "resides": "live",
    "kilometres": "km",
    "kilometers": "km",
    "mum": "mother",
    "mom": "mother",
    "mam": "mother",
    "dad": "father",
    "employed": "work",
    "job": "work",
    "brief": "short",
    "prefer": "lik",
    "prefers": "lik",
    "preferred": "lik",
    "sugary": "sugar",
    "born": "birthday",
    "js": "javascript",
    "ts": "typescript",
    "k8s": "kubernetes",
    "using": "use",
    "used": "use",
    "groceries": "shop",
    "grocery": "shop",
    "shopping": "shop",
    "mornings": "morning",
    "bf": "boyfriend",
    "gf": "girlfriend",
    "bro": "brother",
    "sis": "sister",
    "movie": "film",
    "movies": "film",
    "films": "film",
    "concise": "short",
    "licence": "license",
    "mon": "monday",
    "tue": "tuesday",
    "tues": "tuesday",
    "wed": "wednesday",
    "thu": "thursday",
    "thur": "thursday",
    "thurs": "thursday",
    "fri": "friday",
    "sat": "saturday",
    "sun": "sunday",
    "fully": "full",
    "full-time": "full",
}
# Text-speak, rewritten before a text is read at all (numbers included): "bike 2 work", "remote 4 work",
# "b4 10am", "cashews n pistachios", "Mon+Fri". A "2" or "4" is a word only between a word that takes
# "to"/"for" and a word that is no unit ("have 2 kids", "4 years" stay numbers).
TEXTING = (
    (
        re.compile(
            r"\b(go|goes|going|went|gone|come|comes|came|bike|bikes|biking|cycle|cycles|walk|walks|drive|drives|"
            r"commute|commutes|get|gets|allergic|moved|move|moving|switched|switch|changed|listen|listens|talk|"
            r"talks|back|next|due|close|similar|married|engaged|want|wants|need|needs|used|course)\s+2\s+(?=[a-z])",
            re.IGNORECASE,
        ),
        r"\1 to ",
    ),
    (
        re.compile(r"(?<=[a-z])\s+4\s+(?=(?:work|fun|now|me|you|ever|life|free|real|good|sure)\b)", re.I),
        " for ",
    ),
    (re.compile(r"\bb4\b", re.IGNORECASE), "before"),
    (re.compile(r"\b(?:in\s*)?to\s+the\s+office\b", re.IGNORECASE), "to work"),  # one place of work
    (re.compile(r"(?<=[a-z])\s+n\s+(?=[a-z])", re.IGNORECASE), " and "),
    (re.compile(r"\b(mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)\s*\+\s*(?=\w)", re.IGNORECASE), r"\1 and "),
)
# English wordings rewritten to one form before reading ("works from home" = "works remotely").
EN_PHRASES = (
    (re.compile(r"\bwork(s|ed|ing)?\s+from\s+home\b", re.IGNORECASE), r"work\1 remote"),
    (re.compile(r"\bfrom\s+home\b|\bremotely\b|\bwfh\b", re.IGNORECASE), "remote"),
    (re.compile(r"\bdb\b", re.IGNORECASE), "database"),
    (re.compile(r"(?<=\w)\s+@\s+(?=\w)"), " at "),  # "work @ asda"
    (re.compile(r"\b(?:colour\s+)?theme\b", re.IGNORECASE), "mode"),
    # "fish is off the menu", "weekends are off limits for work", "horror is not for me": "no fish"...
    (
        re.compile(r"\b(\w+)\s+(?:is|are)\s+(?:off\s+the\s+menu|off[\s-]+limits|not\s+for\s+me)\b", re.I),
        r"no \1",
    ),
    # "almost never", "hardly ever", "not very often": said as "rarely" (SOFT_NEGATORS).
    (
        re.compile(
            r"\b(?:(?:almost|nearly|practically|hardly|barely)\s+(?:never|ever)|not\s+(?:very\s+)?often)\b",
            re.I,
        ),
        "rarely",
    ),
    (
        re.compile(
            r"\b(\w+)\s+(?:is|are)(?:n't|n’t|\s+not)\s+(?:for\s+me|my\s+thing|my\s+cup\s+of\s+tea)\b", re.I
        ),
        r"no \1",
    ),
    (
        re.compile(
            r"\b(?:by\s+(?:myself|himself|herself|themselves)|on\s+(?:my|his|her|their)\s+own)\b", re.I
        ),
        "alone",
    ),
    # Two negations: "never send code without tests" = "always send code with tests".
    (
        re.compile(
            r"\b(?:never|don't|don’t|do\s+not|doesn't|doesn’t|does\s+not|won't|won’t|can't|can’t)\s+"
            r"([^.;,!?]*?)\bwithout\b",
            re.I,
        ),
        r"always \1with",
    ),
    # "used to smoke": true once, not now (the text is also read as about the past: PAST).
    (re.compile(r"\bused\s+to\b", re.IGNORECASE), "no longer"),
    (re.compile(r"\bstays?\s+off\b", re.IGNORECASE), "avoid"),
    (re.compile(r"\b(?:is|am|i'm|are)\s+not\s+a\s+parent\b", re.IGNORECASE), "has no kids"),
    (re.compile(r"\blactose[\s-]+intolerant\b", re.IGNORECASE), "no dairy"),
    (re.compile(r"\bcaffeinated\b", re.IGNORECASE), "caffeine"),
    (re.compile(r"\b(?:an\s+)?only\s+child\b", re.IGNORECASE), "only-child"),
    # Refusals said without a negator: "free of meetings", "stays away from coffee", "notifications off".
    (re.compile(r"\bfree\s+(?:of|from)\b", re.IGNORECASE), "without"),
    (
        re.compile(
            r"\b(?:stay|stays|stayed|staying|keep|keeps|steer|steers)\s+(?:away|clear)\s+(?:from|of)\b", re.I
        ),
        "avoid",
    ),
    (re.compile(r"\b([A-Za-z]+s)\s+off\b(?!\s+(?:to|at|the|for|with)\b)", re.IGNORECASE), r"no \1"),
    (re.compile(r"\bbrothers?\s+(?:or|and|nor)\s+sisters?\b", re.IGNORECASE), "siblings"),
)
# "New" starting a name ("New York", "New Relic"): not the change cue "new".
NEW_IN_NAME = re.compile(r"\bNew(?=\s+[A-Z])")
# A leading "again" ("Again: tabs over spaces", "Once again, answer in English", "Reminder again, ...")
# says the user is repeating themselves, as "still" does; "started drinking again" says a change.
RESTATED = re.compile(
    r"^\W*(?:(?:just\s+)?(?:a\s+)?reminder\s*(?:again\b)?\s*[,:!-]?\s*)?(?:once\s+)?again\b\s*[,:!-]?|"
    r"^\W*(?:just\s+)?(?:a\s+)?reminder\b\s*[,:!-]?|\bonce\s+again\b|\b(?:as\s+i\s+said|like\s+i\s+said)\b",
    re.IGNORECASE,
)
ZH_PHRASES = (  # Chinese wordings rewritten to one form before reading
    ("吃素", "不吃肉"),
    ("不是素食主义者", "吃肉"),  # before the next two: "not vegetarian" eats meat
    ("不是素食者", "吃肉"),
    ("素食主义者", "不吃肉"),
    ("素食者", "不吃肉"),
    ("滴酒不沾", "不喝酒"),
    ("戒烟", "不抽烟"),
    ("无糖", "不加糖"),
    ("不放糖", "不加糖"),
    ("搬到", "住"),
    ("搬去", "住"),
    ("搬回", "住"),
    ("住在", "住"),
    ("生活", "住"),
    ("通勤", "上班"),
    ("上班", "工作"),
    ("老婆", "妻子"),
    ("太太", "妻子"),
    ("早晨", "早上"),
    ("更喜欢", "喜欢"),
    ("喜欢用", "喜欢"),
    ("爱吃", "喜欢吃"),
    ("正在", "在"),
    ("咖啡因", "caffeine"),  # not 咖啡 (coffee): 不喝有咖啡因的 / 咖啡只喝 decaf
    ("在家办公", "远程工作"),
    ("远程办公", "远程工作"),
    ("没有对象", "单身"),
    ("旱鸭子", "不会游泳"),
    ("左撇子", "用左手"),
    ("骑自行车", "骑车"),
    ("依然", ""),  # "still": said by STILL, never a term or a slot's value
    ("仍然", ""),
    ("学习", "学"),
)
# Chinese verbs, to tell what is denied (酒 in 我不喝酒) from the act of denying it (喝).
ZH_VERBS = frozenset("吃喝用抽看玩做去来穿加放听读写开坐买碰")
# Characters that are never part of a slot's value (对海鲜过敏 / 海鲜一吃就过敏: the allergy is the seafood).
ZH_SLOT_STOP = frozenset("对吃用就一都也")
ZH_STOP = frozenset("我你他她它的了是在很都也就吗呢吧啊和与会要想还一个么这那里时用平最请些给把被着过每天")

# -- change ----------------------------------------------------------------------------------------------
# The new text says something changed: it is an update, not a second fact.
CUE_EN = re.compile(
    r"\b(?:now|nowadays|these\s+days|anymore|any\s+more|no\s+longer|moved|move|moving|relocated|relocating|"
    r"switched|switch|switching|upgraded|upgrade|downgraded|migrated|changed|change|new|newly|since|"
    r"went\s+back|gone\s+back|goes\s+back|back|removed|(?:down|(?:put|puts|went|gone|goes|bumped|moved)\s+(?:\w+\s+){0,2}up)\s+to(?=\s+[£$€]?\d)|again|instead|promoted|(?<!was\s)(?<!were\s)raised|raised(?=\s+(?:to|from|by)\b)|bumped|increased|decreased|reduced|went\s+up|went\s+down|"
    r"dropped|sold|traded|swapped|ditched|took\s+up|taken\s+up|replaced|became|become|started|starting|quit|left(?![-\w]|\s+hand)|joined|transferred|turned|"
    r"stopped|gave\s+up|cancelled|canceled|postponed|pushed|revised|finally|recently|"
    r"lately|finished|completed|hired|separated|broke\s+up|adopted|reinstalled|reorg|decided|rewrote|rewritten|"
    r"rebuilt|ported|grew|grown|promoted|passed\s+away|died|split\s+up|got\s+rid\s+of|dropped\s+out|"
    r"upped|lowered|shut\s+down|closed\s+down|wound\s+down|discontinued|graduated|"
    r"last\s+(?:week|month|year|sprint|summer|spring|autumn|fall|winter)|from\s+\S+\s+to)\b",
    re.IGNORECASE,
)
# A cue right after a negator says nothing changed ("never went back", "didn't move", 没搬).
DENIED_CUE_EN = re.compile(
    r"\b(?:never|not|no|didn't|didn’t|haven't|haven’t|hasn't|hasn’t|won't|won’t)\s+(?:\w+\s+)?$", re.I
)
DENIED_CUE_ZH = re.compile(r"(?:没有|没|不)$")
# ... only cues that are verbs: "no coffee anymore", "not … now" still say a change.
UNDENIABLE_CUES = words(
    "now nowadays anymore any more no longer again since new newly finally recently instead"
)
# Of those, the ones that also say other things ("new to Rust", "starting in June", "just", "since 2019"):
# a cue like these asks the user only when the texts are close; a verb of change ("moved", "switched",
# "rebuilt", "split up") asks even when they are further apart (store.truth.classify, cue_review).
WEAK_CUES = words(
    """now nowadays new newly since finally recently lately again back started starting became become decided
    grew grown turned change changed"""
)
CUE_ZH = re.compile(
    r"现在|搬|换成|换了|换到|改用|改学|改成|改为|改到|升级|迁移|转到|新的|不再|已经|提高|涨|降到|开始|又|离职|退了|戒|"
    r"跳槽|辞职|去世|分手|毕业|关掉|停更|上个月|上周|去年|最近|卖了|换号|取消|调去|调到"
)
STILL = re.compile(r"\b(?:still|as\s+before|as\s+always)\b|还|依然|仍然", re.IGNORECASE)

# -- who a memory is about -------------------------------------------------------------------------------
# People other than the user: "my son is 7" is about the son, not about the user.
PERSONS = words(
    """wife husband partner son daughter kid kids child children baby mother father mum mom dad parents
    parent brother sister sibling siblings grandmother grandma granny grandfather grandpa grandparents
    niece nephew cousin aunt uncle friend friends flatmate flatmates roommate neighbour neighbours
    neighbor neighbors colleague colleagues coworker co-founder cofounder team girlfriend boyfriend
    fiance fiancee ex ex-partner mother-in-law father-in-law brother-in-law sister-in-law stepson
    stepdaughter teacher mentor family"""
)
PERSONS_ZH = (
    "妻子",
    "丈夫",
    "老公",
    "老婆",
    "儿子",
    "女儿",
    "孩子",
    "小孩",
    "爸妈",
    "父母",
    "爸爸",
    "妈妈",
    "爸",
    "妈",
    "哥哥",
    "姐姐",
    "弟弟",
    "妹妹",
    "哥",  # 我哥在上海做律师: after the doubled forms, so 哥哥 is read whole
    "姐",
    "弟",
    "妹",
    "奶奶",
    "爷爷",
    "外婆",
    "外公",
    "朋友",
    "同事",
    "邻居",
    "女朋友",
    "男朋友",
    "对象",
)
# Words that make two otherwise equal subjects or slots different things ("work email" / "personal email").
QUALIFIERS = words(
    """previous former ex skip-level work personal home office private weekday weekdays weekend
    weekends morning afternoon evening night staging production prod dev development test frontend
    backend mobile web desktop admin secondary business"""
)
# Of those, the ones that make two facts different even when only one text has them ("past": see PAST).
STRONG_QUALIFIERS = words(
    "previous former ex skip-level personal private secondary staging production prod dev business past"
)
# The new text says it is one more ("I teach physics too", "also has a cat", "a second job"): added to
# the old one, never in its place.
ADDS = re.compile(
    r"\b(?:too|also|as\s+well|in\s+addition|besides|another|second)\b|也|还有|另外", re.IGNORECASE
)
# A text about the past ("I used to live in Paris", "I worked at Microsoft before that", 以前): true
# beside what holds now, so it is read as the qualifier "past" and never replaces, or is replaced by, a
# present fact without a change cue. "I've worked at Google for 5 years" is the present.
PAST = re.compile(
    r"\b(?:used\s+to|formerly|previously|before\s+that|back\s+then|in\s+the\s+past|grew\s+up|"
    r"(?:was\s+)?born(?!\s+on\b)(?!\s+in\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b)|"
    r"was\s+raised|raised\s+in|birthplace|originally\s+from|as\s+a\s+(?:kid|child|teenager|student)|when\s+i\s+was)\b|"
    r"(?<!have\s)(?<!has\s)(?<!'ve\s)(?<!’ve\s)\b(?:worked|lived|was\s+based)\b|以前|曾经|过去|出生",
    re.IGNORECASE,
)
QUALIFIERS_ZH = ("前端", "后端", "工作日", "周末", "工作", "私人", "早上", "晚上", "下午")
QUALIFIERS_ZH_EN = {
    "前端": "frontend",
    "后端": "backend",
    "工作日": "weekday",
    "周末": "weekend",
    "工作": "work",
    "私人": "personal",
    "早上": "morning",
    "晚上": "evening",
    "下午": "afternoon",
}

# Number words: the units and teens, the tens, and their compounds ("thirty-four"), as store.truth.numbers
# reads them; and a few words that say a number.
UNIT_WORDS = {
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
TENS_WORDS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
NUMBER_WORDS = {
    **{w: str(n) for w, n in UNIT_WORDS.items()},
    **{w: str(n) for w, n in TENS_WORDS.items()},
    **{f"{t}-{u}": str(tn + un) for t, tn in TENS_WORDS.items() for u, un in UNIT_WORDS.items() if un < 10},
    "hundred": "100",
    "thousand": "1000",
    "twice": "2",
    "double": "2",
    "third": "3",
}
MONTHS = words(
    """january february march april may june july august september october november december jan feb mar
    apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday
    mondays tuesdays wednesdays thursdays fridays saturdays sundays"""
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
ZH_NUMBER = re.compile(
    r"[零一二两三四五六七八九十百千万]+(?=[个次岁年月日天号点小时分钟公里元块本只位台倍条])"
)

# "W over L": the word before the comparison is preferred to the word after it.
COMPARE_EN = re.compile(
    r"\b(?:over|rather\s+than|instead\s+of|versus|vs\.?|(?:more|better)\s+than)\b", re.IGNORECASE
)
PREFER_TO = re.compile(r"\bprefer(?:s|red)?\s+(?!to\b)\w+(?:\s+\w+)?\s+(to)\b", re.IGNORECASE)
# "moved from X to Y", "switched from X to Y": X is the value that stopped being true.
FROM_TO = re.compile(
    r"\b(?:mov\w*|switch\w*|migrat\w*|chang\w*|went|upgrad\w*|transferr\w*|relocat\w*|replac\w*)\b"
    r"[^.;]*?\bfrom\s+([^.;,]+?)\s+(?:to|with)\b",
    re.IGNORECASE,
)
# Cues that say one value replaced another, even in a slot that holds many ("switched to Korean").
# (A denial, "stopped playing the guitar", says which value went: it is read as a negation instead.)
REPLACE_EN = re.compile(r"\b(?:switched|instead|replaced|changed)\b", re.IGNORECASE)
REPLACE_ZH = re.compile(r"改|换")
COMPARE_ZH = re.compile(r"而不是|胜过")
# Order and position: "stretch before runs" / "after runs" may both be true (store.truth.classify asks).
ORDER_WORDS_EN: tuple[tuple[str, str], ...] = (("before", "after"), ("above", "below"), ("earlier", "later"))
ANTONYMS_EN: tuple[tuple[str, str], ...] = (
    ("short", "long"),
    ("concise", "detailed"),
    ("brief", "detailed"),
    ("short", "detailed"),
    ("light", "dark"),
    ("early", "late"),
    ("formal", "casual"),
    ("remote", "office"),
    ("enable", "disable"),
    ("agree", "disagree"),
    ("more", "less"),
    ("junior", "senior"),
    ("married", "divorced"),
    ("single", "married"),
    ("aisle", "window"),
    ("happy", "unhappy"),
    ("trust", "distrust"),
    ("trusts", "distrusts"),
    ("quiet", "loud"),
    ("quiet", "noisy"),
    ("hot", "cold"),
    ("warm", "cold"),
    ("big", "small"),
    ("large", "small"),
    ("fast", "slow"),
    ("cheap", "expensive"),
    ("spicy", "mild"),
    ("sweet", "savoury"),
    ("sweet", "savory"),
    ("tidy", "messy"),
    ("simple", "complex"),
    ("strict", "lenient"),
    ("introvert", "extrovert"),
    ("introverted", "extroverted"),
    ("optimistic", "pessimistic"),
    ("online", "offline"),
    ("indoor", "outdoor"),
    ("indoors", "outdoors"),
    ("verbose", "terse"),
    ("high", "low"),
    ("strong", "weak"),
    ("thick", "thin"),
    ("tall", "short"),
    ("manual", "automatic"),
    ("synchronous", "asynchronous"),
    *ORDER_WORDS_EN,
)
ANTONYMS_ZH: tuple[tuple[str, str], ...] = (
    ("喜欢", "讨厌"),
    ("深色", "浅色"),
    ("简短", "详细"),
    ("简洁", "详细"),
    ("总是", "从不"),
    ("打开", "关闭"),
    ("远程", "办公室"),
    ("远程", "公司"),
    ("在家", "公司"),
)

# -- reading one text (store.truth.reading) ------------------------------------------------------------
# Words that carry a change or a tense, never what the fact is about.
NOT_TERMS = words(
    """now nowadays longer anymore again back still just finally recently since new newly these days
    currently last month week year ago already also too well though turns out after all"""
)
VERBISH = words(
    """is are was were am be been has have had 's do does did will would can could should may might must
    lives live lived works work worked plays play played runs run uses use used speaks speak loves love
    likes like prefers prefer eats eat drinks drink goes go moved switched got takes take drives drive
    commutes turned left joined started stopped quit keeps keep writes write reads read watches watch
    follows enjoys enjoy hates hate avoids avoid wants want needs need never always doesn't don't isn't
    aren't didn't hasn't haven't no not targets target requires require allows allow migrated upgraded
    replaced bought sold cancelled finished completed relocated transferred passed went came broke
    decided sees see knows know mentors volunteers coaches handles supports subscribes owns own lost
    bumped increased raised starts changed moves became become got gets manages manage gave give built
    rebuilt bought split broke made sent spent kept found began begun set put cut ran wrote taught brought
    told held wear wears wore upped happens happen happened occurs occur stays stay meets meet begins
    using living working playing running"""
)
PREPOSITIONS = words("in on at to for with from by of about into over under as before after")
LEAD_IN = words("remember note fyi please also")
# Where a denial stops when a time follows ("never work on weekends": the weekends are when, not what);
# not "of" ("a fan of horror films"), not "to" ("never learned to swim").
SCOPE_ENDS = words("in on at for before after during unless except until since")
TIME_WORDS = MONTHS | words(
    """weekend weekends weekday weekdays night nights morning mornings evening evenings afternoon afternoons
    holiday holidays lunch lunchtime noon midnight today tonight work workdays week weeks day days year
    years month months ages hour hours"""
)
NEG_FREE = re.compile(r"^([a-z]+)(-?)(free|less)$")
# "X-free" denies X ("pork-free", "screen-free") but for these; "Xless" and "X free" (two words: "sugar
# free everything") only for the things people say they go without.
NOT_FREE = words("hand hands toll duty care fancy hassle scot")
FREE_STEMS = words(
    """sugar meat salt fat gluten dairy lactose caffeine alcohol semicolon work nut smoke pork beef egg soy
    wheat carb milk peanut grain screen phone meeting kid pet cash plastic booze"""
)
# Words that say how the user stands to a thing, like a verb ("allergic to cats", "afraid of flying").
PREDICATES = words("allergic intolerant afraid scared fond keen interested good bad")
# Chinese words with the English word they say: only to compare a Chinese text with an English one ("我在
# Berlin 工作。" / "I work in Berlin."), where the characters and the words share nothing else.
ZH_GLOSS = (
    ("工作", "work"),
    ("上班", "work"),
    ("住", "live"),
    ("喜欢", "like"),
    ("爱", "love"),
    ("生日", "birthday"),
    ("用", "use"),
    ("吃", "eat"),
    ("喝", "drink"),
    ("咖啡", "coffee"),
    ("茶", "tea"),
    ("学", "learn"),
    ("说", "speak"),
    ("周末", "weekend"),
    ("笔记", "notes"),
    ("回答", "answer"),
    ("中文", "chinese"),
    ("英语", "english"),
    ("儿子", "son"),
    ("女儿", "daughter"),
    ("妻子", "wife"),
    ("老婆", "wife"),
    ("丈夫", "husband"),
    ("老公", "husband"),
    ("狗", "dog"),
    ("猫", "cat"),
    ("过敏", "allergic"),
    ("花生", "peanut"),
    ("代码", "code"),
    ("项目", "project"),
    ("手机", "phone"),
    ("经理", "manager"),
    ("公司", "company"),
    ("不", "not"),
    ("糖", "sugar"),
    ("奶", "milk"),
    ("酒", "alcohol"),
    ("肉", "meat"),
    ("辣", "spicy"),
    ("烟", "smoke"),
    ("后端", "backend"),
    ("前端", "frontend"),
    ("跑步", "run"),
    ("游泳", "swim"),
    ("健身", "gym"),
    ("写代码", "code"),
    ("记", "note"),
    ("猪肉", "pork"),
    ("牛肉", "beef"),
    ("鸡肉", "chicken"),
    ("鱼", "fish"),
    ("海鲜", "seafood"),
    ("水果", "fruit"),
    ("蔬菜", "vegetable"),
    ("面包", "bread"),
    ("米饭", "rice"),
    ("吉他", "guitar"),
    ("钢琴", "piano"),
    ("开车", "drive"),
    ("车", "car"),
    ("早上", "morning"),
    ("晚上", "evening"),
    ("孩子", "kid"),
    ("电脑", "computer"),
    ("数据库", "database"),
    ("医生", "doctor"),
    ("律师", "lawyer"),
    ("老师", "teacher"),
    ("程序员", "programmer"),
    ("工程师", "engineer"),
    ("学生", "student"),
    ("大学", "university"),
    ("音乐", "music"),
    ("电影", "film"),
    ("书", "book"),
    ("北京", "beijing"),
    ("上海", "shanghai"),
    ("深圳", "shenzhen"),
    ("广州", "guangzhou"),
    ("香港", "hong kong"),
    ("台北", "taipei"),
    ("东京", "tokyo"),
    ("伦敦", "london"),
    ("纽约", "new york"),
    ("柏林", "berlin"),
    ("巴黎", "paris"),
)

# Words before a number that are not a piece of software with a version ("year 3", "rent 1200").
NOT_SOFTWARE = (
    words(
        """year years grade age rent weight salary room line step steps page day days week weeks month months
    hour hours minute minutes km kg eur usd gbp plan top level"""
    )
    | MONTHS
)

# "Label: value", and in notes typed fast "label = value" / "label - value" (a short label only).
LABEL = re.compile(
    r"^\s*(?:([^:：0-9][^:：]{0,39}?)(?::\s+|：\s*)|([A-Za-z][\w' ]{0,24}?)\s*(?:=|\s[-–]\s)\s*)\S"
)

# "Allergies: none", "Smoking: no": the label denied, as "no allergies".
LABEL_NONE = re.compile(
    r"^\s*([A-Za-z][\w ]{0,30}?)\s*[:=-]\s*(?:none|no|nope|never|n/a|nil)\W*$", re.IGNORECASE
)
