"""``skills-core serve``: the skills under some folders, as a stdio or Streamable HTTP MCP server.

Theory of operation: the folders become a :class:`~skills_core.server.filesystem.FilesystemSource`,
(with the options ``--include-hidden``, ``--exclude`` and ``--index``, which belong to the source),
wrapped in a :class:`~skills_core.server.handler.SkillsServer`. Over stdio the source is opened and
scanned on a thread (:class:`~skills_core.adapters.loading.LoadingServer`) while ``initialize`` and
``server/discover`` are answered; any other request waits for the whole catalog.

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

  Operating it: each worker scans the roots again in a thread while it already answers
  ``/healthz`` (``/readyz`` is 503 until its catalog is loaded); ``--log-level`` and
  ``--log-format`` set the line per request and uvicorn's own lines on stderr (one handler, one
  format); ``--metrics`` answers ``/metrics``; ``--tls-cert``/``--tls-key``/``--tls-ca``
  and ``--proxy-headers``/``--forwarded-allow-ips`` are checked here and passed to uvicorn. On
  SIGTERM or SIGINT the requests in flight get ``--graceful-timeout`` seconds; the workers report
  their drains in a private state folder (made here, removed on exit), and the exit status says
  whether every request finished (0) or some had to be ended (:data:`EXIT_DRAIN_INCOMPLETE`).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import signal
from collections.abc import Callable
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
    from ..adapters.asgi import AppConfig
    from ..adapters.loading import LoadingServer
    from ..server.catalog import Catalog
    from ..server.handler import SkillsServer

__all__ = ["run_serve", "parse_bind"]


def run_serve(args: argparse.Namespace) -> int:
    """Run ``skills-core serve``: stdio until the client closes stdin, or HTTP with ``--http``."""
    if args.http is not None:
        return _run_http(args)
    from ..adapters.blocking_stdio import serve_stdio  # noqa: PLC0415
    from ..adapters.loading import LoadingServer  # noqa: PLC0415
    from ..server.handler import SkillsServer  # noqa: PLC0415
    from ..server.options import ServerOptions  # noqa: PLC0415

    options = ServerOptions(
        directory_read=not args.no_directory_read, page_size=args.page_size, ttl_ms=args.ttl_ms
    )

    def load() -> SkillsServer:
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
        server = SkillsServer(source, cursor_key=os.urandom(32), options=options)
        note = source_note(source)
        if note is not None:
            error(f"serve: {note}")
        return server

    def report(server: SkillsServer) -> None:  # once served: sizing the listing takes a while
        _report_omitted(len(server.catalog.omitted))
        _warn_past_a_default_host(server.catalog)

    from ..sources.urls import is_source_url  # noqa: PLC0415

    if any(is_source_url(root) for root in args.roots):  # a store checks itself as it opens
        server = load()
        loading = LoadingServer(lambda: server, options=options, then=report)
    else:
        # Folders: a missing root or a bad --exclude is a usage error at once (cheap: no index
        # read, no walk); the catalog then loads while the handshake is answered.
        open_source(args.roots, include_hidden=args.include_hidden, exclude=args.exclude)
        loading = LoadingServer(load, options=options, then=report)
    loading.start()
    # A SkillsServer's results have string keys by construction: skip the endpoint's key walk.
    # SIGTERM ends the client's listen streams gracefully (subscriptions/listen's result).
    serve_stdio(
        loading.connection(),
        results_have_string_keys=True,
        on_hangup=_reloader(loading),
        shutdown_signals=(signal.SIGTERM,),
    )
    # A client that left before asking for the catalog: the load still ends (and reports what
    # it found, or its failure) as it did when it came first.
    loading.join()
    loading.wait()
    return EXIT_OK


def _reloader(loading: LoadingServer) -> Callable[[], None]:
    """What ``SIGHUP`` does to a stdio server: re-scan now (see :mod:`skills_core.adapters._reload`);
    nothing while the catalog still loads (the load reads the folders as they are)."""
    from ..adapters._reload import reload  # noqa: PLC0415

    def hangup() -> None:
        server = loading.wait(0)
        if server is not None:
            reload(server, lambda message: error(f"serve: {message}"))

    return hangup


def _error(level: str, message: str) -> None:
    error(f"serve: {message}")


def _report_omitted(omitted: int, say: Callable[[str, str], None] = _error) -> None:
    # stdout belongs to the protocol; stderr is for the operator (docs/protocol.md#stdio)
    if omitted:
        say("warning", f"{omitted} skill folder(s) left out; `skills-core manifest` says why")


def _warn_past_a_default_host(catalog: Catalog, say: Callable[[str, str], None] = _error) -> None:
    """Say so when a host with the default policy would not read the whole listing."""
    import json  # noqa: PLC0415 - only to size the catalog

    from ..host.budgets import listing_overflow  # noqa: PLC0415
    from ..host.policy import HostPolicy  # noqa: PLC0415

    policy = HostPolicy()
    listed = [skill for skill in catalog.skills if skill.listed]
    if len(listed) > policy.max_entries:
        # The first budget a host counts is the entry cap: past it, nothing need be decoded (a
        # large catalog would otherwise be decoded whole while the first pages are served).
        overflow: str | None = (
            f"{len(listed):,} entries, over the {policy.max_entries:,} of HostPolicy.max_entries"
        )
    else:
        overflow = listing_overflow(
            (
                json.loads(skill.encoded_entry)
                if skill.encoded_entry is not None
                else skill.entry.to_json()
                for skill in listed
            ),
            policy,
        )
    if overflow is not None:
        say(
            "warning",
            f"warning: the listing holds {overflow}: a host with the default policy "
            "(skills-core host, and hosts built on this library) reads only part of it, and says "
            "so; its users can raise the cap (skills-core host --max-entries, "
            "--max-listed-resources, --max-listing-bytes)",
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
    "body_timeout",
    "head_timeout",
    "idle_timeout",
    "send_timeout",
    "max_large_answers",
    "large_answer_queue",
)


def _bounds(args: argparse.Namespace) -> dict[str, Any]:
    """The deadlines and limits given on the command line (the others keep their defaults)."""
    return {name: getattr(args, name) for name in _BOUNDS if getattr(args, name) is not None}


#: Exit status of ``serve --http`` stopped by a signal when requests in flight had to be ended
#: at the graceful timeout (or a worker never reported its drain: it died).
EXIT_DRAIN_INCOMPLETE = 6


class _StoppedError(Exception):
    """SIGTERM or SIGINT reached ``serve --http`` outside uvicorn's own handling."""


