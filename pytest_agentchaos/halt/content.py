"""What a step says besides its values: the content words it is the first in the run to say,
and whether it announces a change of approach.

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

__all__ = ["SAYS_MORE", "changes_approach", "new_words", "says_more"]

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
