"""What a step says besides its values: the content words it is the first in the run to say,
whether it announces a change of approach, and what it says of the agent itself (that it
waits, apologises for an earlier answer, or talks about its own earlier output).

A short answer that names only values said before restates them ("That is 2048 KB" after
"2,097,152 bytes"), whatever its framing words. It does not when it says something else that
is new: a clause's worth of content words nobody in the run (the task included) has said, or
an announced change of approach that names what it now does ("Changing approach: asking the
carrier about order 8812", "换个思路：直接问快递公司"). An agent a nudge got out of its
spiral says exactly that, and halting it there stops a healthy run.
"""

from __future__ import annotations

import math
import re

from .observation import Observation
from .text import stems, tokens

__all__ = [
    "SAYS_MORE",
    "apologises",
    "changes_approach",
    "new_words",
    "refers_to_itself",
    "says_more",
    "waits",
]

#: New content words (a CJK character pair counting half a word) from which a short answer
#: says more than the values it restates: a new clause's worth, not a framing word or two
#: ("in other words", "so for the ticket", "结论不变").
SAYS_MORE = 4

#: An announced change of approach: the agent says it drops what it did for something else.
#: A return ("back to", "again", 改回) is no change: :func:`.similarity.says_again` reads it.
_CHANGE = re.compile(
    r"\b(?:chang|switch|shift|pivot)\w*\s+(?:my\s+|the\s+|our\s+)?"
    r"(?:approach|strategy|tack|plan|method|course|tactic)s?\b|"
    r"\b(?:a\s+|an\s+)?(?:different|another|new|alternative|other)\s+"
    r"(?:approach|strategy|tack|route|angle|method|source|tool|tactic)\b|"
    r"\btry\w*\s+(?:another|a\s+different|a\s+new)\s+way\b|"
    r"\binstead\b(?!\s+of)|\bgiv\w*\s+up\s+on\b|\bfall\w*\s+back\s+(?:to|on)\b|"
    r"\btry\w*\s+(?:something|it)\s+(?:else|differently)\b|"
    r"\b(?:switch|chang|mov|turn)\w*\s+(?:over\s+)?to\b|"
    r"换(?:个|一个|一种|种)?(?:思路|方法|办法|角度|途径|策略|方案|做法|工具|渠道)|"
    r"改(?:用|走|从|问|查)|换用|转而|另(?:找|寻|辟|想)|放弃",
    re.IGNORECASE,
)
#: Where the clause that names the new approach ends (a colon only introduces it).
_CLAUSE_END = re.compile(r"[.!?;,。！？；，、\n]")
#: Chinese numerals: a character pair with one is part of a value ("七份", "十六号").
_NUMERAL = frozenset("零〇一二两三四五六七八九十百千万亿壹贰叁肆伍陆柒捌玖拾佰仟")


def new_words(words: frozenset[str], known: frozenset[str]) -> float:
    """How many of ``words`` (a step's tokens, values masked) are content words not in
    ``known`` (the words said so far): stopwords and Chinese function characters aside, a
    light stem compared, a CJK character pair (with no numeral in it) counting half a word."""
    fresh = stems(words) - stems(known)
    latin = sum(1 for w in fresh if w.isascii() or not _cjk(w))
    pairs = sum(1 for w in fresh if _cjk(w) and not _NUMERAL.intersection(w))
    return latin + math.ceil(pairs / 2)


def changes_approach(step: Observation, known: frozenset[str]) -> bool:
    """Whether ``step`` announces a change of approach and the clause naming the new approach
    has a content word not said before in the run (what it does now). A change announced
    about nothing new, or back to an option tried before ("改用 reportlab" again), is none;
    a comparison ("returns 2.67 instead of 2.68", "rather than") is no announcement."""
    head = (step.masked or step.output)[:4000]
    for match in _CHANGE.finditer(head):
        if new_words(tokens(_named_by(head, match)), known) >= 1:
            return True
    return False


def _named_by(text: str, match: re.Match[str]) -> str:
    """The clause that names the approach a change announces: the one after the announcement
    ("Changing approach: asking the carrier"), or, when the announcement ends its clause, the
    one before it ("Searching for an assignment instead.")."""
    after = text[match.end() :].lstrip(" \t:：,，、-—–")
    end = _CLAUSE_END.search(after)
    clause = after[: end.start()] if end else after
    if not clause.strip():
        before = text[: match.start()]
        starts = [m.end() for m in _CLAUSE_END.finditer(before)]
        clause = before[starts[-1] if starts else 0 :]
    # the words of the announcement are not what it announces ("Switching to X instead")
    return _CHANGE.sub(" ", clause)


def says_more(step: Observation, known: frozenset[str]) -> bool:
    """Whether ``step`` says something new besides its values (:data:`SAYS_MORE` new content
    words, or an announced change of approach naming something new): then it is no mere
    restatement of an earlier answer's values."""
    return new_words(step.tokens, known) >= SAYS_MORE or changes_approach(step, known)


def _cjk(word: str) -> bool:
    return any("\u3400" <= ch <= "\u9fff" or "\u3040" <= ch <= "\u30ff" for ch in word)


#: A step that waits: its text opens with a verb of waiting, or its tool is one.
_WAIT = re.compile(
    r"^\W*(?:(?:i am |i'm |now |still )?(?:wait(?:ing|s)?|sleep(?:ing|s)?|paus(?:e|es|ing)|"
    r"back(?:ing)? off|idl(?:e|ing))\b)|^\W*(?:等待|等候|稍等|休眠|暂停|等\s*\d)",
    re.IGNORECASE,
)


def waits(step: Observation) -> bool:
    """Whether ``step`` is a wait: a short text opening with a verb of waiting ("Waiting 60 s
    before the next check", "Sleeping 30 s", "等待 5 分钟") or a call of a tool named so."""
    if step.tool is not None:
        return bool(_WAIT.match(step.tool.replace("_", " ")))
    return len(step.tokens) <= 16 and bool(_WAIT.match(step.output[:200]))


_APOLOGY = re.compile(
    r"\b(?:sorry|apologi[sz]e|apologies|my (?:mistake|bad|apologies)|i (?:have|'ve) (?:now )?"
    r"(?:fixed|corrected|resolved)|(?:this|that|it) should (?:now )?(?:work|be fixed)|"
    r"let me (?:fix|correct) (?:that|this|it))\b|抱歉|对不起|不好意思|道歉|我的错|"
    r"已(?:经)?修(?:复|正)|这次应该",
    re.IGNORECASE,
)
_SELF = re.compile(
    r"\b(?:as i (?:said|mentioned|noted|explained)(?: (?:before|earlier|above))?|"
    r"(?:my|the) (?:previous|earlier|last) (?:response|answer|message|reply|output)|"
    r"as an ai\b|i am (?:an ai|a language model)|i (?:will|'ll) (?:now )?(?:re-?examine|"
    r"reconsider|review) my|let me (?:re-?think|reconsider|re-?evaluate) my)\b|"
    r"如前所述|我之前(?:说|提到|的回答)|作为(?:一个)?(?:AI|人工智能|语言模型)|我刚才(?:说|的回答)|"
    r"我(?:的)?(?:上一条|上一个|前面的|之前的|刚才的)(?:消息|回复|回答|输出)",
    re.IGNORECASE,
)


def apologises(text: str) -> bool:
    """Whether ``text`` apologises or claims to have fixed an earlier answer."""
    return bool(_APOLOGY.search(text[:4000]))


def refers_to_itself(text: str) -> bool:
    """Whether ``text`` talks about the agent itself or its own earlier output."""
    return bool(_SELF.search(text[:4000]))