def _stop(signum: int, frame: object) -> None:
    raise _StoppedError


def _tls(args: argparse.Namespace) -> dict[str, Any]:
    """uvicorn's TLS settings from ``--tls-cert``, ``--tls-key`` and ``--tls-ca``, checked
    (a certificate that does not load stops ``serve`` here, before any worker starts)."""
    cert, key, client_ca = args.tls_cert, args.tls_key, args.tls_ca
    if cert is None and key is None:
        if client_ca is not None:
            raise CliError("serve: --tls-ca needs --tls-cert and --tls-key")
        return {}
    if cert is None or key is None:
        raise CliError("serve: --tls-cert and --tls-key go together")
    import ssl  # noqa: PLC0415 - only for TLS

    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(cert, key)
    except ssl.SSLError as exc:
        raise CliError(f"serve: the TLS certificate and key do not load: {exc.reason}") from None
    except OSError as exc:
        raise CliError(f"serve: {os_message(exc)}") from None
    settings: dict[str, Any] = {
        "ssl_certfile": os.path.abspath(cert),
        "ssl_keyfile": os.path.abspath(key),
    }
    if client_ca is not None:
        try:
            context.load_verify_locations(cafile=client_ca)
        except ssl.SSLError as exc:
            raise CliError(f"serve: --tls-ca does not load: {exc.reason}") from None
        except OSError as exc:
            raise CliError(f"serve: {os_message(exc)}") from None
        settings["ssl_ca_certs"] = os.path.abspath(client_ca)
        settings["ssl_cert_reqs"] = ssl.CERT_REQUIRED
    return settings


