"""How a Streamable HTTP client settles a server's era (docs/requirements.md#http-client rules 5, 6).

Theory of operation: over HTTP the era is found by asking, and the answer is an HTTP status as
much as a JSON-RPC one. A client that does not know the server's era probes with
``server/discover`` (modern, stateless); :func:`classify_probe` reads the outcome: a result naming
a version we speak, or -32022 with one, is modern; a JSON-RPC error or an empty/unrecognised 400,
404 or 405 is legacy (use ``initialize``); 401, 403, 5xx and other statuses are errors, never era
signals (network failures and timeouts never reach it; HTTP-36). A modern request refused with
-32022 is retried once with the version :func:`supported_version` picks from the error's
``data.supported`` (:func:`with_protocol_version` rewrites its ``_meta``; HTTP-35).
:class:`EraCache` remembers the verdict per origin, so a second connection skips the probe.

Which era one *request* belongs to is :func:`skills_core.messages.request_era`'s to say, for every
side and transport; this module is about finding the *server's*.

Pure functions and one small mapping; nothing here does I/O.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from typing import final

from ..errors import JsonRpcError, SkillsError
from ..messages import Era
from ..spec import META_PROTOCOL_VERSION, SUPPORTED_MODERN_VERSIONS, ErrorCode
from .client import HttpStatusError
from .headers import HANDSHAKE_VERSIONS
from .urls import origin_of

__all__ = [
    "supported_version",
    "with_protocol_version",
    "ProbeVerdict",
    "classify_probe",
    "EraCache",
]


def supported_version(data: object, ours: Sequence[str] = SUPPORTED_MODERN_VERSIONS) -> str | None:
    """The version to retry with after -32022: ours, in our order, that ``data.supported`` lists.

    HTTP-35: "pick a version from data.supported, retry once". ``None`` when the error data has no
    valid ``supported`` list or it shares no version with ``ours``.
    """
    supported = _supported(data)
    return next((v for v in ours if v in supported), None) if supported else None


def _supported(data: object) -> list[str]:
    listed = data.get("supported") if isinstance(data, dict) else None
    if isinstance(listed, list) and all(isinstance(v, str) for v in listed):
        return [v for v in listed if isinstance(v, str)]
    return []


def with_protocol_version(params: Mapping[str, object], version: str) -> dict[str, object]:
    """``params`` with ``_meta``'s protocol version replaced (the -32022 retry; HTTP-35)."""
    meta = params.get("_meta")
    new_meta = dict(meta) if isinstance(meta, Mapping) else {}
    new_meta[META_PROTOCOL_VERSION] = version
    return {**params, "_meta": new_meta}


class ProbeVerdict(enum.Enum):
    """What the ``server/discover`` probe says about a server (docs/requirements.md#http-client rule
    6; HTTP-36)."""

    #: It speaks a modern version we speak.
    MODERN = "modern"
    #: It does not understand the probe: use ``initialize``.
    LEGACY = "legacy"
    #: The probe failed for a reason that says nothing about the era: report it.
    ERROR = "error"


def classify_probe(
    status: int,
    *,
    result: Mapping[str, object] | None = None,
    error: SkillsError | None = None,
    ours: Sequence[str] = SUPPORTED_MODERN_VERSIONS,
) -> ProbeVerdict:
    """Classify the HTTP answer to a ``server/discover`` probe (docs/requirements.md#http-client
    rule 6; HTTP-36; TS probeClassifier).

    Network failures and timeouts never get here: they are errors, not era signals.

    Args:
        status: The HTTP status of the final answer (after any -32022 retry).
        result: The discover result, when there was one.
        error: The error otherwise: a :class:`~skills_core.errors.JsonRpcError` from the body, or
            the :class:`HttpStatusError` of a body without one, or another ``TransportError``.
        ours: The modern versions this client speaks.

    Returns:
        :attr:`ProbeVerdict.MODERN` for a result that lists one of ``ours``;
        :attr:`ProbeVerdict.LEGACY` for any other result, a JSON-RPC error (except a -32022 that
        lists modern versions only, and except under 401, 403 or 5xx), or a 400/404/405 without
        one; :attr:`ProbeVerdict.ERROR` otherwise.
    """
    if result is not None:
        versions = result.get("supportedVersions")
        if isinstance(versions, list) and any(v in versions for v in ours):
            return ProbeVerdict.MODERN
        return ProbeVerdict.LEGACY  # a discover result we cannot use: initialize may still work
    if status in (401, 403) or status >= 500:
        return ProbeVerdict.ERROR  # the auth layer's or the infrastructure's answer, not the era
    if isinstance(error, JsonRpcError):
        if error.rpc_code == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION:
            supported = _supported(error.data)
            if any(v in supported for v in ours):
                return ProbeVerdict.ERROR  # the retry with that version was refused too
            if any(v not in HANDSHAKE_VERSIONS for v in supported):
                return ProbeVerdict.ERROR  # modern, but none we speak: initialize will not help
        return ProbeVerdict.LEGACY
    if isinstance(error, HttpStatusError) and status in (400, 404, 405):
        return ProbeVerdict.LEGACY
    return ProbeVerdict.ERROR


@final
class EraCache:
    """The era each origin was found to speak, so a second connection skips the probe (HTTP-36).

    A plain mapping owned by whoever opens connections (one per command run, say); nothing global.
    """

    __slots__ = ("_eras",)

    def __init__(self, eras: Iterable[tuple[str, Era]] = ()) -> None:
        self._eras: dict[str, Era] = {}
        for url, era in eras:
            self.put(url, era)

    def get(self, url: str) -> Era | None:
        """The era recorded for ``url``'s origin, or ``None``."""
        return self._eras.get(origin_of(url))

    def put(self, url: str, era: Era) -> None:
        """Record that ``url``'s origin speaks ``era``."""
        self._eras[origin_of(url)] = era
