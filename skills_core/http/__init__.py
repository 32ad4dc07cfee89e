"""Streamable HTTP without I/O: both halves of the transport, and the legacy session codec.

Theory of operation
-------------------
Everything MCP's Streamable HTTP transport decides lives in this package, as pure functions and
small state machines (bytes, strings and decoded JSON in; values, verdicts and bytes out), under
the sans-IO rule the rest of the core keeps: no socket, clock, file, environment or randomness,
and only the standard library. The adapters move the bytes: :mod:`skills_core.adapters.asgi`
(the server, an ASGI app) and :mod:`skills_core.adapters.http_client` (the client, over httpx2).

What each module owns:

* :mod:`~skills_core.http.headers` -- both halves: the transport's header names and media types,
  the ``=?base64?...?=`` value encoding and its one decoder, the check of a caller's extra header,
  and ``Accept`` parsing (media ranges and weights).
* :mod:`~skills_core.http.client` -- the client half: a POST's headers derived from its message
  (modern or legacy, with the session), what a response's status and ``Content-Type`` mean, the
  reader that picks one request's answer out of a JSON or SSE body, and errors from statuses.
* :mod:`~skills_core.http.sse` -- the ``text/event-stream`` parser the client reads answers with.
* :mod:`~skills_core.http.urls` -- the client's URLs: the endpoint's checks, origins, and the
  same-origin 307/308 redirects it follows.
* :mod:`~skills_core.http.eras` -- the client finding a server's era: the ``server/discover``
  probe's verdict, the -32022 retry, and the per-origin cache of verdicts.
* :mod:`~skills_core.http.server` -- the server half: the ladder every request climbs (path,
  ``Host``, ``Origin``, size, method, media types, the body, the era, the routing headers, the
  session) and the replies it ends in.
* :mod:`~skills_core.http.options` -- the server's settings (:class:`HttpOptions`), with the
  strict parsing of ``Host`` and ``Origin`` its allow-lists use.
* :mod:`~skills_core.http.session` -- the signed, self-contained legacy session ids
  (:class:`SessionCodec`) that let any worker check any session.

Which era a request belongs to is decided for every side and transport by
:func:`skills_core.messages.request_era`; the server half routes by the ``MCP-Protocol-Version``
header first (docs/requirements.md#http-eras), and by that function when there is none.

The names below load on first use (PEP 562), so importing one half does not import the other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .client import MAX_ERROR_BODY as MAX_ERROR_BODY
    from .client import Answered as Answered
    from .client import BodyKind as BodyKind
    from .client import Disposition as Disposition
    from .client import Failed as Failed
    from .client import HttpStatusError as HttpStatusError
    from .client import LegacySession as LegacySession
    from .client import Noted as Noted
    from .client import NoteKind as NoteKind
    from .client import ReaderEvent as ReaderEvent
    from .client import ResponseReader as ResponseReader
    from .client import bad_answer as bad_answer
    from .client import check_session_id as check_session_id
    from .client import message_headers as message_headers
    from .client import response_disposition as response_disposition
    from .client import session_headers as session_headers
    from .client import status_error as status_error
    from .eras import EraCache as EraCache
    from .eras import ProbeVerdict as ProbeVerdict
    from .eras import classify_probe as classify_probe
    from .eras import supported_version as supported_version
    from .eras import with_protocol_version as with_protocol_version
    from .headers import ACCEPT as ACCEPT
    from .headers import HANDSHAKE_VERSIONS as HANDSHAKE_VERSIONS
    from .headers import HEADER_METHOD as HEADER_METHOD
    from .headers import HEADER_NAME as HEADER_NAME
    from .headers import HEADER_PROTOCOL_VERSION as HEADER_PROTOCOL_VERSION
    from .headers import HEADER_SESSION_ID as HEADER_SESSION_ID
    from .headers import JSON_MEDIA_TYPE as JSON_MEDIA_TYPE
    from .headers import OWS as OWS
    from .headers import RESERVED_HEADERS as RESERVED_HEADERS
    from .headers import SSE_MEDIA_TYPE as SSE_MEDIA_TYPE
    from .headers import acceptable as acceptable
    from .headers import accepts_json_and_sse as accepts_json_and_sse
    from .headers import accepts_sse as accepts_sse
    from .headers import check_custom_header as check_custom_header
    from .headers import decode_header_value as decode_header_value
    from .headers import encode_header_value as encode_header_value
    from .headers import media_ranges as media_ranges
    from .options import DEFAULT_BODY_TIMEOUT as DEFAULT_BODY_TIMEOUT
    from .options import DEFAULT_HEAD_TIMEOUT as DEFAULT_HEAD_TIMEOUT
    from .options import DEFAULT_IDLE_TIMEOUT as DEFAULT_IDLE_TIMEOUT
    from .options import DEFAULT_LARGE_ANSWER_QUEUE as DEFAULT_LARGE_ANSWER_QUEUE
    from .options import DEFAULT_MAX_BODY_BYTES as DEFAULT_MAX_BODY_BYTES
    from .options import DEFAULT_MAX_LARGE_ANSWERS as DEFAULT_MAX_LARGE_ANSWERS
    from .options import DEFAULT_PATH as DEFAULT_PATH
    from .options import DEFAULT_SEND_TIMEOUT as DEFAULT_SEND_TIMEOUT
    from .options import DEFAULT_SESSION_TTL as DEFAULT_SESSION_TTL
    from .options import LARGE_ANSWER_BYTES as LARGE_ANSWER_BYTES
    from .options import LOOPBACK_HOSTS as LOOPBACK_HOSTS
    from .options import LOOPBACK_ORIGINS as LOOPBACK_ORIGINS
    from .options import HttpOptions as HttpOptions
    from .options import Scope as Scope
    from .server import MEMO_LIMIT as MEMO_LIMIT
    from .server import Call as Call
    from .server import Head as Head
    from .server import HttpChecks as HttpChecks
    from .server import Reply as Reply
    from .server import StreamCall as StreamCall
    from .server import encode_answer as encode_answer
    from .server import text_reply as text_reply
    from .session import MIN_SESSION_KEY_BYTES as MIN_SESSION_KEY_BYTES
    from .session import SessionCodec as SessionCodec
    from .sse import SseEvent as SseEvent
    from .sse import SseParser as SseParser
    from .urls import MAX_REDIRECTS as MAX_REDIRECTS
    from .urls import MAX_URL_LENGTH as MAX_URL_LENGTH
    from .urls import check_url as check_url
    from .urls import origin_of as origin_of
    from .urls import redirect_target as redirect_target

_LAZY: dict[str, str] = {
    # headers
    "ACCEPT": ".headers",
    "JSON_MEDIA_TYPE": ".headers",
    "SSE_MEDIA_TYPE": ".headers",
    "HEADER_PROTOCOL_VERSION": ".headers",
    "HEADER_METHOD": ".headers",
    "HEADER_NAME": ".headers",
    "HEADER_SESSION_ID": ".headers",
    "RESERVED_HEADERS": ".headers",
    "HANDSHAKE_VERSIONS": ".headers",
    "OWS": ".headers",
    "encode_header_value": ".headers",
    "decode_header_value": ".headers",
    "check_custom_header": ".headers",
    "media_ranges": ".headers",
    "acceptable": ".headers",
    "accepts_json_and_sse": ".headers",
    "accepts_sse": ".headers",
    # client
    "MAX_ERROR_BODY": ".client",
    "LegacySession": ".client",
    "message_headers": ".client",
    "session_headers": ".client",
    "check_session_id": ".client",
    "BodyKind": ".client",
    "Disposition": ".client",
    "response_disposition": ".client",
    "bad_answer": ".client",
    "Answered": ".client",
    "Failed": ".client",
    "Noted": ".client",
    "NoteKind": ".client",
    "ReaderEvent": ".client",
    "ResponseReader": ".client",
    "status_error": ".client",
    "HttpStatusError": ".client",
    # sse
    "SseEvent": ".sse",
    "SseParser": ".sse",
    # urls
    "MAX_REDIRECTS": ".urls",
    "MAX_URL_LENGTH": ".urls",
    "origin_of": ".urls",
    "check_url": ".urls",
    "redirect_target": ".urls",
    # eras
    "supported_version": ".eras",
    "with_protocol_version": ".eras",
    "ProbeVerdict": ".eras",
    "classify_probe": ".eras",
    "EraCache": ".eras",
    # server
    "MEMO_LIMIT": ".server",
    "Reply": ".server",
    "Call": ".server",
    "StreamCall": ".server",
    "Head": ".server",
    "HttpChecks": ".server",
    "encode_answer": ".server",
    "text_reply": ".server",
    # options
    "DEFAULT_PATH": ".options",
    "DEFAULT_MAX_BODY_BYTES": ".options",
    "DEFAULT_BODY_TIMEOUT": ".options",
    "DEFAULT_SESSION_TTL": ".options",
    "DEFAULT_SEND_TIMEOUT": ".options",
    "DEFAULT_HEAD_TIMEOUT": ".options",
    "DEFAULT_IDLE_TIMEOUT": ".options",
    "DEFAULT_MAX_LARGE_ANSWERS": ".options",
    "DEFAULT_LARGE_ANSWER_QUEUE": ".options",
    "LARGE_ANSWER_BYTES": ".options",
    "LOOPBACK_HOSTS": ".options",
    "LOOPBACK_ORIGINS": ".options",
    "Scope": ".options",
    "HttpOptions": ".options",
    # session
    "MIN_SESSION_KEY_BYTES": ".session",
    "SessionCodec": ".session",
}

if not TYPE_CHECKING:  # type checkers see the imports above; a typo stays a type error
    __getattr__, __dir__ = lazy_exports(globals(), _LAZY)

__all__ = [
    # headers
    "ACCEPT",
    "JSON_MEDIA_TYPE",
    "SSE_MEDIA_TYPE",
    "HEADER_PROTOCOL_VERSION",
    "HEADER_METHOD",
    "HEADER_NAME",
    "HEADER_SESSION_ID",
    "RESERVED_HEADERS",
    "HANDSHAKE_VERSIONS",
    "OWS",
    "encode_header_value",
    "decode_header_value",
    "check_custom_header",
    "media_ranges",
    "acceptable",
    "accepts_json_and_sse",
    "accepts_sse",
    # client
    "MAX_ERROR_BODY",
    "LegacySession",
    "message_headers",
    "session_headers",
    "check_session_id",
    "BodyKind",
    "Disposition",
    "response_disposition",
    "bad_answer",
    "Answered",
    "Failed",
    "Noted",
    "NoteKind",
    "ReaderEvent",
    "ResponseReader",
    "status_error",
    "HttpStatusError",
    # sse
    "SseEvent",
    "SseParser",
    # urls
    "MAX_REDIRECTS",
    "MAX_URL_LENGTH",
    "origin_of",
    "check_url",
    "redirect_target",
    # eras
    "supported_version",
    "with_protocol_version",
    "ProbeVerdict",
    "classify_probe",
    "EraCache",
    # server
    "MEMO_LIMIT",
    "Reply",
    "Call",
    "StreamCall",
    "Head",
    "HttpChecks",
    "encode_answer",
    "text_reply",
    # options
    "DEFAULT_PATH",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_BODY_TIMEOUT",
    "DEFAULT_SESSION_TTL",
    "DEFAULT_SEND_TIMEOUT",
    "DEFAULT_HEAD_TIMEOUT",
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_MAX_LARGE_ANSWERS",
    "DEFAULT_LARGE_ANSWER_QUEUE",
    "LARGE_ANSWER_BYTES",
    "LOOPBACK_HOSTS",
    "LOOPBACK_ORIGINS",
    "Scope",
    "HttpOptions",
    # session
    "MIN_SESSION_KEY_BYTES",
    "SessionCodec",
]
