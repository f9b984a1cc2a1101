"""A lone value where an object is due: the one field of the object it can only be
(``"a@b.c"`` for ``{"email": ...}``), or a latitude and a longitude written as text; and an
object where text is due that the task writes as JSON text."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from .fixes import Fix, schema_types, shown

__all__ = ["coordinates", "json_written", "lone_field"]


def coordinates(value: Any, schema: Mapping[str, Any]) -> Fix | None:
    """``"48.86,2.34"`` for an object of a latitude and a longitude: latitude first, as
    coordinates are written, when both are in range."""
    props = schema.get("properties")
    if not isinstance(value, str) or not isinstance(props, Mapping) or len(value) > 80:
        return None
    lat = [k for k in props if re.fullmatch(r"lat(?:itude)?", str(k), re.IGNORECASE)]
    lng = [k for k in props if re.fullmatch(r"lo?ng?(?:itude)?", str(k), re.IGNORECASE)]
    match = re.fullmatch(
        r"\s*\(?\s*(-?\d{1,3}(?:\.\d+)?)\s*,\s*(-?\d{1,3}(?:\.\d+)?)\s*\)?\s*", value
    )
    if len(lat) != 1 or len(lng) != 1 or match is None:
        return None
    north, east = float(match[1]), float(match[2])
    if abs(north) > 90 or abs(east) > 180:
        return None
    why = f"{shown(value)} is a latitude and a longitude"
    return Fix("schema_type_conversion", {lat[0]: north, lng[0]: east}, 0.9, why)


def lone_field(value: Any, schema: Mapping[str, Any]) -> str | None:
    """The one field of an object schema a lone value can only be (``"a@b.c"`` for
    ``{"email": ...}``): the one required field, or the one field, whose type takes it; where
    none is required, the one field whose schema takes the value."""
    props = schema.get("properties")
    if not isinstance(props, Mapping) or not props:
        return None
    required = [k for k in schema.get("required", []) if k in props]
    names = required if required else list(props)
    if len(names) > 1 and not required and len(names) <= 20:
        # no field required: the one field that takes the value ("cats" for a category's
        # name beside its integer id), where exactly one does
        from .spec import checker_for

        names = [n for n in names if isinstance(props[n], Mapping) and props[n]
                 and checker_for(props[n]).is_valid(value)]  # fmt: skip
    if len(names) != 1:
        return None
    field = props[names[0]]
    if not isinstance(field, Mapping):
        return None
    from .coerce import has_type

    types = schema_types(field)
    if types and not has_type(value, types):
        return None
    fmt = field.get("format")
    if fmt in ("email", "idn-email") and not (isinstance(value, str) and "@" in value):
        return None
    return str(names[0])


def json_written(value: Any, task: str | None) -> str | None:
    """The task's own JSON text of ``value`` (an object or a list sent where text is due:
    ``{"sku": "SKU-1"}`` written so in the task), exactly as the task writes it; None when
    the task writes it nowhere, or in more than one way."""
    if not isinstance(value, (dict, list)) or not value or not task:
        return None
    text, decoder, found = task[:4000], json.JSONDecoder(), set()
    for start in [m.start() for m in re.finditer(r"[{\[]", text)][:50]:
        try:
            parsed, end = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if parsed == value and type(parsed) is type(value):
            found.add(text[start:end])
    return found.pop() if len(found) == 1 else None
