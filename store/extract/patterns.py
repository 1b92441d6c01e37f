"""Which sentences a person says are worth remembering about them, found by phrasing (no LLM).

Why patterns: durable facts about a user are said in a small number of ways: "I prefer…", "I always…",
"don't…", "I'm building…", "our repo uses…", "I know…", "I'm learning…", "I work at…", and in Chinese
"我喜欢…", "不要…", "我在做…", "我们的项目用…", "我会…", "我是…". A rule names the phrasing, the category it
implies and a base importance; words like "always"/"务必" raise the importance, hedges like "maybe"/
"暂时" lower it. Only the user's own messages are read: the assistant's sentences are not facts about
the user. Questions and hypotheticals are never candidates.

This module is pure (text in, candidates out) so it can be tested sentence by sentence.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from store.extract import sentences
from store.secrets.sensitive import sensitive

BASE_IMPORTANCE = {"preference": 6, "project": 6, "skill": 5, "fact": 5}

_FILLER_EN = (
    r"(?:(?:btw|by the way|also|and|but|so|well|oh|ok(?:ay)?|actually|fyi|for context|for the record|"
    r"just so you know|note|anyway|honestly|personally|in general|generally|thanks|thank you|"
    r"makes sense|got it|great|cool|sure|right)[,:.!]?\s+)*"
)
_FILLER_ZH = r"(?:(?:顺便(?:说|记|提)?一下|顺便|对了|另外|还有|其实|补充一下|记一下|提醒一下|说明一下|背景)[：:，,]?\s*)*"

# (rule name, category, regex). Order matters only for ties at the same position.
_EN: list[tuple[str, str, str]] = [
    (
        "prefer",
        "preference",
        r"i (?:really |strongly |generally |usually |much |definitely )?(?:prefer|like|love|enjoy|hate|dislike|"
        r"can't stand)\b(?! (?:it|that|this|the idea|your|how|what|when|you)\b)",
    ),
    ("habit", "preference", r"i (?:always|never|usually|tend to|typically|normally|rarely)\b"),
    ("rather", "preference", r"i(?:'d| would) (?:rather|prefer)\b"),
    ("dont-want", "preference", r"i (?:don't|do not|never) (?:like|want|use|enjoy|care for)\b"),
    ("favourite", "preference", r"my (?:favou?rite|preferred|go-to)\b"),
    (
        "instruction",
        "preference",
        r"(?:please )?(?:don't|do not|never|always|avoid)\b(?! (?:worry|mind|know|think|forget that)\b)",
    ),
    ("uses", "preference", r"i (?:use|mostly use|mainly use)\b(?! (?:it|that|this|them)\b)"),
    (
        "building",
        "project",
        r"i(?:'m| am) (?:currently |now |also )?(?:building|developing|writing|working on|making|creating|"
        r"designing|maintaining|migrating|porting|shipping|leading|running)\b",
    ),
    (
        "we-are",
        "project",
        r"we(?:'re| are) (?:currently |now )?(?:building|developing|using|running|migrating|moving|deploying)\b",
    ),
    (
        "our-stack",
        "project",
        r"(?:our|my) (?:repo|repository|codebase|project|app|team|company|stack|backend|frontend|service|product|"
        r"startup|monorepo|pipeline|infra|infrastructure|ci) (?:uses|is built|runs|relies|targets|deploys|is on)\b",
    ),
    ("we-use", "project", r"we (?:use|run|deploy|ship|host)\b(?! (?:it|that|this|them)\b)"),
    ("decided", "project", r"(?:we|i)(?:'ve| have)? (?:decided|agreed|settled on|chose)\b"),
    (
        "know",
        "skill",
        r"i (?:know|understand)\b(?! (?:that|it|this|what|why|how(?! to)|you|your|about|right|i|if|"
        r"the answer|where|when|who)\b)",
    ),
    (
        "learning",
        "skill",
        r"i(?:'m| am) (?:currently |still |now )?(?:learning|studying|new to|a beginner|familiar with|comfortable "
        r"with|good at|fluent in|proficient in|an expert|experienced with|not familiar with|self-taught)\b",
    ),
    (
        "experience",
        "skill",
        r"i(?:'ve| have) (?:been (?:using|writing|coding|programming|working with|doing)|(?:never )?used|"
        r"(?:never )?worked with|experience with|\d+ years)\b",
    ),
    ("can", "skill", r"i (?:can|can't|cannot) (?:read|write|speak|code|program)\b"),
    ("role", "fact", r"i(?:'m| am) (?:a|an) (?!bit\b|little\b|lot\b|fan\b|big fan\b)\w+"),
    ("work", "fact", r"i work (?:at|for|as|in|on|with)\b"),
    ("did", "fact", r"i (?:built|led|lead|manage|managed|founded|maintain|wrote|reduced|cut|shipped)\b"),
    ("live", "fact", r"i (?:live|grew up) in\b|i(?:'m| am) (?:based|located) in\b|i(?:'m| am) from\b"),
    ("name", "fact", r"my name is\b|call me\b"),
    (
        "mine",
        "fact",
        r"my (?:wife|husband|partner|kids?|son|daughter|dog|cat|family|job|role|title|timezone|time zone|birthday|"
        r"employer|manager|team is|company is|home ?lab|setup|laptop|machine)\b",
    ),
    (
        "have",
        "fact",
        r"i have (?:a|an|two|three|four|\d+)\b(?! (?:question|problem|issue|idea|bug|error|doubt|"
        r"feeling|quick|follow-up|few questions)\b)",
    ),
    ("plan", "fact", r"i(?:'m| am) planning (?:to|a|on)\b|i plan to\b"),
]
_ZH: list[tuple[str, str, str]] = [
    (
        "zh-like",
        "preference",
        r"我(?:很|比较|更|特别|非常|一直|还是|不太|不)?(?:喜欢|偏好|偏爱|倾向于?|习惯|讨厌|爱用|更愿意)",
    ),
    ("zh-habit", "preference", r"我(?:总是|一直都?|从不|从来不|通常|一般都?)"),
    ("zh-instruction", "preference", r"(?:请|以后|记得)?(?:不要|别|尽量别|尽量不要|千万别|务必|一定要|始终)"),
    ("zh-building", "project", r"我(?:正|现在)?在(?:做|开发|写|搞|构建|维护|设计|迁移|负责)"),
    (
        "zh-our",
        "project",
        r"我们(?:的)?(?:项目|仓库|代码库|团队|公司|产品|系统|服务)(?:用|使用|是|基于|采用|跑在|部署)",
    ),
    ("zh-we-use", "project", r"我们(?:用|使用|采用|在用)"),
    ("zh-decided", "project", r"我(?:们)?(?:决定|选定|定了)"),
    (
        "zh-know",
        "skill",
        r"我(?:会|懂|熟悉|精通|擅长|学过|了解)(?!在|去|再|尽|把|给|先|帮|跟|和|让|被|用|来|说|告诉|回|想|不会|的)",
    ),
    ("zh-learning", "skill", r"我(?:正)?在学|我(?:是|算)?(?:新手|初学者)|我(?:不会|不懂|不熟悉)"),
    ("zh-am", "fact", r"我(?:是(?!说|不是|在)|叫|住在|来自|的名字是)|我在\S{1,12}(?:工作|上班|上学)"),
    ("zh-family", "fact", r"我(?:家|家里|们家)(?:人|里)?(?:都|有|不|是)"),
    ("zh-have", "fact", r"我有(?:一|两|三|四|\d)"),
    ("zh-plan", "fact", r"我(?:们)?(?:打算|计划|准备)"),
]
Rule = tuple[str, str, re.Pattern[str]]


@functools.cache
def _rules() -> tuple[list[Rule], list[Rule], list[Rule]]:
    """Compiled on first use: compiling every rule costs ~0.1 s, which every CLI start would pay."""
    en = [(n, c, re.compile(rf"^{_FILLER_EN}({p})", re.I)) for n, c, p in _EN]
    en_any = [(n, c, re.compile(rf"(?:^|[,;—–-]\s*(?:and |but |so )?)({p})", re.I)) for n, c, p in _EN]
    zh = [(n, c, re.compile(rf"(?:^{_FILLER_ZH}|[，,；;：:]\s*)({p})")) for n, c, p in _ZH]
    return en, en_any, zh


_QUESTION = re.compile(
    r"[?？]\s*$|[吗呢]\s*[。.!！]?\s*$|^(?:do|does|did|can|could|would|should|is|are|am|was|"
    r"will|shall|may|what|how|why|which|where|who)\b",
    re.I,
)
_HYPOTHETICAL = re.compile(
    r"^(?:if|what if|suppose|imagine|when you)\b|^如果|^假如|^要是|you said|你说", re.I
)
_STRONG = re.compile(
    r"\b(?:always|never|must|really|strongly|hate|love|important|definitely|every time)\b|"
    r"一定|务必|千万|总是|从不|绝对|必须",
    re.I,
)
_HEDGE = re.compile(
    r"\b(?:maybe|might|sometimes|i think|probably|for now|kind of|sort of|at the moment|"
    r"right now|this time)\b|可能|有时|暂时|这次|也许",
    re.I,
)
_INSTRUCTION = re.compile(
    r"\b(?:don't|do not|never|avoid|please)\b|不要|别放|别用|尽量别|尽量不要|千万别|务必|请勿", re.I
)
_VAGUE_END = re.compile(r"\b(?:it|this|that|them|one|so|too)[.!]?$|[它这那][。！]?$", re.I)
_SUBORDINATE = re.compile(
    r"^(?:when|whenever|for|in|on|with|if|while|at|during|since|after|before|as|"
    r"unless|because)\b",
    re.I,
)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A sentence that looks like a durable fact about the user, with a category and importance guess."""

    content: str
    category: str
    importance: int
    pattern: str
    message_id: int | None = None
    seq: int = 0


