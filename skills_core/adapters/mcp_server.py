"""Serve a :class:`~skills_core.server.SkillsServer`'s catalog from an ``mcp`` low-level ``Server``.

For a server that already runs on the official ``mcp`` Python SDK (2.3.x, its low-level
``mcp.server.lowlevel.Server``) and wants to publish skills with this library's semantics: entries
with digests and limits, reads that look at the files as they are now, directory reads, both eras,
``ttlMs``/``cacheScope``, ``-32602`` with ``data.uri``. Needs ``pip install 'mcp>=2.3,<2.4'`` (or
the ``mcp`` extra of an installed skills-core); :mod:`skills_core` never imports this module.

Theory of operation
-------------------
:func:`add_skills` installs one ``Server.middleware`` entry that answers the skills methods from
the sans-IO core: each request, raw params and all, goes to a fresh
:class:`~skills_core.server.ServerConnection` of the :class:`SkillsServer`, told the era the SDK
negotiated (legacy once the SDK recorded ``initialize`` on this connection, in the 2025-11-25
shapes for a ``2024-11-05`` client too; a modern request carries its own envelope), and its result
object is returned as is, or its error raised as ``MCPError`` (code, message, data). A read of a
large file is read and encoded in a worker thread, as the stdio adapters and the ASGI app do, so
the SDK's event loop keeps serving. A middleware, not a request handler, because the SDK does three
things to a handler's request and answer that would make them differ from ours, and a middleware
runs before them and has its answer written unchanged (``mcp/server/runner.py``,
``ServerRunner._on_request``): for a spec method such as ``resources/read`` it validates the params
against its own schema first (its ``-32602`` message, not ours) and re-serialises the result
through its model (the keys come out sorted); and on a legacy connection it refuses any request
before ``initialize`` with its own ``-32602``. The methods:

* ``skills/list``, ``skills/get``, ``resources/directory/read``: ours (the core answers ``-32601``
  to a directory read when the skills server does not implement it, ERR-05);
* ``resources/read``: ours; if the server has a ``resources/read`` handler of its own, ours for
  URIs of the catalog's scheme (``skill://`` by default) and the server's for the others;
* ``resources/list`` and ``resources/templates/list``: ours if the server has none, else its own;
* the extension is declared under ``capabilities.extensions`` (with ``directoryRead`` when the
  skills server implements it). The SDK's ``server/discover`` keeps it; its legacy
  ``initialize`` result does not (it is checked against the 2025-11-25 ``ServerCapabilities``,
  which has no ``extensions`` field, and ``initialize`` cannot be given a handler), so the
  middleware puts the declaration back into the ``initialize`` result.

A ``resources/list`` handler is registered too when the server has none, because the SDK
declares the ``resources`` capability only when one is there (and a host does not use the
extension without it); the middleware answers before it is reached.

What stays the SDK's, by its design (and differs from ``skills-core serve``): ``server/discover``
and ``initialize`` (its capabilities, cache hints and server info, with our declaration); a
connection keeps the era its first request chose (``initialize`` on a modern connection is
``-32022``, an enveloped request on a legacy one ``-32600``); modern envelope errors (missing
``_meta``, unsupported version) have our codes and data but the SDK's messages; ``ping`` is not
served in the modern era; the wire encoding is the SDK's (equal bytes for our answers, except that
it writes U+2028, U+2029 and U+0085 unescaped inside strings, where ours escapes them).
"""

from __future__ import annotations

from typing import Any

try:
    import anyio
    from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
    from mcp.server.lowlevel.server import Server
    from mcp.shared.exceptions import MCPError
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS
    from pydantic import BaseModel, ConfigDict
except ImportError as exc:  # pragma: no cover - exercised in a subprocess without site-packages
    raise ImportError(
        "skills_core.adapters.mcp_server needs the official MCP Python SDK: "
        "pip install 'mcp>=2.3,<2.4' (or, where skills-core itself is installed, "
        "pip install 'skills-core[mcp]')"
    ) from exc

from ..jsonrpc import EncodedResult, ErrorObject
from ..jsonvalue import JSONValue, loads_strict
from ..server.handler import PendingRead, SkillsServer
from ..server.paths import DEFAULT_SCHEME
from ..server_stream import DEFAULT_DEFER_READS_OVER
from ..spec import EXTENSION_ID, LEGACY_PROTOCOL_VERSION, SUPPORTED_LEGACY_VERSIONS, Method

__all__ = ["add_skills"]


class _RawParams(BaseModel):
    """Params the SDK passes through unvalidated: the core checks them (our errors, our codes)."""

    model_config = ConfigDict(extra="allow")


