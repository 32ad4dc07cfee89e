"""Streamable HTTP for a skills server: an ASGI 3 application, both protocol eras, standard library only.

Theory of operation
-------------------
ASGI is a calling convention, not a package (docs/design.md#d10): :class:`SkillsApp` is an
``async (scope, receive, send)`` callable that any ASGI server runs (uvicorn, hypercorn,
gunicorn with uvicorn workers). It serves one endpoint (``/mcp`` by default; under a ``root_path``
when mounted) and answers every HTTP exchange with one complete JSON answer: a skills server sends
no server-initiated messages and answers synchronously, so it never needs a stream
(docs/requirements.md#http; HTTP-17 allows JSON or SSE, the server's choice).

**The layout.** This module is the public face; the work is split by job. The protocol is in the
core, without I/O: :mod:`skills_core.http.server` holds the rules every request climbs (the ladder
of docs/requirements.md#http-ladder and docs/requirements.md#http-legacy, the eras, the routing
headers, the session checks), :mod:`skills_core.http.options` the settings,
:mod:`skills_core.http.session` the session ids. The I/O is here:
:mod:`~skills_core.adapters._asgi_app` is the ASGI callable (reading the body within its bounds,
asking the server, sending); :mod:`~skills_core.adapters._asgi_config` the shared secret and the app
built from environment variables for ASGI servers that run several workers.

**Sessions** are self-contained (:mod:`skills_core.http.session`): the id carries the
negotiated version and an expiry under an HMAC, so any worker of any process sharing the key
checks it, and no client is pinned to a process. Such an id cannot be revoked before it expires
without state every worker shares, so ``DELETE`` is answered 405, which HTTP-26 allows ("2xx or
405") and clients tolerate (the TypeScript and Python SDKs, the conformance suite, which reports
the termination checks SKIPPED). A revocation list in the key file's directory was considered and
refused: it would be shared state after all, invisible to a second machine behind the same load
balancer, so a ``DELETE`` answered 2xx could leave a session alive elsewhere. Sessions are not
authentication (HTTP-42); when the embedding application authenticates, pass
``HttpOptions.principal`` and a session only works for the principal that opened it. A ``GET``
opens a legacy session's change stream (PUSH-03, :mod:`~skills_core.adapters._asgi_push`, under
asyncio and trio alike); a ``GET`` without a session is 405 (HTTP-27).

**Pagination cursors** are signed by the server with its ``cursor_key``; give every worker the
same key (see :func:`derive_key`, :class:`AppConfig`) and a listing can alternate between workers.

**Security defaults** (docs/requirements.md#http-security): the ``Host`` allow-list defaults to the loopback
names (DNS-rebinding protection; pass ``allowed_hosts=None`` to switch it off, as for a server
behind a proxy that checks it), ``Origin`` must be listed when present (by default the loopback
origins, any port), no CORS headers unless ``cors=True``, a 4 MiB body cap (the Python SDK's),
30 s to receive a body, and no exception text in any answer: the server turns failures into
``-32603 Internal error``, and everything this module says is its own text. ``Authorization`` is
the embedding application's business (an ASGI middleware; see ``examples/http_auth.py``).

**What clients can hold**: answers over :data:`LARGE_ANSWER_BYTES` go out in pieces, at most
``max_large_answers`` (4) at once per worker with ``large_answer_queue`` (64) waiting and 503
past them, and a response whose client takes nothing for ``send_timeout`` (30 s) is ended, so a
worker's memory stays at a few large answers whatever clients do. Deadlines for a request's head
and for idle connections are the ASGI server's to enforce: under uvicorn,
:mod:`skills_core.adapters.uvicorn_http` takes them from :class:`HttpOptions`.

**Running it.** In code: ``SkillsApp(server, session_key=...)``. With an ASGI server that imports
by path, :func:`app_from_env` builds the app from environment variables (:class:`AppConfig`)::

    SKILLS_CORE_ROOTS=./skills SKILLS_CORE_CURSOR_KEY_FILE=./key \\
        uvicorn --factory skills_core.adapters.asgi:app_from_env --workers 4

``skills-core serve --http`` does exactly this with uvicorn, adding ``--http
skills_core.adapters.uvicorn_http:BoundedProtocol`` (the deadlines for heads and stalled writes).
For an ASGI server without a factory option (gunicorn with a uvicorn worker class), a one-line
module of your own, ``app = app_from_env()``, gives it an app to import by path, with the same
variables; hypercorn also takes ``'skills_core.adapters.asgi:app_from_env()'``.
"""

from __future__ import annotations

from ..http.headers import HANDSHAKE_VERSIONS
from ..http.options import (
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_HEAD_TIMEOUT,
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_LARGE_ANSWER_QUEUE,
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_LARGE_ANSWERS,
    DEFAULT_PATH,
    DEFAULT_SEND_TIMEOUT,
    DEFAULT_SESSION_TTL,
    LARGE_ANSWER_BYTES,
    LOOPBACK_HOSTS,
    LOOPBACK_ORIGINS,
    HttpOptions,
    Scope,
)
from ._asgi_app import Receive, Send, SkillsApp
from ._asgi_config import (
    MIN_SECRET_BYTES,
    AppConfig,
    app_from_env,
    create_key_file,
    derive_key,
    read_key_file,
)

__all__ = [
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
    "HANDSHAKE_VERSIONS",
    "Scope",
    "Receive",
    "Send",
    "HttpOptions",
    "SkillsApp",
    "MIN_SECRET_BYTES",
    "derive_key",
    "read_key_file",
    "create_key_file",
    "AppConfig",
    "app_from_env",
]