def _tidy(text: str) -> str:
    text = text.strip().strip("-–—:：,，;； ").strip()
    if not text:
        return text
    if not sentences.CJK_CHAR.match(text[0]):
        text = text[0].upper() + text[1:]
    if text[-1] not in ".!。！)\"'”":
        text += "。" if sentences.cjk_share(text) > 0.5 else "."
    return text


def _match(sentence: str) -> tuple[str, str, int] | None:
    """(rule, category, start of the statement) of the best rule, or None."""
    hits: list[tuple[int, str, str]] = []
    rules_en, rules_en_any, rules_zh = _rules()
    rules = rules_en + (rules_zh if sentences.CJK_CHAR.search(sentence) else [])
    for name, cat, pat in rules:
        m = pat.search(sentence)
        if m:
            hits.append((m.start(1), name, cat))
    if not hits:
        for name, cat, pat in rules_en_any:
            m = pat.search(sentence)
            if m:
                hits.append((m.start(1), name, cat))
    if not hits:
        return None
    hits.sort()
    start, name, cat = hits[0]
    # A fact stated together with an instruction ("we don't eat spicy food, so leave out chilli") is a
    # preference: it tells the assistant what to do.
    if cat == "fact" and (any(c == "preference" for _, _, c in hits) or _INSTRUCTION.search(sentence)):
        cat = "preference"
    return name, cat, start


