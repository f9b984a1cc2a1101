"""Values as the halt monitor compares them: the same value written another way is the same
value, and a counter that only counts the agent's own attempts is no value at all.

- :func:`fold` makes full-width and CJK punctuation plain, with a space after it, so that a
  path is not glued to the number after it (``app.py，3`` reads ``app.py, 3``).
- :func:`values` is a step's information (:func:`.text.information`) with each value in one
  canonical form: digits, number words (``seven``, ``twenty-one``), Chinese numerals (``七``,
  ``三百二十``, ``二〇二四``), with or without a unit (``7 items``, ``7件``, ``$7``), dates
  (``2024-03-05``, ``March 5, 2024``, ``2024年3月5日``), quoted text as its bag of words; the
  markers of an enumeration (``1.`` ``2.``, ``第一步 ... 第二步``) and volatile tokens (times,
  durations, uuids, temp paths) left out.
- :func:`masked` is the text with those values replaced by ``#``: what two steps say once
  their values are set aside.
- :class:`Counters` learns, step by step, the numbers that rise by one or two at the same
  place of the text (``loop 3``, ``attempt #4``, ``第5次``): monotone counters, which are no
  news however new their number.
"""

from __future__ import annotations

import calendar
import math
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field

from .quantities import Quantity, unit_at
from .text import MAX_TEXT, information

__all__ = ["Counters", "Reading", "fold", "loop_place", "masked", "number", "read", "values"]

_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
#: CJK punctuation that NFKC leaves alone, as its plain counterpart.
_PLAIN_PUNCT = str.maketrans(
    {"。": ". ", "、": ", ", "「": ' "', "」": '" ', "『": ' "', "』": '" ', "【": " [",
     "】": "] ", "《": ' "', "》": '" ', "〈": " <", "〉": "> ", "・": " ", "〜": "~"}
)  # fmt: skip
#: Full-width punctuation (NFKC makes it ASCII): a space after it, so words break there.
_FULL_WIDTH = re.compile("([\uff01\uff08\uff09\uff0c\uff1a\uff1b\uff1f])")


def fold(text: str) -> str:
    """``text`` (its head, :data:`.text.MAX_TEXT`) with full-width and CJK punctuation made
    plain and followed by a space, then NFKC-normalised. Idempotent."""
    head = _FULL_WIDTH.sub(r"\1 ", text[:MAX_TEXT]).translate(_PLAIN_PUNCT)
    return unicodedata.normalize("NFKC", head)


# -- numbers ----------------------------------------------------------------------------------

_ONES = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19,
}  # fmt: skip
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
         "eighty": 80, "ninety": 90}  # fmt: skip
_SCALES = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9}
_WORD_NUMBER = re.compile(
    r"\b(?:(?:" + "|".join([*_ONES, *_TENS, *_SCALES]) + r")(?:[\s-]+(?:and[\s-]+)?)?)+\b",
    re.IGNORECASE,
)
_HAN_DIGITS = {"零": 0, "〇": 0, "○": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5,
               "壹": 1, "贰": 2, "叁": 3, "肆": 4, "伍": 5, "陆": 6, "柒": 7, "捌": 8, "玖": 9,
               "六": 6, "七": 7, "八": 8, "九": 9}  # fmt: skip
_HAN_UNITS = {"十": 10, "百": 100, "千": 1000, "拾": 10, "佰": 100, "仟": 1000}
_HAN_BIG = {"万": 10**4, "亿": 10**8}
_HAN = "零〇○一二两三四五六七八九十百千万亿壹贰叁肆伍陆柒捌玖拾佰仟"
_HAN_NUMBER = re.compile(f"[{_HAN}]+")
_DIGITS = re.compile(r"(?<![\w.])[$€£¥]?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(%?)(?![\w.]*\d)")


def number(text: str) -> str | None:
    """The canonical form of one number written in digits (``1,234.50``), in English words
    (``twenty-one``) or in Chinese numerals (``三百二十``, ``二〇二四``); None if it is not one.
    """
    text = text.strip()
    plain = text.replace(",", "")
    try:  # digits only: float() also reads "nan" and "infinity"
        value = float(plain) if any(c.isdigit() for c in plain[:64]) else None
    except ValueError:
        value = None
    if value is None:
        value = _han(text) if _HAN_NUMBER.fullmatch(text) else _words(text)
    if value is None:
        return None
    if not math.isfinite(value):  # 400 digits in a row: a number too big to be a float
        return plain[:64]
    return f"{value:g}" if value != int(value) or abs(value) >= 1e15 else str(int(value))