def _proxies(args: argparse.Namespace) -> dict[str, Any]:
    """uvicorn's proxy settings from ``--proxy-headers`` and ``--forwarded-allow-ips``, checked
    (uvicorn would take a malformed address for a name that never matches)."""
    import ipaddress  # noqa: PLC0415 - only for --http

    allowed = args.forwarded_allow_ips
    if not args.proxy_headers:
        if allowed is not None:
            raise CliError("serve: --forwarded-allow-ips needs --proxy-headers")
        return {"proxy_headers": False}
    items = [item.strip() for item in (allowed or "127.0.0.1,::1").split(",") if item.strip()]
    for item in items:
        if item == "*":
            continue
        try:
            ipaddress.ip_network(item, strict=False)
        except ValueError:
            raise CliError(
                f"serve: --forwarded-allow-ips wants addresses or networks (or *), not {item!r}"
            ) from None
    return {"proxy_headers": True, "forwarded_allow_ips": ",".join(items) or "127.0.0.1"}


def _run_http(args: argparse.Namespace) -> int:
    hangup = getattr(signal, "SIGHUP", None)
    if hangup is not None:
        # Until a handler takes SIGHUP over (the app's reload in the one worker this process
        # runs, or uvicorn's supervisor with --workers N), a SIGHUP must not end the server.
        signal.signal(hangup, signal.SIG_IGN)
    try:
        import uvicorn  # noqa: PLC0415 - the optional extra, only for --http
    except ImportError:
        raise CliError(
            "serve --http needs uvicorn: pip install uvicorn "
            "(or, for an installed skills-core, pip install 'skills-core[http]')",
            EXIT_USAGE,
        ) from None
    import shutil  # noqa: PLC0415
    import tempfile  # noqa: PLC0415

    from ..adapters._asgi_observe import read_drain_reports  # noqa: PLC0415

    host, port = parse_bind(args.http)
    # a missing root or a bad --exclude is a usage error, before anything starts (a source URL
    # is checked by building the app below)
    url = _source_url(args.roots)
    if url is None:
        open_source(args.roots, include_hidden=args.include_hidden, exclude=args.exclude)
    tls, proxies = _tls(args), _proxies(args)
    secret, key_file = _secret(args.cursor_key_file)
    state_dir = tempfile.mkdtemp(prefix="skills-core-serve-")
    try:
        app_config = _app_config(
            args, (host, port), secret, key_file, state_dir, url=url, tls=bool(tls)
        )
        previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            _serve_with_uvicorn(uvicorn, args, (host, port), app_config, tls | proxies)
        except _StoppedError:
            pass  # the signal that stopped uvicorn, raised again once it was done (one worker)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        cut, finished, silent = read_drain_reports(state_dir)
    finally:
        shutil.rmtree(state_dir, ignore_errors=True)
    if silent:
        _say(
            "warning",
            f"worker(s) {', '.join(map(str, silent))} ended without draining (killed, or died)",
        )
    status = EXIT_DRAIN_INCOMPLETE if cut or silent else EXIT_OK
    _say(
        "warning" if status else "info",
        f"shut down: {finished} request(s) finished during the drain, {cut} ended at the "
        f"graceful timeout of {args.graceful_timeout:g} s; exit status {status}",
    )
    return status


