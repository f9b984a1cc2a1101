"""Phone numbers: the ``phone-number`` format (as OpenAPI specs such as Twilio's use it) and
its repair into E.164 with Google's libphonenumber (the ``phonenumbers`` port), imported on
first use.

A number written with its country code (``+1 (415) 555-0123``) is rewritten mechanically. A
national number (``(415) 555-0123``) needs its country: only a country the task names by its
code ("my US number") settles it, and only when the number is valid there; else the repairer
declines, since the same digits dial different people in different countries.
"""

from __future__ import annotations

import re
from typing import Any

from .fixes import Context, Decline, Fix, shown

__all__ = ["PHONE_FORMATS", "fix_phone", "is_phone_address"]

#: The format names read as a phone number (or a channel address such as ``whatsapp:+1...``).
PHONE_FORMATS = frozenset({"phone-number", "phone"})

_E164 = re.compile(r"^\+[1-9]\d{1,14}$")
#: A channel address (``whatsapp:+15552229999``), a short code, an alphanumeric sender ID.
_OTHER = re.compile(r"^[a-z][a-z0-9-]*:\S+$|^\d{3,6}$|^(?=[^a-zA-Z]*[a-zA-Z])[A-Za-z0-9 ]{1,11}$")
#: How tasks name some countries besides their ISO code.
_NAMES = {"UK": "GB", "USA": "US", "U.S.": "US", "U.S.A.": "US", "U.K.": "GB"}
_LIMIT = 64  # a longer text is no phone number


def is_phone_address(value: object) -> bool:
    """Whether ``value`` is a number in E.164, or one of the other addresses such a field
    takes (a channel address, a short code, an alphanumeric sender); non-strings pass (the
    ``type`` keyword judges them)."""
    if not isinstance(value, str):
        return True
    return bool(_E164.match(value) or _OTHER.match(value))


def fix_phone(value: Any, ctx: Context) -> Fix | Decline | None:
    """``value`` in E.164, or why not; None when it is no text."""
    what = "format_correction"
    if not isinstance(value, str):
        return None
    text = value.strip()
    if len(text) > _LIMIT or not re.search(r"\d", text):
        return Decline(what, f"{shown(value)} is no phone number")
    import phonenumbers

    if text.startswith(("+", "00")):
        number = _parse("+" + text[2:] if text.startswith("00") else text, None)
        if number is None:
            return Decline(what, f"{shown(value)} is not a valid phone number")
        fixed = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
        return Fix(what, fixed, 0.95, f"{shown(value)} written in E.164: {fixed}")
    found = {}
    for region in _regions(ctx.task or ""):
        number = _parse(text, region)
        if number is not None:
            found[phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)] = region
    if len(found) == 1:
        fixed, region = next(iter(found.items()))
        return Fix(what, fixed, 0.85, f"{shown(value)} has no country code; the task says "
                   f"{region}: {fixed}")  # fmt: skip
    return Decline(
        what,
        f"{shown(value)} has no country code, and the task does not say which country: the "
        "same digits reach different people in different countries",
    )


def _regions(task: str) -> list[str]:
    import phonenumbers

    found = []
    for token in re.findall(r"(?<![\w.])(?:[A-Z]\.){2,3}|\b[A-Z]{2,3}\b", task[:4000]):
        region = _NAMES.get(token, token)
        if region in phonenumbers.SUPPORTED_REGIONS and region not in found:
            found.append(region)
    return found


def _parse(text: str, region: str | None) -> Any:
    import phonenumbers

    try:
        number = phonenumbers.parse(text, region)
    except phonenumbers.NumberParseException:
        return None
    return number if phonenumbers.is_valid_number(number) else None
