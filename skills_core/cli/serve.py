"""``skills-core serve``: the skills under some folders, as a stdio or Streamable HTTP MCP server.

Theory of operation: the folders become a :class:`~skills_core.server.filesystem.FilesystemSource`,
(with the options ``--include-hidden``, ``--exclude`` and ``--index``, which belong to the source),
wrapped in a :class:`~skills_core.server.handler.SkillsServer`.

* stdio (the default): served by the blocking stdio loop (:mod:`skills_core.adapters.blocking_stdio`)
  until the client closes stdin. Stdout belongs to the protocol; what the operator should know goes
  to stderr.
* ``--http [HOST:]PORT``: the ASGI app (:mod:`skills_core.adapters.asgi`) under uvicorn
  (``pip install uvicorn``, or the ``http`` extra). The parent checks everything first (the
  roots, the key, the options: a mistake exits 1 before any worker starts), settles the secret
  every worker signs cursors and sessions with (read from ``--cursor-key-file``, created there
  when absent, else taken from ``SKILLS_CORE_CURSOR_KEY`` or generated), and hands the whole
  configuration to uvicorn's workers through the environment
  (:class:`~skills_core.adapters.asgi.AppConfig`), which build the app with
  :func:`~skills_core.adapters.asgi.app_from_env`: the same path for one worker or many.
  uvicorn runs :mod:`skills_core.adapters.uvicorn_http`'s protocol, which holds clients to the
  head, idle and send deadlines given (``--head-timeout``, ``--idle-timeout``, ``--send-timeout``).
"""

from __future__ import annotations

import argparse
import os
import signal
from typing import TYPE_CHECKING, Any

from .._self import module_name
from ._common import (
    EXIT_CONNECTION,
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    error,
    open_source,
    os_message,
    source_note,
)

if TYPE_CHECKING:
    from ..server.catalog import Catalog

__all__ = ["run_serve", "parse_bind"]


def run_serve(args: argparse.Namespace) -> int:
    """Run ``skills-core serve``: stdio until the client closes stdin, or HTTP with ``--http``."""
    if args.http is not None:
        return _run_http(args)
    from ..adapters.blocking_stdio import serve_stdio  # noqa: PLC0415
    from ..server.handler import SkillsServer  # noqa: PLC0415
    from ..server.options import ServerOptions  # noqa: PLC0415

    source = open_source(
        args.roots,
        include_hidden=args.include_hidden,
        exclude=args.exclude,
        index=args.index,
        s3_endpoint=args.s3_endpoint,
        ttl_ms=args.ttl_ms,
        follow=True,
        log=lambda message: error(f"serve: {message}"),
    )
    options = ServerOptions(
        directory_read=not args.no_directory_read, page_size=args.page_size, ttl_ms=args.ttl_ms
    )
    server = SkillsServer(source, cursor_key=os.urandom(32), options=options)
    note = source_note(source)
    if note is not None:
        error(f"serve: {note}")
    _report_omitted(len(server.catalog.omitted))
    _warn_past_a_default_host(server.catalog)
    # A SkillsServer's results have string keys by construction: skip the endpoint's key walk.
    # SIGTERM ends the client's listen streams gracefully (subscriptions/listen's result).
    serve_stdio(
        server.connection(), results_have_string_keys=True, shutdown_signals=(signal.SIGTERM,)
    )
    return EXIT_OK


def _report_omitted(omitted: int) -> None:
    if omitted:  # stdout belongs to the protocol; stderr is for the operator (§1.7)
        error(f"serve: {omitted} skill folder(s) left out; `skills-core manifest` says why")


def _warn_past_a_default_host(catalog: Catalog) -> None:
    """Say so when a host with the default policy would not read the whole listing."""
    import json  # noqa: PLC0415 - only to size the catalog

    from ..host.budgets import listing_overflow  # noqa: PLC0415
    from ..host.policy import HostPolicy  # noqa: PLC0415

    items = (
        json.loads(skill.encoded_entry)
        if skill.encoded_entry is not None
        else skill.entry.to_json()
        for skill in catalog.skills
        if skill.listed
    )
    overflow = listing_overflow(items, HostPolicy())
    if overflow is not None:
        error(
            f"serve: warning: the listing holds {overflow}: a host with the default policy "
            "(skills-core host, and hosts built on this library) reads only part of it, and says "
            "so; its users can raise the cap (skills-core host --max-entries, "
            "--max-listed-resources, --max-listing-bytes)"
        )


def _source_url(roots: list[str]) -> str | None:
    """The one source URL among ``roots`` (``s3://...``, ``git:...``), or None for folders.

    Raises:
        CliError: a URL is given with other roots, or is malformed (exit 1).
    """
    from ..sources.urls import is_source_url, parse_source_url  # noqa: PLC0415

    if not any(is_source_url(root) for root in roots):
        return None
    if len(roots) != 1:
        raise CliError(f"serve: a source URL is served alone, not with other roots: {roots}")
    try:
        parse_source_url(roots[0])
    except ValueError as exc:
        raise CliError(f"serve: {exc}") from None
    if roots[0].startswith("git:"):  # the workers may start elsewhere: an absolute path
        from ..sources.urls import GitURL  # noqa: PLC0415

        parsed = parse_source_url(roots[0])
        assert isinstance(parsed, GitURL)
        return str(GitURL(os.path.abspath(parsed.path), parsed.ref))
    return roots[0]