def _app_config(
    args: argparse.Namespace,
    bind: tuple[str, int],
    secret: bytes | None,
    key_file: str | None,
    state_dir: str,
    *,
    url: str | None,
    tls: bool,
) -> AppConfig:
    """The workers' configuration, built once here to fail early (exit 1, one message)."""
    from ..adapters._asgi_observe import configure_logging  # noqa: PLC0415
    from ..adapters.asgi import LOOPBACK_HOSTS, LOOPBACK_ORIGINS, AppConfig  # noqa: PLC0415

    configure_logging(args.log_level, args.log_format)
    host, port = bind
    loopback = _is_loopback(host)
    extra_hosts, extra_origins = tuple(args.allowed_host), tuple(args.allowed_origin)
    if not loopback and not extra_hosts:
        _say(
            "warning",
            f"{host} is not a loopback address and no --allowed-host is given: "
            "the Host header is not checked (DNS-rebinding protection is off)",
        )
    origins: tuple[str, ...] = LOOPBACK_ORIGINS if loopback else ()
    if loopback and tls:  # pages on https://localhost too
        origins += tuple(origin.replace("http://", "https://", 1) for origin in LOOPBACK_ORIGINS)
    try:
        config = AppConfig(
            roots=() if url is not None else tuple(os.path.abspath(root) for root in args.roots),
            source=url,
            s3_endpoint=args.s3_endpoint,
            secret=secret,
            key_file=key_file,
            path=args.path,
            allowed_hosts=(LOOPBACK_HOSTS + extra_hosts) if loopback else (extra_hosts or None),
            allowed_origins=origins + extra_origins,
            page_size=args.page_size,
            ttl_ms=args.ttl_ms,
            directory_read=not args.no_directory_read,
            include_hidden=args.include_hidden,
            exclude=tuple(args.exclude),
            index=None if args.index is None else os.path.abspath(args.index),
            log_level=args.log_level,
            log_format=args.log_format,
            metrics=args.metrics,
            graceful_timeout=args.graceful_timeout,
            state_dir=state_dir,
            **_bounds(args),
        )
        app = config.build()  # what every worker will do: fail here, once, with one message
    except (OSError, ValueError) as exc:
        raise CliError(f"serve: {os_message(exc)}") from None
    _report_omitted(len(app.server.catalog.omitted), say=_say)
    _warn_past_a_default_host(app.server.catalog, say=_say)
    shown = f"[{host}]" if ":" in host else host
    scheme = "https" if tls else "http"
    _say(
        "info",
        f"{len(app.server.catalog.skills)} skill(s) at {scheme}://{shown}:{port}"
        f"{args.path} (2026-07-28 and 2025-11-25), {args.workers} worker(s)",
    )
    close = getattr(app.server.source, "close", None)
    if close is not None:  # the workers follow the store; this process only checked it
        close()
    del app
    # Each worker scans again, in a thread, answering /healthz at once and /readyz 503 meanwhile.
    return dataclasses.replace(config, load_in_background=True)


def _serve_with_uvicorn(
    uvicorn: Any,
    args: argparse.Namespace,
    bind: tuple[str, int],
    config: AppConfig,
    settings: dict[str, Any],
) -> None:
    """Run uvicorn's workers on ``config`` (handed over through the environment) until stopped."""
    from ..adapters._asgi_observe import uvicorn_log_config  # noqa: PLC0415

    host, port = bind
    os.environ.update(config.to_environ())
    try:
        uvicorn.run(
            module_name("adapters.asgi") + ":app_from_env",
            factory=True,
            # uvicorn's own protocol with deadlines for request heads and stalled writes, taken
            # from the app's options (the keep-alive timeout too), and the drain on SIGTERM
            http=module_name("adapters.uvicorn_http") + ":BoundedProtocol",
            host=host,
            port=port,
            workers=args.workers,
            log_config=uvicorn_log_config(args.log_level, args.log_format),
            log_level=None,
            access_log=False,  # ours replaces it
            server_header=False,
            ws="none",
            lifespan="on",
            # The protocol ends what is left at the graceful timeout; uvicorn's own deadline,
            # later, only cancels what still runs then (a read in a worker thread, say).
            timeout_graceful_shutdown=args.graceful_timeout + _UVICORN_GRACE,
            **settings,
        )
    except SystemExit as exc:  # uvicorn exits when it cannot bind; it has said why on stderr
        if exc.code not in (0, None):
            shown = f"[{host}]" if ":" in host else host
            raise CliError(f"serve: could not serve on {shown}:{port}", EXIT_CONNECTION) from None


#: Seconds uvicorn waits past the graceful timeout before it cancels what still runs.
_UVICORN_GRACE = 3.0


def _say(level: str, message: str) -> None:
    """A line of ``serve --http`` on stderr, in the log's format (text or JSON lines)."""
    from ..adapters._asgi_observe import log_event  # noqa: PLC0415

    log_event(level, "serve", message.removeprefix("warning: "))
