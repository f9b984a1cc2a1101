"""Reading an agent's text for the halt heuristics: tokens in any script, near-duplicates,
the information a step adds, and a task's keywords.

Words are what a space-separated script separates; Chinese, Japanese and Korean runs are
read as overlapping character pairs (bigrams), so that "查询天气" and "天气查询" share most of
their tokens and two unrelated Chinese sentences share almost none, which is what the English
embedding model cannot tell (it scores unrelated Chinese sentences 0.44-0.54).

*Information* is what templated healthy work changes from step to step and a spiral does
not: numbers, identifiers (``auth.py``, ``user_42``, ``PR-17``), quoted values, paths and URLs.
A paraphrase rewords its sentence but brings none of them.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable

__all__ = [
    "MAX_TEXT",
    "acronyms",
    "capitalised",
    "cjk_share",
    "digest",
    "information",
    "keywords",
    "names",
    "normal",
    "overlap",
    "stems",
    "tokens",
]

#: The most characters of one output read (a 10 MB answer is read by its head).
MAX_TEXT = 20_000

_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_CJK_RUN = re.compile(f"[{_CJK}]+")
_WORD = re.compile(rf"[^\W_{_CJK}]+(?:['’.\-][^\W_{_CJK}]+)*", re.UNICODE)
#: Quoted values; a single quote inside a word is an apostrophe ("I'm not sure that's").
_QUOTED = re.compile(
    r"\"([^\"\n]{1,80})\"|(?<!\w)'([^'\n]{2,80})'(?!\w)|`([^`\n]{1,80})`|“([^”\n]{1,80})”"
)
#: A token that carries information: a number, or a name with a digit, a dot, an underscore, a
#: slash or an inner capital (``auth.py``, ``user_42``, ``src/app``, ``fetchInvoices``).
_INFO_TOKEN = re.compile(r"\d|[\w\-][._/][\w\-]|[a-z][A-Z]|://")
_NUMBER = re.compile(r"^\d[\d,.]*$")
#: Single letters each with its dot ("i.e.", "e.g.", "U.S."): an abbreviation, not an
#: identifier ("x.c" is a file).
_ABBREVIATION = re.compile(r"^(?:[^\W\d_]\.){2,}$")
_EDGES = "\"'`()[]{}<>,;:!?。，；：！？、“”‘’"
#: Where words break for information (NFKC text): spaces, CJK text and CJK punctuation.
_WORD_BREAK = re.compile(rf"[\s{_CJK}\u3000-\u303f]+")
_POSSESSIVE = re.compile(r"['’]s$")
_HAN_COUNT = re.compile(r"([零〇一二两三四五六七八九十百千万亿]+)[\u4e00-\u9fff%]?")

#: Words that carry no topic: left out of keywords and of the drift check.
STOPWORDS = frozenset(
    """a an the and or but if then else of to in on at by for from with into onto about as is are
    was were be been being it its this that these those there here i me my we our you your he she
    they them their his her do does did done doing have has had having not no yes so than too very
    can could will would shall should may might must just also only all any some each every more
    most other such what which who whom whose when where why how please let lets now again up down
    out over under off once same new get got make made use used using one two""".split()  # noqa: SIM905
) | frozenset("的了和是在我你他她它们这那个一不也就都而及与或被把让给对从到请吗呢吧啊")


def normal(text: str) -> str:
    """``text`` cut to :data:`MAX_TEXT`, NFKC-normalised, casefolded, spaces collapsed."""
    text = unicodedata.normalize("NFKC", text[:MAX_TEXT]).casefold()
    return " ".join(text.split())


def digest(text: str) -> str:
    """A short digest of the normalised text: equal for texts that differ only in case and
    spacing."""
    return hashlib.blake2b(normal(text).encode("utf-8", "replace"), digest_size=12).hexdigest()


def tokens(text: str) -> frozenset[str]:
    """The words of ``text`` (casefolded) and the character bigrams of its CJK runs."""
    low = normal(text)
    found = set(_WORD.findall(low))
    for run in _CJK_RUN.findall(low):
        if len(run) == 1:
            found.add(run)
        found.update(run[i : i + 2] for i in range(len(run) - 1))
    return frozenset(found)


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard overlap of two token sets (1.0 for two empty ones)."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def information(text: str) -> frozenset[str]:
    """The information tokens of ``text``: numbers, identifiers, quoted values, paths, URLs.

    A path brings its file's name too ("ProfileForm" after "src/ProfileForm.jsx" is no news),
    a possessive is its name ("ProfileForm's"), CJK text is a word boundary (Chinese sets no
    spaces: "app.py，看看" is "app.py"), and a count in Chinese numerals is a number too
    ("三百二十条")."""
    head = unicodedata.normalize("NFKC", text[:MAX_TEXT])
    found = set()
    for match in _QUOTED.finditer(head):
        found.add(next(g for g in match.groups() if g).casefold())
    # a number in Chinese numerals with what it counts ("三百二十条", "两笔", "三月"); a lone
    # 一 is mostly "a" ("一下", "一遍"), not a count
    found.update(m[0] for m in _HAN_COUNT.finditer(head) if m[1] != "一")
    raw = [w for w in _WORD_BREAK.split(head) if w]
    words = [_POSSESSIVE.sub("", w.strip(_EDGES).rstrip(".")) for w in raw]
    for i, word in enumerate(words):
        abbreviation = _ABBREVIATION.match(raw[i].strip(_EDGES.replace(".", "")))
        if 0 < len(word) <= 200 and _INFO_TOKEN.search(word) and not abbreviation:
            found.add(word.casefold())
            found.update(_names(word.casefold()))
            if _counts(raw, words, i):
                # a count with what it counts: "2 failed" after "3 failed" is news
                found.add(f"{word} {words[i + 1]}".casefold())
    return frozenset(found)


def _counts(raw: list[str], words: list[str], i: int) -> bool:
    """Whether ``words[i]`` is a number counting the word after it ("2 failed", "48 rows"),
    not a label of the name before it ("PostgreSQL 16 was", "Python 3 is"). ``raw``: the
    words before their edges were stripped."""
    if not _NUMBER.match(words[i]) or i + 1 >= len(words) or raw[i][-1:] in _CLAUSE:
        return False
    after = words[i + 1]
    if not after.isalpha() or not raw[i + 1][:1].isalpha() or after.casefold() in STOPWORDS:
        return False  # "6 (retry)" is no count of retries
    if i == 0 or raw[i - 1][-1:] in _CLAUSE or (i == 1 or raw[i - 2][-1:] in _CLAUSE):
        return True  # first in its clause, or after the clause's first word ("Found 24 errors")
    before = words[i - 1]
    return not (before[:1].isupper() or _INFO_TOKEN.search(before))


_CLAUSE = frozenset(".,:;!?")


def _names(word: str) -> set[str]:
    """The file name in a path, with and without its extension: what a later step calls it."""
    if "/" not in word or "://" in word:
        return set()
    name = word.rstrip("/").rsplit("/", 1)[-1]
    stem = name.split(".", 1)[0]
    return {n for n in (name, stem) if len(n) > 1}


def names(text: str) -> frozenset[str]:
    """The capitalised words of ``text`` that do not open a sentence or a clause ("the Usage
    section", "on Vercel"), casefolded: names of things, in scripts with capitals. What a
    templated step changes when its items are plain words, not values."""
    found = set()
    for match in _NAME.finditer(text[:MAX_TEXT]):
        gap = text[max(0, match.start() - 40) : match.start()]
        before = gap.rstrip()[-1:]
        # a capital after a line break opens a line (a reply after a quoted turn)
        line = "\n" in gap[len(gap.rstrip()) :]
        if before and not line and before not in _OPENERS and match[0] not in _PRONOUNS:
            found.add(_POSSESSIVE.sub("", match[0]).casefold())
    return frozenset(found)


def capitalised(text: str) -> frozenset[str]:
    """Every capitalised word of ``text``, casefolded, opening a sentence or not: the names a
    text may give (a task's "Cannot use import statement" names the error a step names)."""
    return frozenset(m[0].casefold() for m in _NAME.finditer(text[:MAX_TEXT]))


def acronyms(text: str) -> frozenset[str]:
    """The all-capital words of ``text``, casefolded ("API", "HTTP", "KB"): labels, units and
    kinds of things, not the names a new finding brings."""
    return frozenset(w.casefold() for w in _ACRONYM.findall(text[:MAX_TEXT]))


_ACRONYM = re.compile(r"\b[A-Z][A-Z0-9]+\b")
_NAME = re.compile(r"(?<![\w.'’/-])[A-Z][\w'’-]*[A-Za-z0-9]")
#: What opens a sentence before a capital: a full stop, a colon, a quote, a dash, and the end
#: of a bracketed tag ("[iter 3] Let me ...").
_OPENERS = frozenset(".:;!?\"'(“‘—–-]")
_PRONOUNS = frozenset({"I'm", "I'll", "I've", "I'd", "I’m", "I’ll", "I’ve", "I’d"})


def cjk_share(text: str) -> float:
    """The share of ``text``'s letters that are CJK (0 for none)."""
    head = text[:2000]
    letters = sum(1 for ch in head if ch.isalpha())
    if not letters:
        return 0.0
    return sum(len(run) for run in _CJK_RUN.findall(head)) / letters


def keywords(task: str, extra: Iterable[str] = ()) -> frozenset[str]:
    """The topic tokens of a task: its tokens less stopwords and one-letter words."""
    found = {t for t in tokens(task) if t not in STOPWORDS and (len(t) > 1 or _CJK_RUN.match(t))}
    found |= {normal(w) for w in extra if w.strip()}
    return frozenset(found)


def stems(words: frozenset[str] | set[str]) -> frozenset[str]:
    """Topic words: parts of joined words ("cursor-based", "tools/list") too, stopwords out,
    and a light stem of Latin words ("webhooks", "retrying" as "webhook", "retry"), so that a
    step about the task's things shares words with it."""
    found: set[str] = set()
    for word in words:
        parts = [p for p in re.split(r"[-/._:]+", word) if p != word]
        for part in {word, *parts}:
            # a part of a joined word is a topic word when it is a word ("py" of "dates.py",
            # "md", "vs" are not)
            short = len(part) < (3 if part is not word and part.isascii() else 2)
            if short or part in STOPWORDS or _cjk_function(part):
                continue
            found.add(_STEM.sub("", part) if len(part) > 4 and part.isascii() else part)
    return frozenset(found)


_STEM = re.compile(r"(?:ing|ed|(?<=ch|sh|ss)es|(?<=x)es|(?<!s)s)$")
_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
#: Chinese function characters (particles, pronouns, measure words): a character pair with
#: one of them is grammar ("里的", "这个", "一份"), not a topic.
_FUNCTION_CHARS = frozenset(
    "的了和是在我你他她它们这那个一不也就都而及与或被把让给对从到请吗呢吧啊么里些着过"
)


def _cjk_function(part: str) -> bool:
    return bool(_CJK_CHAR.match(part)) and any(ch in _FUNCTION_CHARS for ch in part)