def _legacy_version(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The legacy version to answer ``ctx`` in, or None when the SDK negotiated no handshake.

    Once the SDK has recorded ``initialize`` on the connection it negotiated one of its handshake
    versions. The core's own legacy versions are passed as they are; any other (``2024-11-05``,
    which the SDK accepts and the core does not list) is answered in the 2025-11-25 shapes. That is
    sound: the SDK itself validates and writes every pre-2026 version with its 2025-11-25 schema,
    the skills methods belong to the extension rather than to a base revision, and the legacy
    ``resources/*`` results carry only members 2024-11-05 defines (``uri``, ``name``,
    ``description``, ``mimeType``, ``size``, ``annotations``; ``text`` or ``blob``).
    """
    version = ctx.protocol_version
    if version in MODERN_PROTOCOL_VERSIONS or ctx.session.client_params is None:
        return None
    return version if version in SUPPORTED_LEGACY_VERSIONS else LEGACY_PROTOCOL_VERSION


async def _answer(
    skills: SkillsServer, ctx: ServerRequestContext[Any, Any]
) -> dict[str, JSONValue]:
    """Our core's answer to the request in ``ctx``; an error answer is raised as ``MCPError``.

    A read of a file larger than :data:`~skills_core.adapters.DEFAULT_DEFER_READS_OVER` is read
    and encoded in a worker thread (``anyio.to_thread``), so the SDK's event loop keeps answering
    other requests meanwhile.
    """
    params: dict[str, JSONValue] = dict(ctx.params) if ctx.params else {}
    answer = skills.answer(
        ctx.method,
        params,
        legacy_version=_legacy_version(ctx),
        defer_reads_over=DEFAULT_DEFER_READS_OVER,
    )
    if isinstance(answer, PendingRead):
        answer = await anyio.to_thread.run_sync(answer.complete)
    if isinstance(answer, ErrorObject):
        raise MCPError(answer.code, answer.message, answer.data)
    if isinstance(answer, EncodedResult):  # a read served again: the SDK writes dicts
        result = loads_strict(answer.json)
        assert isinstance(result, dict)
        return result
    return answer


def add_skills(server: Server[Any], skills: SkillsServer) -> None:
    """Serve ``skills``' catalog from ``server`` (see the module docstring for what goes where).

    Call it before ``server.create_initialization_options()`` and before serving. Give ``skills``
    the same ``server_info`` as ``server`` so that every modern result names the same server.

    Args:
        server: An ``mcp`` low-level server (``mcp.server.lowlevel.Server``).
        skills: The skills server whose catalog to publish.
    """
    # resources/directory/read is ours even when not implemented: the core answers -32601 (ERR-05).
    ours: set[str] = {Method.SKILLS_LIST, Method.SKILLS_GET, Method.RESOURCES_DIRECTORY_READ}
    if server.get_request_handler(Method.RESOURCES_LIST) is None:
        ours |= {Method.RESOURCES_LIST, Method.RESOURCES_TEMPLATES_LIST}

        async def handle(ctx: ServerRequestContext[Any, Any], params: _RawParams) -> HandlerResult:
            return await _answer(skills, ctx)  # pragma: no cover - the middleware answers first

        # The SDK declares the resources capability only when resources/list has a handler
        # (Server.get_capabilities), and a host does not use the extension without it.
        server.add_request_handler(Method.RESOURCES_LIST, _RawParams, handle)
    shared_read = server.get_request_handler(Method.RESOURCES_READ) is not None
    if not shared_read:
        ours.add(Method.RESOURCES_READ)
    # The built-in sources publish "<scheme>://" URIs (TreeSource.scheme); "skill" by default.
    scheme = f"{getattr(skills.source, 'scheme', DEFAULT_SCHEME)}:"

    extension = skills.capabilities()["extensions"]
    assert isinstance(extension, dict)
    settings = extension[EXTENSION_ID]
    assert isinstance(settings, dict)
    server.extensions[EXTENSION_ID] = dict(settings)

    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        method = ctx.method
        if method in ours:
            return await _answer(skills, ctx)
        if method == Method.RESOURCES_READ and shared_read:
            uri = (ctx.params or {}).get("uri")
            if isinstance(uri, str) and uri.startswith(scheme):
                return await _answer(skills, ctx)
            return await call_next(ctx)  # another scheme: the server's own resource
        result = await call_next(ctx)
        if method != Method.INITIALIZE or not isinstance(result, dict):
            return result
        capabilities = result.get("capabilities")
        assert isinstance(capabilities, dict)  # the SDK's InitializeResult always has them
        extensions = dict(capabilities.get("extensions") or {})
        extensions[EXTENSION_ID] = dict(settings)
        return {**result, "capabilities": {**capabilities, "extensions": extensions}}

    server.middleware.append(middleware)