def parse_bind(text: str) -> tuple[str, int]:
    """``(host, port)`` from ``[HOST:]PORT`` (``[::1]:8080`` for IPv6); the host defaults to 127.0.0.1.

    Raises:
        CliError: not a valid address (exit 1).
    """
    host, colon, port_text = text.rpartition(":")
    if not colon:
        host, port_text = "127.0.0.1", text
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not port_text.isdigit() or not 0 < int(port_text) < 65536 or not host:
        raise CliError(f"serve: --http wants [HOST:]PORT with a port 1-65535, not {text!r}")
    return host, int(port_text)


def _is_loopback(host: str) -> bool:
    import ipaddress  # noqa: PLC0415 - only for --http

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _secret(key_file: str | None) -> tuple[bytes | None, str | None]:
    """(the secret to hand over, or None when the workers read ``key_file``; the key file)."""
    from ..adapters.asgi import create_key_file, read_key_file  # noqa: PLC0415

    if key_file is None:
        inherited = os.environ.get("SKILLS_CORE_CURSOR_KEY", "").strip()
        return (inherited.encode("latin-1") if inherited else os.urandom(32).hex().encode()), None
    key_file = os.path.abspath(key_file)
    try:
        read_key_file(key_file)
    except FileNotFoundError:
        try:
            create_key_file(key_file)
        except FileExistsError:  # another process created it meanwhile: use theirs
            pass
        except OSError as exc:
            raise CliError(f"serve: cannot create the key file: {os_message(exc)}") from None
    except (OSError, ValueError) as exc:
        raise CliError(f"serve: {os_message(exc)}") from None
    return None, key_file


_BOUNDS = (
    "head_timeout",
    "idle_timeout",
    "send_timeout",
    "max_large_answers",
    "large_answer_queue",
)


def _bounds(args: argparse.Namespace) -> dict[str, Any]:
    """The deadlines and limits given on the command line (the others keep their defaults)."""
    return {name: getattr(args, name) for name in _BOUNDS if getattr(args, name) is not None}


def _run_http(args: argparse.Namespace) -> int:
    try:
        import uvicorn  # noqa: PLC0415 - the optional extra, only for --http
    except ImportError:
        raise CliError(
            "serve --http needs uvicorn: pip install uvicorn "
            "(or, for an installed skills-core, pip install 'skills-core[http]')",
            EXIT_USAGE,
        ) from None
    from ..adapters.asgi import (  # noqa: PLC0415
        LOOPBACK_HOSTS,
        LOOPBACK_ORIGINS,
        AppConfig,
    )

    host, port = parse_bind(args.http)
    # a missing root or a bad --exclude is a usage error, before anything starts (a source URL
    # is checked by building the app below)
    url = _source_url(args.roots)
    if url is None:
        open_source(args.roots, include_hidden=args.include_hidden, exclude=args.exclude)
    secret, key_file = _secret(args.cursor_key_file)
    loopback = _is_loopback(host)
    extra_hosts, extra_origins = tuple(args.allowed_host), tuple(args.allowed_origin)
    if not loopback and not extra_hosts:
        error(
            f"serve: {host} is not a loopback address and no --allowed-host is given: "
            "the Host header is not checked (DNS-rebinding protection is off)"
        )
    try:
        config = AppConfig(
            roots=() if url is not None else tuple(os.path.abspath(root) for root in args.roots),
            source=url,
            s3_endpoint=args.s3_endpoint,
            secret=secret,
            key_file=key_file,
            path=args.path,
            allowed_hosts=(LOOPBACK_HOSTS + extra_hosts) if loopback else (extra_hosts or None),
            allowed_origins=(LOOPBACK_ORIGINS if loopback else ()) + extra_origins,
            page_size=args.page_size,
            ttl_ms=args.ttl_ms,
            directory_read=not args.no_directory_read,
            include_hidden=args.include_hidden,
            exclude=tuple(args.exclude),
            index=None if args.index is None else os.path.abspath(args.index),
            **_bounds(args),
        )
        app = config.build()  # what every worker will do: fail here, once, with one message
    except (OSError, ValueError) as exc:
        raise CliError(f"serve: {os_message(exc)}") from None
    _report_omitted(len(app.server.catalog.omitted))
    _warn_past_a_default_host(app.server.catalog)
    os.environ.update(config.to_environ())
    shown = f"[{host}]" if ":" in host else host
    error(
        f"serve: {len(app.server.catalog.skills)} skill(s) at http://{shown}:{port}{args.path} "
        f"(2026-07-28 and 2025-11-25), {args.workers} worker(s)"
    )
    close = getattr(app.server.source, "close", None)
    if close is not None:  # the workers follow the store; this process only checked it
        close()
    del app
    try:
        uvicorn.run(
            module_name("adapters.asgi") + ":app_from_env",
            factory=True,
            # uvicorn's own protocol with deadlines for request heads and stalled writes, taken
            # from the app's options (the keep-alive timeout too)
            http=module_name("adapters.uvicorn_http") + ":BoundedProtocol",
            host=host,
            port=port,
            workers=args.workers,
            log_level="warning",
            access_log=False,
            proxy_headers=False,
            server_header=False,
            ws="none",
            lifespan="on",
            timeout_graceful_shutdown=5,
        )
    except SystemExit as exc:  # uvicorn exits when it cannot bind; it has said why on stderr
        if exc.code not in (0, None):
            raise CliError(f"serve: could not serve on {shown}:{port}", EXIT_CONNECTION) from None
    return EXIT_OK
