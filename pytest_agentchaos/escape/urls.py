"""An HTTP request's URL read as what the request asks for: its path's segments are arguments.

An HTTP call is named by its method and URL (``GET https://host/dags/d/runs/manual__9``), and a
URL's path often carries what an argument would: the run, the job, the build the agent asks
about. A handle a result issued (a run id the trigger returned) and the agent passes back in
the path is a handle there as in an argument (:mod:`.provenance`): two laps that re-trigger a
job and read the fresh run's status are the same laps. :func:`url_path` splits such a request;
the keyer masks the segments as it masks arguments and names the request by what stays.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

__all__ = ["UrlPath", "url_path"]

#: ``METHOD scheme://host/path?query#fragment``: the method, the origin, the path, the rest.
_REQUEST = re.compile(
    r"(?P<head>(?:[A-Z]{3,7} )?[a-z][a-z0-9+.-]*://[^/?#\s]+)(?P<path>/[^?#\s]*)(?P<tail>\S*)"
)
_DIGIT = re.compile(r"\d")
#: The longest URL read (past it: named as it is).
_URL_LIMIT = 2048


class UrlPath:
    """A request split at its path: ``head`` (the method and origin), the path's
    ``segments`` (percent-decoded), ``tail`` (query and fragment), and ``template``: the
    request with each segment holding a digit written ``*`` (what names the endpoint)."""

    __slots__ = ("head", "segments", "tail", "template")

    def __init__(self, head: str, segments: list[str], tail: str) -> None:
        self.head = head
        self.segments = segments
        self.tail = tail
        shape = "/".join("*" if _DIGIT.search(s) else s for s in segments)
        self.template = f"{head}{shape}{tail}"

    def name(self, segments: list[str]) -> str:
        """The request named with ``segments`` (masked) for its path's."""
        return f"{self.head}{'/'.join(segments)}{self.tail}"


def url_path(tool: str) -> UrlPath | None:
    """``tool`` (an HTTP call's name: ``GET https://host/a/7``) split at its path when a
    segment of the path holds a digit (the segments that could be handles); None otherwise."""
    if len(tool) > _URL_LIMIT or _DIGIT.search(tool) is None:
        return None
    found = _REQUEST.fullmatch(tool.strip())
    if found is None:
        return None
    path = found.group("path")
    if _DIGIT.search(path) is None:
        return None
    return UrlPath(found.group("head"), [unquote(s) for s in path.split("/")], found.group("tail"))
