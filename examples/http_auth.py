"""Serve skills over Streamable HTTP behind a bearer-token check: an ASGI middleware of your own.

Usage::

    SKILLS_AUTH_TOKENS='s3cret-a=alice,s3cret-b=bob' PYTHONPATH=. \\
        python3 examples/http_auth.py ./skills --port 8080      # needs: pip install 'skills-core[http]'
    curl -H 'Authorization: Bearer s3cret-a' ...                 # as alice

The library leaves authentication to the application (docs/requirements.md#http-security): whoever deploys a
skills server knows how its callers prove who they are. This example shows the shape. A
middleware in front of :class:`~skills_core.adapters.asgi.SkillsApp` answers 401 with
``WWW-Authenticate: Bearer`` unless the request carries a known token, and otherwise passes the
request on with the caller's name in ``scope["user"]``. The app is told where to find it
(``HttpOptions(principal=...)``), so a legacy session opened by alice is unknown (404) to bob:
sessions are not authentication, but they are bound to whoever opened them.

Tokens are compared by their SHA-256 (a dictionary lookup of a hash leaks nothing useful about the
token), are never logged, and a CORS preflight (``OPTIONS``, which browsers send without
credentials) is passed through for the app to judge. A real deployment would check OAuth access
tokens here (audience, expiry, scopes: 403 ``insufficient_scope``) instead of a static table.
"""

from __future__ import annotations

import argparse
import hashlib
import os
from collections.abc import Mapping

from skills_core.adapters.asgi import HttpOptions, Receive, Scope, Send, SkillsApp, derive_key
from skills_core.server import server_from_roots


class BearerAuth:
    """ASGI middleware: a known ``Authorization: Bearer`` token, or 401."""

    def __init__(self, app: SkillsApp, tokens: Mapping[str, str]) -> None:
        """Wrap ``app``; ``tokens`` maps each token to the name of its holder."""
        self.app = app
        self._holders = {hashlib.sha256(t.encode()).digest(): who for t, who in tokens.items()}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass authenticated requests on with ``scope["user"]``; refuse the rest."""
        if scope["type"] != "http" or scope["method"] == "OPTIONS":
            await self.app(scope, receive, send)
            return
        header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
        scheme, _, token = header.partition(" ")
        holder = None
        if scheme.lower() == "bearer" and token:
            holder = self._holders.get(hashlib.sha256(token.strip().encode()).digest())
        if holder is None:
            body = b"Unauthorized: send Authorization: Bearer <token>\n"
            headers = [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", b'Bearer realm="skills"'),
            ]
            await send({"type": "http.response.start", "status": 401, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app({**scope, "user": holder}, receive, send)


def build(roots: list[str], tokens: Mapping[str, str], secret: bytes) -> BearerAuth:
    """The skills under ``roots``, served to the holders of ``tokens``."""
    server = server_from_roots(roots, cursor_key=derive_key(secret, "cursor"))
    options = HttpOptions(principal=lambda scope: scope.get("user"))
    app = SkillsApp(server, session_key=derive_key(secret, "session"), options=options)
    return BearerAuth(app, tokens)


def main() -> None:
    """Serve on 127.0.0.1 until interrupted."""
    import uvicorn  # noqa: PLC0415 - the http extra, only to run it

    parser = argparse.ArgumentParser(description="Serve skills behind a bearer-token check.")
    parser.add_argument("roots", nargs="+")
    parser.add_argument("--port", type=int, default=8080)
    args = parser.parse_args()
    pairs = os.environ.get("SKILLS_AUTH_TOKENS", "")
    tokens = {
        token: holder
        for token, _, holder in (item.partition("=") for item in pairs.split(","))
        if token and holder
    }
    if not tokens:
        parser.error("set SKILLS_AUTH_TOKENS='token=name,...'")
    app = build(args.roots, tokens, os.urandom(32))
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