def candidate_from_sentence(sentence: str) -> Candidate | None:
    """The memory a sentence suggests, or None when it is not a durable statement about the user."""
    sentence = sentence.strip()
    if _QUESTION.search(sentence) or _HYPOTHETICAL.search(sentence):
        return None
    found = _match(sentence)
    if found is None:
        return None
    name, category, start = found
    prefix = sentence[:start].strip()
    # Keep a subordinate opening ("When writing Python, I always…"); drop chit-chat ("Thanks. Btw, …").
    keep_prefix = bool(prefix) and (_SUBORDINATE.match(prefix) is not None or sentences.size(prefix) > 4)
    statement = sentence if keep_prefix else sentence[start:]
    words = sentences.size(statement)
    if words < 3 or words > 45 or (words <= 5 and _VAGUE_END.search(statement)):
        return None  # too short to stand alone ("I'm leading it."), or a paragraph rather than a fact
    importance = BASE_IMPORTANCE[category]
    if name in ("decided", "zh-decided", "instruction", "zh-instruction"):
        importance += 1
    if _STRONG.search(statement):
        importance += 1
    if _HEDGE.search(statement):
        importance -= 1
    return Candidate(_tidy(statement), category, max(1, min(10, importance)), name)


def find_candidates(messages: Iterable[tuple[int | None, int, str]]) -> list[Candidate]:
    """Candidates from (message_id, seq, content) of the user's messages, first mention first.

    A statement repeated in several messages is one candidate, one point more important.
    """
    out: dict[str, Candidate] = {}
    for message_id, seq, content in messages:
        for sent in sentences.split_sentences(content):
            c = candidate_from_sentence(sent)
            if c is None or sensitive(c.content):
                continue  # never propose remembering a password, token, PIN or card number (issue 31.7)
            key = " ".join(c.content.casefold().split())
            if key in out:
                prev = out[key]
                if prev.message_id != message_id:
                    out[key] = Candidate(
                        prev.content,
                        prev.category,
                        min(10, prev.importance + 1),
                        prev.pattern,
                        prev.message_id,
                        prev.seq,
                    )
                continue
            out[key] = Candidate(c.content, c.category, c.importance, c.pattern, message_id, seq)
    return list(out.values())
