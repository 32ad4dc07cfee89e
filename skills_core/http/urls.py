"""Where a Streamable HTTP client may send: the endpoint's URL, origins, and redirects
(docs/requirements.md#http-client rule 10).

Theory of operation: a client sends every message of a connection to one URL, the server's MCP
endpoint, and its headers (the caller's ``Authorization`` among them) with it. So the URL is
checked once when the connection is made (:func:`check_url`: absolute ``http(s)``, no credentials
in it, no control character, bounded; HTTP-40), and a redirect is followed only when it keeps the
message and its headers where they were going (:func:`redirect_target`; HTTP-41): 307 and 308
only (301/302/303 would turn the POST into a GET), to the same origin only (:func:`origin_of`:
scheme, host and port, the port made explicit), at most :data:`MAX_REDIRECTS` times. Since no
redirect leaves the origin, no header is ever sent anywhere else. Messages name the origin at
most, never a path or query (they may carry tokens).

Pure functions of strings; nothing here does I/O.
"""

from __future__ import annotations

from typing import Final
from urllib.parse import urljoin, urlsplit

from ..errors import TransportError, quote_for_message
from .headers import OWS

__all__ = ["MAX_REDIRECTS", "MAX_URL_LENGTH", "origin_of", "check_url", "redirect_target"]

#: Redirect hops followed for one message. Only same-origin 307/308 are followed at all, so a
#: chain longer than a load balancer's one or two hops is a loop or a trap. (Precedents: browsers
#: and httpx stop at 20; curl at 50 when told to follow; none of them keep to one origin.)
MAX_REDIRECTS: Final = 5

#: The longest URL accepted, the server's or a redirect's (httpx's own limit).
MAX_URL_LENGTH: Final = 65536

_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


def origin_of(url: str) -> str:
    """Return ``scheme://host:port`` of an http(s) URL, lower-cased, with the port made explicit.

    Raises:
        ValueError: Not an absolute ``http`` or ``https`` URL with a host.
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        raise ValueError("not an absolute http:// or https:// URL")
    port = parts.port  # raises ValueError for a bad port
    if port is None:
        port = _DEFAULT_PORTS[scheme]
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}:{port}"


def _has_control(text: str) -> bool:
    """True when ``text`` holds an ASCII control character (no URL may: HTTP clients refuse them)."""
    return any(c < " " or c == "\x7f" for c in text)


def check_url(url: str) -> str:
    """Return ``url`` if it can name an MCP endpoint: absolute http(s), no credentials (HTTP-40).

    Raises:
        ValueError: saying which; the URL itself is not repeated (it may carry a secret).
    """
    if _has_control(url):
        raise ValueError("the URL holds a control character")
    if len(url) > MAX_URL_LENGTH:
        raise ValueError(f"the URL is longer than {MAX_URL_LENGTH:,} characters")
    origin_of(url)
    if "@" in urlsplit(url).netloc:
        raise ValueError("credentials in the URL are refused; send them in a header instead")
    return url


def _join(url: str, location: str) -> str | None:
    """``location`` resolved against ``url``, or ``None`` when it is not a usable URL."""
    if _has_control(location) or len(location) > MAX_URL_LENGTH:
        return None
    try:
        target = urljoin(url, location)  # ValueError: "Invalid IPv6 URL"
        if urlsplit(target).scheme.lower() in _DEFAULT_PORTS:
            origin_of(target)  # ValueError: a port that is not a number, or out of range
    except ValueError:
        return None
    return target if len(target) <= MAX_URL_LENGTH else None


def redirect_target(url: str, status: int, location: str | None, *, hops: int, label: str) -> str:
    """Return the URL to send the same POST to after a 3xx, or refuse
    (docs/requirements.md#http-client rule 10; HTTP-41).

    Args:
        url: The URL that answered with the redirect.
        status: Its status.
        location: Its ``Location`` header.
        hops: Redirects already followed for this message.
        label: The server's label (for messages).

    Returns:
        The absolute target URL: same origin, without credentials, 307 or 308, within
        :data:`MAX_REDIRECTS`.

    Raises:
        TransportError: kind ``redirect``, naming the status and, for another origin, that origin
            (never the path or query, which may carry tokens); also for a ``Location`` that is not
            a URL (a control character in it, a broken IPv6 literal, a bad port).
    """
    if status not in (307, 308):
        why = (
            "which would turn the POST into a GET"
            if status in (301, 302, 303)
            else "which this client does not follow"
        )
        raise TransportError(
            f"server {label!r} answered with a {status} redirect, {why}", kind="redirect"
        )
    if hops >= MAX_REDIRECTS:
        raise TransportError(
            f"server {label!r} redirected more than {MAX_REDIRECTS} times", kind="redirect"
        )
    if not location:
        raise TransportError(
            f"server {label!r} answered with a {status} redirect without a Location",
            kind="redirect",
        )
    location = location.strip(OWS)
    target = _join(url, location)
    if target is None:
        raise TransportError(
            f"server {label!r} answered with a {status} redirect whose Location is not a URL "
            "(a control character, or a malformed host or port)",
            kind="redirect",
        )
    try:
        there: str | None = origin_of(target)
    except ValueError:  # another scheme (a malformed URL of ours was refused by _join)
        there = None
    if there != origin_of(url):
        where = there if there is not None else "a URL that is not http(s)"
        raise TransportError(
            f"server {label!r} redirected to another origin ({quote_for_message(where, 80)}); "
            "redirects are followed only within the server's own origin",
            kind="redirect",
        )
    if "@" in urlsplit(target).netloc:
        raise TransportError(
            f"server {label!r} answered with a {status} redirect to a URL with credentials in it; "
            "credentials never travel in a URL",
            kind="redirect",
        )
    return target