def _words(text: str) -> float | None:
    parts = [p for p in re.split(r"[\s-]+", text.casefold()) if p and p != "and"]
    if not parts:
        return None
    total = current = 0
    for part in parts:
        if part in _ONES:
            current += _ONES[part]
        elif part in _TENS:
            current += _TENS[part]
        elif part == "hundred":
            current = max(current, 1) * 100
        elif part in _SCALES:
            total += max(current, 1) * _SCALES[part]
            current = 0
        else:
            return None
    return float(total + current)


def _han(text: str) -> float | None:
    if all(ch in _HAN_DIGITS for ch in text) and len(text) > 1:
        return float("".join(str(_HAN_DIGITS[ch]) for ch in text))  # 二〇二四: digit by digit
    total = section = digit = 0
    for ch in text:
        if ch in _HAN_DIGITS:
            digit = _HAN_DIGITS[ch]
        elif ch in _HAN_UNITS:
            section += max(digit, 1) * _HAN_UNITS[ch]
            digit = 0
        elif ch in _HAN_BIG:
            total += (section + digit) * _HAN_BIG[ch]
            section = digit = 0
    value = total + section + digit
    # a digit right after a unit above ten counts in the unit below it, as it is said
    # ("一万二" 12000, "两千八" 2800, "一百五" 150); after 零 it counts ones ("一千零八" 1008)
    unit = (_HAN_UNITS.get(text[-2], 0) or _HAN_BIG.get(text[-2], 0)) if len(text) >= 2 else 0
    if unit > 10 and text[-1] in _HAN_DIGITS:
        value += _HAN_DIGITS[text[-1]] * (unit // 10 - 1)
    return float(value)


# -- dates --------------------------------------------------------------------------------------

_MONTHS = {name.casefold(): i for i, name in enumerate(calendar.month_name) if name} | {
    name.casefold(): i for i, name in enumerate(calendar.month_abbr) if name
}
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DATES = re.compile(
    rf"(?P<iso>\b(?P<y1>\d{{4}})[-/.](?P<m1>\d{{1,2}})[-/.](?P<d1>\d{{1,2}})\b)"
    rf"|(?P<han>(?P<y2>\d{{4}})\s*年\s*(?P<m2>\d{{1,2}})\s*月\s*(?P<d2>\d{{1,2}})\s*[日号])"
    rf"|(?P<mdy>\b(?P<m3>{_MONTH})\.?\s+(?P<d3>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y3>\d{{4}})\b)"
    rf"|(?P<dmy>\b(?P<d4>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<m4>{_MONTH})\.?,?\s+(?P<y4>\d{{4}})\b)",
    re.IGNORECASE,
)


def _date(match: re.Match[str]) -> str:
    for n in "1234":
        if match[f"y{n}"]:
            year, month, day = match[f"y{n}"], match[f"m{n}"], match[f"d{n}"]
            month_number = int(month) if month.isdigit() else _MONTHS[month.casefold()]
            if 1 <= month_number <= 12 and 1 <= int(day) <= 31:
                return (
                    f" date_{int(year):04d}{month_number:02d}{int(day):02d}"
                    f" md_{month_number:02d}{int(day):02d} "
                )
    return match[0]


_MONTH_DAY = re.compile(
    rf"(?<![\d{_HAN}])(?P<m>\d{{1,2}}|[{_HAN}]{{1,3}})\s*月\s*(?P<d>\d{{1,2}}|[{_HAN}]{{1,3}})\s*[日号]"
    rf"|\b(?P<m2>{_MONTH})\.?\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\b(?!,?\s+\d{{4}})"
    rf"|\b(?P<d3>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m3>{_MONTH})\b(?!\.?,?\s+\d{{4}})",
    re.IGNORECASE,
)


def _month_day(match: re.Match[str]) -> str:
    """A date without its year: ``3月16日``, ``三月十六号``, ``March 16``."""
    month, day = match["m"] or match["m2"] or match["m3"], match["d"] or match["d2"] or match["d3"]
    m = _MONTHS.get(month.casefold()) if month.isalpha() and month.isascii() else number(month)
    d = number(day)
    try:
        m_number, d_number = int(m or 0), int(d or 0)
    except ValueError:
        return match[0]
    if 1 <= m_number <= 12 and 1 <= d_number <= 31:
        return f" md_{m_number:02d}{d_number:02d} "
    return match[0]


#: A sum in yuan with its jiao and fen ("一千一百五十六元五角", "12元5角3分").
_YUAN = re.compile(
    rf"(?<![\d{_HAN}])(?P<y>[\d{_HAN}]+)\s*元(?:\s*(?P<j>[\d{_HAN}])\s*角)?(?:\s*(?P<f>[\d{_HAN}])\s*分)?整?"
)


def _yuan(match: re.Match[str]) -> str:
    if not (match["j"] or match["f"]):
        return match[0]
    parts = [number(match[g] or "0") for g in ("y", "j", "f")]
    if any(p is None for p in parts):
        return match[0]
    y, j, f = (float(p or 0) for p in parts)
    return f" {number(str(round(y + j / 10 + f / 100, 2)))} 元"


#: A data size with its unit ("2,097,152 bytes", "2048 KB", "2 MiB", "two megabytes"): one
#: value in bytes. KB, MB, GB are read as binary (1024), as file tools (ls -lh, du, stat)
#: print them; kB is the SI kilobyte.
_SIZE_UNITS = {
    "byte": 1, "bytes": 1, "kb": 1024, "kib": 1024, "kilobyte": 1024,
    "kilobytes": 1024, "mb": 1024**2, "mib": 1024**2, "megabyte": 1024**2,
    "megabytes": 1024**2, "gb": 1024**3, "gib": 1024**3, "gigabyte": 1024**3,
    "gigabytes": 1024**3, "tb": 1024**4, "tib": 1024**4, "terabyte": 1024**4,
    "terabytes": 1024**4,
}  # fmt: skip
_SIZE = re.compile(
    r"(?<![\w.])(?P<n>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|"
    rf"(?:(?:{'|'.join([*_ONES, *_TENS])})[\s-]*){{1,3}})\s*"
    r"(?P<u>kB|(?i:[kmgt]i?b|bytes?|(?:kilo|mega|giga|tera)bytes?))(?![\w/])"
)


def _size(match: re.Match[str]) -> str:
    value = number(match["n"])
    unit = match["u"]
    factor = 1000 if unit == "kB" else _SIZE_UNITS.get(unit.casefold())
    if value is None or factor is None:
        return match[0]
    return f" {number(str(round(float(value) * factor)))} B "


# -- volatile tokens and enumerations --------------------------------------------------------

_VOLATILE = re.compile(
    r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"  # uuid
    r"|\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"  # stamp
    r"|(?<![\d:])\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?![\d:])"  # time of day
    # measured durations (a timing that differs on every run): decimals, sub-second units,
    # or after "took" / "elapsed" / "in" / 耗时; a whole wait ("waiting 60 s") is a value,
    # and so is a position on a timeline ("the 5 s around 2640.8 s", "at 12.5 s": where in a
    # recording or a log, not how long something took)
    # (and "@ 12.5 s", "t=12.5 s"); a duration said to be rounded ("took around 2.37 s") is
    # still a duration: the word before it is read first
    r"|\b(?:took|elapsed|in|after|duration|latency)\W{0,3}"
    r"(?:(?:about|around|roughly|approximately|nearly|almost|just over|just under|over|under)\s+)?"
    r"\d+(?:\.\d+)?\s?(?:ms|µs|us|ns|s|secs?|seconds?|mins?|minutes?)\b"
    r"|(?<![\w.@])(?<!\bat )(?<!\baround )(?<!\bnear )(?<!\bpast )(?<!@ )"
    r"(?<!\bt=)(?<!\bt= )(?<!\bt =)(?<!\bt = )"
    r"\d+\.\d+\s?(?:ms|µs|us|ns|s|secs?|seconds?|mins?|minutes?|h|hrs?)\b"
    r"|(?<![\w.])\d+\s?(?:ms|µs|us|ns)\b"
    r"|(?<![\w.])\d+(?:\.\d+)?\s?毫秒|耗时\W{0,3}\d+(?:\.\d+)?\s?(?:秒钟?|分钟|s)"  # durations
    r"|(?<![\w.])1\d{9}(?:\d{3})?(?:\.\d+)?(?![\d])"  # epoch
    r"|(?:/private)?/(?:tmp|var/tmp|var/folders)/\S*",  # temp paths
    re.IGNORECASE,
)
#: An enumeration's marker: ``1.`` / ``2)`` / ``(3)`` / ``4、`` opening a line or clause, a
#: circled number, ``第N步`` style ordinals are read by :func:`read` (runs 1..k dropped).
_LIST_MARKER = re.compile(
    r"(?:^|(?<=[\n:;]))\s{0,40}(?:\(?\d{1,2}[.)、](?!\d)|[①-⑳])", re.MULTILINE
)
_QUOTE_WORDS = re.compile(r"[^\W_]+", re.UNICODE)


# -- reading a step ----------------------------------------------------------------------------

#: A number with its place in the text: the word before it and the unit or word after it.
_NUMBER_WORDS = "|".join([*_ONES, *_TENS])
#: "and" inside a number written in words, only after a scale ("four thousand two hundred and
#: eighty" is one number; "two and three" two)
_AND_AFTER_SCALE = "(?:(?:" + "|".join(f"(?<={s})" for s in _SCALES) + r")[\s-]+and)?"
_NUMBER_IN_TEXT = re.compile(
    r"(?P<num>(?<![A-Za-z0-9_.,])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![A-Za-z0-9_]|\.\d)"
    rf"|(?<!周)(?<!星期)(?<!礼拜)[{_HAN}]+"
    rf"|\b(?:{_NUMBER_WORDS})(?:{_AND_AFTER_SCALE}[\s-]+(?:{_NUMBER_WORDS}|{'|'.join(_SCALES)}))*\b)",
    re.IGNORECASE,
)
#: (a label's word before its ":", "=" or "#" is the place: "step: 9", "attempt #3")
_BEFORE = re.compile(
    rf"([^\W\d_]+(?=\s*[:=#]\s*$)|[^\W\d_]+|[{_CJK}]|[#\[(/=:])\s*[:=#]?\s*$", re.UNICODE
)
#: A total after a number ("3 of 5", "3/5", "3 out of 5").
_TOTAL = re.compile(r"\s*(?:/|of\b|out of\b)\s*\d", re.IGNORECASE)
_AFTER = re.compile(rf"^\s*([^\W\d_]+|[{_CJK}]|[/%])", re.UNICODE)


@dataclass(frozen=True)
class Reading:
    """One text read for its values: ``values`` (canonical), ``numbers`` (each number's place
    and canonical value, for :class:`Counters`), ``masked`` (the text with values as ``#``)."""

    values: frozenset[str]
    numbers: tuple[tuple[str, str], ...]
    masked: str
    counted: frozenset[str] = frozenset()  # "N word" pairs: counts with what they count
    weak: frozenset[str] = frozenset()  # values only written as small number words
    #: the numbers written with a unit ("1.28 km", "4,200 feet", "三公里")
    quantities: tuple[Quantity, ...] = ()
    #: the numbers said to be rounded ("about 1,200", "1.2k", "一千二百左右")
    approximate: frozenset[str] = frozenset()


def read(text: str) -> Reading:
    """Read ``text`` for its values (see the module's docstring)."""
    plain = folded = fold(text)
    plain = _DATES.sub(_date, plain)
    plain = _MONTH_DAY.sub(_month_day, plain)
    plain = _YUAN.sub(_yuan, plain)
    plain = _VOLATILE.sub(" ", plain)
    plain = _SIZE.sub(_size, plain)  # after: a size in bytes may look like an epoch
    plain = _LIST_MARKER.sub(" ", plain)
    plain = _GROUPED.sub(_grouped, plain)
    plain = _SCALED.sub(_scaled, plain)
    plain = _GLUED.sub(r"\1 \2", plain)
    numbers: list[tuple[str, str, bool]] = []
    quantities: list[Quantity] = []
    approximate: set[str] = set()
    places: dict[str, list[str]] = {}
    for match in _NUMBER_IN_TEXT.finditer(plain):
        raw = match["num"]
        value = number(raw)
        if value is None:
            continue
        before = _BEFORE.search(plain[max(0, match.start() - 24) : match.start()])
        after = _AFTER.match(plain[match.end() : match.end() + 12])
        place = f"{(before[1] if before else '').casefold()}_{(after[1] if after else '')[:1]}"
        if _TOTAL.match(plain[match.end() : match.end() + 12]):
            # a count toward a total inside the text ("building (step 3 of 5)") is the work's
            # progress; a tag opening the text ("Step 3/20:") counts the agent's own steps
            leading = len(plain[: match.start()].split()) <= 2
            place = f"{place.rpartition('_')[0]}_{'#' if leading else '/'}"
        # "one more time", "一下": an article, not a count (unless it counts: "第一")
        weak = raw.casefold() in ("one", "一") and not (before and before[1] == "第")
        numbers.append((place, value, weak))
        places.setdefault(place, []).append(value)
        if _ROUGHLY_BEFORE.search(plain[max(0, match.start() - 16) : match.start()]) or (
            _ROUGHLY_AFTER.match(plain[match.end() : match.end() + 8])
        ):
            approximate.add(value)
        quantity = unit_at(value, plain[match.end() : match.end() + 16])
        if quantity is not None:
            quantities.append(quantity)
    # an enumeration inside one text (第一步 ... 第二步 ..., step one ... step two): markers
    enumerated = {
        p for p, vs in places.items() if len(vs) >= 2 and vs == [str(i + 1) for i in range(len(vs))]
    }
    kept = tuple((p, v) for p, v, weak in numbers if p not in enumerated and not weak)
    found: set[str] = {v for _, v in kept}
    # a small number in words ("my last two messages") is a value to compare, not news
    small = {v for m in _SMALL_WORD.finditer(plain) if (v := number(m[0])) is not None} - {
        number(m) for m in _DIGIT_RUN.findall(plain)
    }
    counted: set[str] = set()
    for token in information(plain):
        token = token.strip(_EDGES)
        pair = _COUNT_PAIR.fullmatch(token)
        if pair:  # "24 errors": a count with what it counts (its number is scanned above)
            if "." not in pair[1]:
                counted.add(f"{number(pair[1]) or pair[1]} {pair[2]}")
            continue
        token = token.lstrip("#$€£¥￥~≈")
        value = (
            number(token.rstrip("%")) if token[:1].isdigit() or _HAN_NUMBER.match(token) else None
        )
        if value is not None:
            continue  # numbers come from the scan above, with their places
        if _HAN_NUMBER.match(token):
            continue  # a Chinese count with its classifier ("三百二十条"): scanned above
        words = _QUOTE_WORDS.findall(token)
        if len(words) > 1 and not _PATHLIKE.search(token):
            token = " ".join(sorted(words))  # quoted text: its words, in any order
        found.add(token)
    # a count after its label ("Failures: 17", "Tests run: 342", "失败数: 9"): a count with
    # what it counts too, unless the label counts the agent's own repetitions ("attempt: 3")
    for match in _LABELLED_COUNT.finditer(folded):  # before list markers go ("9. ")
        label = match[1].casefold()
        if not loop_place(f"{label}_"):
            counted.add(f"{number(match[2]) or match[2]} {label}")
    # "3 problem(s)", "还剩 3 个问题": a count with its noun, in a plural left open or after a
    # Chinese measure word
    for match in _COUNT_NOUN.finditer(folded):
        counted.add(f"{match[1]} {(match[2] or match[3]).casefold()}")
    return Reading(
        frozenset(found), kept, _mask(plain), frozenset(counted), frozenset(small & found),
        tuple(quantities), frozenset(approximate),
    )  # fmt: skip


#: Words that say a number is rounded: before it ("about", "~", 约) or after it (左右).
_ROUGHLY_BEFORE = re.compile(
    r"(?:\b(?:about|around|roughly|approximately|approx\.?|nearly|almost|some|circa|ca\.)"
    r"|[~≈≃]|约|大约|大概|差不多|将近|接近)\s*$",
    re.IGNORECASE,
)
_ROUGHLY_AFTER = re.compile(r"\s*(?:~|左右|上下|来|多|or so\b|-ish\b|ish\b)")


#: A number with a multiplier glued to it: "1.2k", "41k", "3.5万", "2亿", and the other
#: Chinese magnitudes after digits ("1.2 千元", "0.6 百万", "3千万") with the chat shorthand
#: "w" for 万 ("60w", in Chinese text only, and not glued to a Chinese word: "a 60w charger"
#: and "功率65w" are watts); not 千 as the SI prefix of a unit (千米, 千克, 千瓦, 千焦, 千卡, 千帕,
#: 千赫, 千字节: quantities reads those), nor "W" (watts).
_SCALED = re.compile(
    r"(?<![A-Za-z0-9_.])(\d+(?:\.\d+)?)"
    r"(?:([kK]|w)(?![A-Za-z])|[^\S\n]?(百万|千万|十万|万|亿|千(?![米克瓦焦卡帕赫伏安升欧牛]|字节|比特)))"
)
_HAS_CJK = re.compile(f"[{_CJK}]")


def _near(match: re.Match[str]) -> str:
    """The few characters around a match (is the number said in Chinese, where it stands?)."""
    text = match.string
    return text[max(0, match.start() - 4) : match.start()] + text[match.end() : match.end() + 3]


_MULTIPLIER = {
    "k": 1000, "w": 10**4, "万": 10**4, "十万": 10**5, "百万": 10**6, "千万": 10**7,
    "亿": 10**8, "千": 1000,
}  # fmt: skip


def _scaled(match: re.Match[str]) -> str:
    if match[2] == "w" and (
        not _HAS_CJK.search(_near(match)) or _HAS_CJK.match(match.string, match.start() - 1)
    ):
        # "a 60w charger, 型号 A2": watts beside English words; "功率65w" glued to a Chinese
        # word is as likely watts as 万 ("预算60w"): left as written, not guessed
        return match[0]
    factor = _MULTIPLIER[(match[2] or match[3]).casefold()]
    amount = number(str(round(float(match[1]) * factor, 6)))
    # the chat shorthands ("1.2k", "60w") round; a Chinese magnitude is how the amount is
    # written ("1.2千元" is 1,200 yuan, not about 1,200)
    return f"~{amount} " if match[2] else f" {amount} "


#: A number in the writing of most of Europe: thousands grouped by "." or a space, a decimal
#: comma ("1.428,00", "4 280,00"). Only with its decimal comma: "1.428" alone is 1.428 in
#: English, "4 280" may be two numbers.
_GROUPED = re.compile(r"(?<![\w.,])(\d{1,3}(?:([. ])\d{3})(?:\2\d{3})*),(\d{1,2})(?![\w.,]*\d)")


def _grouped(match: re.Match[str]) -> str:
    """A grouped number with a decimal comma in the writing :func:`number` reads."""
    return f"{match[1].replace(match[2], '')}.{match[3]}"


#: A number glued to its unit ("1.28km", "80kg"): a space between, so the number reads alone.
_GLUED = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(km|cm|mm|ft|mi|kg|mg|lbs?|oz)\b")


_SMALL_WORD = re.compile(
    rf"\b(?:zero|two|three|four|five|six|seven|eight|nine)\b|(?<![{_HAN}])[二两三四五六七八九](?![{_HAN}])",
    re.IGNORECASE,
)
_DIGIT_RUN = re.compile(r"(?<![A-Za-z0-9_.,])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![A-Za-z0-9_])")
_PATHLIKE = re.compile(r"[./\\_]\w")
_COUNT_PAIR = re.compile(r"(\d[\d,.]*) ([^\W\d_]+)")
_COUNT_NOUN = re.compile(
    rf"(?<![\w.])(\d+)\s*(?:([A-Za-z]+)\((?:s|es)\)|[个条项处]\s*([{_CJK}]{{1,2}}))"
)
#: A label, a colon or an equals sign, a whole number: "Failures: 17", "errors=0", "失败数: 9".
_LABELLED_COUNT = re.compile(
    rf"(?<![\w/.\-])([A-Za-z]{{3,}}|[{_CJK}]{{1,4}})\s*[:=]\s*(\d+)(?![\d.,:]\d|[^\W_]|\s+[^\W\d_])"
)
_EDGES = "\"'`()[]{}<>,;:!?.~≈"
#: A token with a digit starts at most 64 characters before its first digit: a long run with no
#: digit (a hostile "xxx...") is then scanned in linear time, not once per letter.
_MASK = re.compile(
    r"(?=[A-Za-z0-9_.\-/:#]{0,64}\d)[A-Za-z0-9_.\-/:#]*\d(?:[A-Za-z0-9_.\-/:%]*[A-Za-z0-9_%])?"
    rf"|[{_HAN}]{{1,12}}(?=[^\s{_CJK}]|[个条件次步页项位笔元块只天年月日号]|$)"
    rf"|\b(?:{'|'.join([*_ONES, *_TENS, *_SCALES])})\b",
    re.IGNORECASE,
)


def _mask(plain: str) -> str:
    return _MASK.sub("#", plain)


def values(text: str) -> frozenset[str]:
    """The canonical values of ``text`` (see the module's docstring)."""
    return read(text).values


def masked(text: str) -> str:
    """``text`` with its values (numbers in any writing) replaced by ``#``."""
    return read(text).masked


#: Words that count the agent's own repetitions (a loop, an attempt, a round, a step of its
#: log), not the items of its work: a number after one ("[iter 5]", "attempt #3", "step: 9",
#: "第3轮") or before a word of times ("重试 3 次") that rises step by step is a loop counter,
#: even in a step whose call worked.
_LOOP_WORD = re.compile(
    r"(?:^|[^a-z])(?:loop|iter|iteration|attempt|try|retry|round|cycle|turn|step|pass|run)$"
)
_LOOP_UNIT = frozenset("次轮遍回")
#: The words of a loop counter that count tries even toward a budget ("attempt 3 of 5").
_TRY_WORD = re.compile(r"(?:^|[^a-z])(?:loop|iter|iteration|attempt|try|retry|round|cycle|turn)$")


def loop_place(place: str) -> bool:
    """Whether a number's place (``word before_first letter after``, as :func:`read` gives it)
    is that of a loop counter: after a word that counts the agent's own repetitions, or before
    a word of times."""
    before, _, after = place.rpartition("_")
    if after == "/" and not _TRY_WORD.search(before):
        return False  # "step 3 of 5", "[3/8]": a count toward a total, the work's progress
    return (
        bool(_LOOP_WORD.search(before))
        or after in _LOOP_UNIT
        or (before.endswith("第") and after == "步")
    )


@dataclass
class Counters:
    """Learns the places of the text whose whole number rises by one or two from one step to
    the next: a loop, attempt or iteration counter, an enumeration across steps. Their numbers
    are no news (:meth:`drop`)."""

    last: dict[str, tuple[int, float]] = field(default_factory=dict)
    limit: int = 256
    #: the places whose number has risen: a counter there that stays put is no news either
    counting: set[str] = field(default_factory=set)

    def drop(self, index: int, numbers: Iterable[tuple[str, str]]) -> frozenset[str]:
        """The values of step ``index`` that are counters' numbers (and only that: a value
        also written elsewhere in the text stays news); then remember this step's places."""
        counter: set[str] = set()
        other: set[str] = set()
        seen: dict[str, float] = {}
        for place, value in numbers:
            try:
                now = float(value)
            except ValueError:
                continue
            before = self.last.get(place)
            # a counter counts in whole numbers: a fraction that rises (a score 0.71 then
            # 0.78, a ratio) is a measurement, news each time it moves
            rises = (
                before is not None
                and index - before[0] <= 3
                and 0 < now - before[1] <= 2
                and now.is_integer()
                and before[1].is_integer()
            )
            stays = before is not None and place in self.counting and now == before[1]
            if rises and len(self.counting) < self.limit:
                self.counting.add(place)
            (counter if rises or stays else other).add(value)
            seen.setdefault(place, now)
        for place, now in seen.items():
            self.last[place] = (index, now)
        while len(self.last) > self.limit:
            self.last.pop(next(iter(self.last)))
        return frozenset(counter - other)
