"""Running the app in several workers: the shared secret, its keys, and the app from the environment.

Theory of operation: every worker of a scaled-out server must sign cursors and legacy session ids
with the same keys, or a client whose requests land on different workers is refused. The keys are
derived from one shared secret (:func:`derive_key`: one HMAC per purpose), read from a key file or
an environment variable. An ASGI server that imports the app by path (uvicorn's ``--factory``,
hypercorn, gunicorn) builds one per worker with :func:`app_from_env`, from the variables
:class:`AppConfig` documents; ``skills-core serve --http`` writes them for its workers.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, final

from ..http.logs import LEVELS, LOG_FORMATS
from ..http.options import (
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_GRACEFUL_TIMEOUT,
    DEFAULT_HEAD_TIMEOUT,
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_LARGE_ANSWER_QUEUE,
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_LARGE_ANSWERS,
    DEFAULT_PATH,
    DEFAULT_SEND_TIMEOUT,
    LOOPBACK_HOSTS,
    LOOPBACK_ORIGINS,
    HttpOptions,
)
from ._asgi_app import SkillsApp
from ._asgi_observe import configure_logging, log_event, logging_configured
from ._reload import reload, reload_on_hangup

if TYPE_CHECKING:
    from ..server.handler import SkillsServer
    from ..server.source import SkillSource

__all__ = [
    "MIN_SECRET_BYTES",
    "derive_key",
    "read_key_file",
    "create_key_file",
    "AppConfig",
    "app_from_env",
]

# --- keys -------------------------------------------------------------------------------------

#: Shortest shared secret accepted, in bytes (the generated ones are 64 hex characters).
MIN_SECRET_BYTES: Final = 32


def derive_key(secret: bytes, purpose: str) -> bytes:
    """A key for one purpose (``"cursor"``, ``"session"``) from the secret all workers share.

    Args:
        secret: The shared secret (from a key file or an environment variable).
        purpose: What the key signs; different purposes give independent keys.

    Returns:
        32 bytes.
    """
    return hmac.new(secret, b"skills-core/" + purpose.encode("utf-8"), hashlib.sha256).digest()


def _checked_secret(data: bytes, where: str) -> bytes:
    secret = data.strip()
    if len(secret) < MIN_SECRET_BYTES:
        raise ValueError(
            f"{where}: the key must be at least {MIN_SECRET_BYTES} bytes "
            "(e.g. 64 hex characters from `python -c 'import secrets; print(secrets.token_hex(32))'`)"
        )
    return secret


def read_key_file(path: str) -> bytes:
    """The shared secret stored in ``path`` (surrounding whitespace ignored).

    The file is refused, before a byte is read, unless this user alone could have written it
    (the checks ssh makes of its keys): it must belong to the user running the process or to
    root, be writable by neither its group nor others, and be a regular file, not a FIFO
    (opening it never blocks). A symbolic link is followed (a Kubernetes secret volume is made
    of them) and the file it leads to is checked.

    Raises:
        FileNotFoundError: there is no file at ``path``.
        OSError: the file cannot be read, or is refused (the message says why and how to fix it,
            e.g. ``chmod 600 FILE``; another user's file or one others may write raises
            ``PermissionError``).
        ValueError: it holds fewer than :data:`MIN_SECRET_BYTES` bytes.
    """
    from ..server.index_file import open_private_file  # noqa: PLC0415 - the server's file checks

    fd, _ = open_private_file(path, follow_links=True)
    try:
        data = os.read(fd, 4096)
    finally:
        os.close(fd)
    return _checked_secret(data, path)


def create_key_file(path: str) -> bytes:
    """Create ``path`` (mode 0600, never over an existing file) holding a new secret; return it.

    Raises:
        FileExistsError: ``path`` exists (read it with :func:`read_key_file` instead).
        OSError: it cannot be created.
    """
    secret = os.urandom(32).hex().encode("ascii")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "wb") as file:
        file.write(secret + b"\n")
    return secret


# --- configuration from the environment (for ASGI servers that import an app by path) ---------

_ENV_PREFIX: Final = "SKILLS_CORE_"


def _split(text: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in text.split(",") if item.strip())


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class AppConfig:
    """Everything :func:`app_from_env` needs, and its form as environment variables.

    ``skills-core serve --http`` fills one from its options and hands it to each worker through
    :meth:`to_environ`; a hypercorn or gunicorn deployment sets the same variables by hand:

    ==================================  ===========================================================
    ``SKILLS_CORE_ROOTS``               folders of skills, separated by ``os.pathsep`` (or:)
    ``SKILLS_CORE_SOURCE``              a source URL, ``s3://BUCKET/PREFIX`` or ``git:PATH[@REF]``
                                        (one of the two is required)
    ``SKILLS_CORE_S3_ENDPOINT``         the S3 endpoint of an ``s3://`` source (default
                                        ``AWS_ENDPOINT_URL``; credentials come from the standard
                                        AWS environment each worker inherits, never from here)
    ``SKILLS_CORE_CURSOR_KEY``          the shared secret itself, or:
    ``SKILLS_CORE_CURSOR_KEY_FILE``     a file holding it (one of the two is required)
    ``SKILLS_CORE_HTTP_PATH``           the endpoint (default ``/mcp``)
    ``SKILLS_CORE_ALLOWED_HOSTS``       comma-separated; ``*`` for any (default: loopback names)
    ``SKILLS_CORE_ALLOWED_ORIGINS``     comma-separated (default: loopback origins)
    ``SKILLS_CORE_CORS``                ``1`` to answer CORS for the allowed origins
    ``SKILLS_CORE_PAGE_SIZE``           entries per page (default 50)
    ``SKILLS_CORE_TTL_MS``              ``ttlMs`` of cacheable results (default 300000)
    ``SKILLS_CORE_NO_DIRECTORY_READ``   ``1`` to leave ``resources/directory/read`` out
    ``SKILLS_CORE_MAX_BODY_BYTES``      largest request body (default 4 MiB)
    ``SKILLS_CORE_BODY_TIMEOUT``        seconds to receive a body (default 30)
    ``SKILLS_CORE_SEND_TIMEOUT``        seconds a response may wait for the client to take more
                                        (default 30; then the connection is closed)
    ``SKILLS_CORE_HEAD_TIMEOUT``        seconds to send a request's head (default 10; enforced by
                                        :mod:`~skills_core.adapters.uvicorn_http`)
    ``SKILLS_CORE_IDLE_TIMEOUT``        seconds a kept-alive connection may idle (default 5; as above)
    ``SKILLS_CORE_MAX_LARGE_ANSWERS``   answers over 64 KiB made and sent at once (default 4)
    ``SKILLS_CORE_LARGE_ANSWER_QUEUE``  requests that may wait for one (default 64; then 503)
    ``SKILLS_CORE_INCLUDE_HIDDEN``      ``1`` to publish hidden files and folders too
    ``SKILLS_CORE_EXCLUDE``             globs of paths not to publish, one per line
    ``SKILLS_CORE_INDEX``               the digest index file to start warm from (shared by workers)
    ``SKILLS_CORE_LOG_LEVEL``           ``debug``, ``info``, ``warning`` or ``error``: write a line
                                        per request (info) and the app's events to stderr; unset,
                                        the ``skills_core.http`` logger is left to your logging
    ``SKILLS_CORE_LOG_FORMAT``          ``text`` (default) or ``json`` (JSON lines)
    ``SKILLS_CORE_METRICS``             ``1`` to answer ``GET /metrics`` (Prometheus text format)
    ``SKILLS_CORE_GRACEFUL_TIMEOUT``    seconds requests in flight have to finish when the server
                                        stops (default 5; enforced by
                                        :mod:`~skills_core.adapters.uvicorn_http`)
    ``SKILLS_CORE_STATE_DIR``           a private folder the workers share, where each reports its
                                        counters (for ``/metrics``) and its drain's outcome
    ``SKILLS_CORE_LOAD_IN_BACKGROUND``  ``1`` to answer at once and scan in a thread:
                                        ``/readyz`` (and the endpoint) 503 until the skills are
                                        loaded (:meth:`SkillsApp.loading`)
    ==================================  ===========================================================

    Every worker must get the same secret: it signs cursors and session ids.
    """

    roots: tuple[str, ...]
    secret: bytes | None = None
    key_file: str | None = None
    path: str = DEFAULT_PATH
    allowed_hosts: tuple[str, ...] | None = LOOPBACK_HOSTS
    allowed_origins: tuple[str, ...] = LOOPBACK_ORIGINS
    cors: bool = False
    page_size: int | None = None
    ttl_ms: int | None = None
    directory_read: bool = True
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    send_timeout: float = DEFAULT_SEND_TIMEOUT
    head_timeout: float = DEFAULT_HEAD_TIMEOUT
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT
    max_large_answers: int = DEFAULT_MAX_LARGE_ANSWERS
    large_answer_queue: int = DEFAULT_LARGE_ANSWER_QUEUE
    include_hidden: bool = False
    exclude: tuple[str, ...] = ()
    index: str | None = None
    source: str | None = None
    s3_endpoint: str | None = None
    log_level: str | None = None
    log_format: str = "text"
    metrics: bool = False
    graceful_timeout: float = DEFAULT_GRACEFUL_TIMEOUT
    state_dir: str | None = None
    load_in_background: bool = False

    def to_environ(self) -> dict[str, str]:
        """The environment variables that make :meth:`from_environ` return this config."""
        env = {
            "ROOTS": os.pathsep.join(self.roots),
            "HTTP_PATH": self.path,
            "ALLOWED_HOSTS": "*" if self.allowed_hosts is None else ",".join(self.allowed_hosts),
            "ALLOWED_ORIGINS": ",".join(self.allowed_origins),
            "CORS": "1" if self.cors else "",
            "NO_DIRECTORY_READ": "" if self.directory_read else "1",
            "PAGE_SIZE": "" if self.page_size is None else str(self.page_size),
            "TTL_MS": "" if self.ttl_ms is None else str(self.ttl_ms),
            "CURSOR_KEY": "" if self.secret is None else self.secret.decode("latin-1"),
            "CURSOR_KEY_FILE": self.key_file or "",
            "MAX_BODY_BYTES": str(self.max_body_bytes),
            "BODY_TIMEOUT": str(self.body_timeout),
            "SEND_TIMEOUT": str(self.send_timeout),
            "HEAD_TIMEOUT": str(self.head_timeout),
            "IDLE_TIMEOUT": str(self.idle_timeout),
            "MAX_LARGE_ANSWERS": str(self.max_large_answers),
            "LARGE_ANSWER_QUEUE": str(self.large_answer_queue),
            "INCLUDE_HIDDEN": "1" if self.include_hidden else "",
            "EXCLUDE": "\n".join(self.exclude),
            "INDEX": self.index or "",
            "SOURCE": self.source or "",
            "S3_ENDPOINT": self.s3_endpoint or "",
            "LOG_LEVEL": self.log_level or "",
            "LOG_FORMAT": self.log_format,
            "METRICS": "1" if self.metrics else "",
            "GRACEFUL_TIMEOUT": str(self.graceful_timeout),
            "STATE_DIR": self.state_dir or "",
            "LOAD_IN_BACKGROUND": "1" if self.load_in_background else "",
        }
        return {_ENV_PREFIX + name: value for name, value in env.items()}

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> AppConfig:
        """Read the variables in the table above.

        Raises:
            ValueError: a variable is missing or malformed (the message names it).
        """

        def get(name: str) -> str:
            return environ.get(_ENV_PREFIX + name, "").strip()

        roots = tuple(root for root in get("ROOTS").split(os.pathsep) if root)
        source = get("SOURCE") or None
        if not roots and source is None:
            raise ValueError(
                f"set {_ENV_PREFIX}ROOTS to the folders of skills to serve, or "
                f"{_ENV_PREFIX}SOURCE to a source URL"
            )
        secret_text, key_file = get("CURSOR_KEY"), get("CURSOR_KEY_FILE")
        if not secret_text and not key_file:
            raise ValueError(
                f"set {_ENV_PREFIX}CURSOR_KEY or {_ENV_PREFIX}CURSOR_KEY_FILE: every worker must "
                "sign cursors and sessions with the same secret"
            )
        hosts = get("ALLOWED_HOSTS")
        origins = get("ALLOWED_ORIGINS")
        log_level, log_format = get("LOG_LEVEL").lower(), get("LOG_FORMAT").lower()
        if log_level and log_level not in LEVELS:
            raise ValueError(
                f"{_ENV_PREFIX}LOG_LEVEL must be one of {', '.join(LEVELS)}, not {log_level!r}"
            )
        if log_format and log_format not in LOG_FORMATS:
            raise ValueError(f"{_ENV_PREFIX}LOG_FORMAT must be text or json, not {log_format!r}")
        return cls(
            roots=roots,
            secret=_checked_secret(secret_text.encode("latin-1"), _ENV_PREFIX + "CURSOR_KEY")
            if secret_text
            else None,
            key_file=key_file or None,
            path=get("HTTP_PATH") or DEFAULT_PATH,
            allowed_hosts=LOOPBACK_HOSTS if not hosts else None if hosts == "*" else _split(hosts),
            allowed_origins=_split(origins) if origins else LOOPBACK_ORIGINS,
            cors=get("CORS") == "1",
            page_size=_env_int(get("PAGE_SIZE"), "PAGE_SIZE"),
            ttl_ms=_env_int(get("TTL_MS"), "TTL_MS"),
            directory_read=get("NO_DIRECTORY_READ") != "1",
            max_body_bytes=_env_int(get("MAX_BODY_BYTES"), "MAX_BODY_BYTES")
            or DEFAULT_MAX_BODY_BYTES,
            body_timeout=_env_seconds(get("BODY_TIMEOUT"), "BODY_TIMEOUT", DEFAULT_BODY_TIMEOUT),
            send_timeout=_env_seconds(get("SEND_TIMEOUT"), "SEND_TIMEOUT", DEFAULT_SEND_TIMEOUT),
            head_timeout=_env_seconds(get("HEAD_TIMEOUT"), "HEAD_TIMEOUT", DEFAULT_HEAD_TIMEOUT),
            idle_timeout=_env_seconds(get("IDLE_TIMEOUT"), "IDLE_TIMEOUT", DEFAULT_IDLE_TIMEOUT),
            max_large_answers=_env_int_or(
                get("MAX_LARGE_ANSWERS"), "MAX_LARGE_ANSWERS", DEFAULT_MAX_LARGE_ANSWERS
            ),
            large_answer_queue=_env_int_or(
                get("LARGE_ANSWER_QUEUE"), "LARGE_ANSWER_QUEUE", DEFAULT_LARGE_ANSWER_QUEUE
            ),
            include_hidden=get("INCLUDE_HIDDEN") == "1",
            exclude=tuple(glob for glob in get("EXCLUDE").split("\n") if glob),
            index=get("INDEX") or None,
            source=source,
            s3_endpoint=get("S3_ENDPOINT") or None,
            log_level=log_level or None,
            log_format=log_format or "text",
            metrics=get("METRICS") == "1",
            graceful_timeout=_env_seconds(
                get("GRACEFUL_TIMEOUT"), "GRACEFUL_TIMEOUT", DEFAULT_GRACEFUL_TIMEOUT
            ),
            state_dir=get("STATE_DIR") or None,
            load_in_background=get("LOAD_IN_BACKGROUND") == "1",
        )

    def build(self) -> SkillsApp:
        """Scan the roots and make the app (or, with ``load_in_background``, make the app and
        let it scan in a thread: :meth:`SkillsApp.loading`).

        Raises:
            OSError: a root or the key file cannot be read.
            ValueError: a setting is out of range.
        """
        from ..server import ServerOptions, server_from_roots  # noqa: PLC0415

        secret = self.secret if self.secret is not None else read_key_file(str(self.key_file))
        settings: dict[str, Any] = {"directory_read": self.directory_read}
        if self.page_size is not None:
            settings["page_size"] = self.page_size
        if self.ttl_ms is not None:
            settings["ttl_ms"] = self.ttl_ms
        server_options = ServerOptions(**settings)
        options = HttpOptions(
            path=self.path,
            allowed_hosts=self.allowed_hosts,
            allowed_origins=self.allowed_origins,
            cors=self.cors,
            max_body_bytes=self.max_body_bytes,
            body_timeout=self.body_timeout,
            send_timeout=self.send_timeout,
            head_timeout=self.head_timeout,
            idle_timeout=self.idle_timeout,
            max_large_answers=self.max_large_answers,
            large_answer_queue=self.large_answer_queue,
            metrics=self.metrics,
            graceful_timeout=self.graceful_timeout,
        )

        def load() -> SkillsServer:
            if self.source is not None:
                from ..server.handler import SkillsServer  # noqa: PLC0415

                return SkillsServer(
                    self._open_source(server_options.ttl_ms),
                    cursor_key=derive_key(secret, "cursor"),
                    options=server_options,
                )
            return server_from_roots(
                list(self.roots),
                cursor_key=derive_key(secret, "cursor"),
                options=server_options,
                include_hidden=self.include_hidden,
                exclude=self.exclude,
                index=self.index,
                log=_say,
            )

        session_key = derive_key(secret, "session")
        if self.load_in_background:
            from ._startup import report_catalog, say_in_log  # noqa: PLC0415

            return SkillsApp.loading(
                load,
                session_key=session_key,
                options=options,
                state_dir=self.state_dir,
                then=lambda server: report_catalog(server.catalog, say_in_log),
                server_options=server_options,
            )
        return SkillsApp(load(), session_key=session_key, options=options, state_dir=self.state_dir)

    def _open_source(self, ttl_ms: int) -> SkillSource:
        """The source of :attr:`source`, following its store (a refresher thread).

        Raises:
            ValueError: the URL is malformed, or the store cannot be read (the message says why).
        """
        from ..sources.git import GitError, open_git_source  # noqa: PLC0415
        from ..sources.s3 import StoreError, open_s3_source  # noqa: PLC0415
        from ..sources.urls import GitURL, parse_source_url  # noqa: PLC0415

        assert self.source is not None
        url = parse_source_url(self.source)
        try:
            if isinstance(url, GitURL):
                return open_git_source(
                    url,
                    include_hidden=self.include_hidden,
                    exclude=self.exclude,
                    ttl_ms=ttl_ms,
                    log=_say,
                )
            if url is None:
                raise ValueError(f"{self.source!r} is not s3://BUCKET/PREFIX or git:PATH[@REF]")
            return open_s3_source(url, endpoint=self.s3_endpoint, ttl_ms=ttl_ms, log=_say)
        except (GitError, StoreError) as exc:
            raise ValueError(exc.message) from None


def _say(message: str) -> None:
    """A source's line for the operator (a root gone, a reload), on stderr, every character made
    visible: in the log's format when the log is configured (a line the reload or the source
    reports as done is info, any other a warning), else as a plain line."""
    if logging_configured():
        level = "info" if message.startswith("reloaded:") else "warning"
        log_event(level, "source", message)
        return
    from ..display import display  # noqa: PLC0415

    sys.stderr.write(f"skills-core: serve: {display(message)}\n")
    sys.stderr.flush()


def _env_int(text: str, name: str) -> int | None:
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{_ENV_PREFIX}{name} must be a whole number, not {text!r}") from None


def _env_int_or(text: str, name: str, default: int) -> int:
    value = _env_int(text, name)
    return default if value is None else value


def _env_seconds(text: str, name: str, default: float) -> float:
    if not text:
        return default
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{_ENV_PREFIX}{name} must be a number of seconds, not {text!r}") from None


def app_from_env() -> SkillsApp:
    """The app that :class:`AppConfig` describes in ``os.environ`` (an ASGI factory).

    With ``SKILLS_CORE_LOG_LEVEL`` set, it also configures the ``skills_core.http`` logger to write
    to stderr (:func:`~skills_core.adapters._asgi_observe.configure_logging`).

    For ``uvicorn --factory skills_core.adapters.asgi:app_from_env``, or ``app = app_from_env()``
    in a module of your own for servers that import an app object; see :class:`AppConfig`.
    Called from the main thread, it makes ``SIGHUP`` re-scan the catalog on the asyncio loop
    that runs the app (:func:`~skills_core.adapters._reload.reload_on_hangup`), so each worker
    process reloads on its own signal.

    Raises:
        ValueError: a variable is missing or malformed.
        OSError: a root or the key file cannot be read.
    """
    config = AppConfig.from_environ(os.environ)
    if config.log_level is not None:  # before the build: a source's lines are in the log's form
        configure_logging(config.log_level, config.log_format)
    app = config.build()
    # SIGHUP re-scans this worker's catalog at once (see skills_core.adapters._reload); while
    # the app still loads its skills in a thread, once they are loaded (before they are served)

    def current() -> SkillsServer | None:
        if app.when_loaded(lambda server: reload(server, _say)):
            return None
        return app.server

    reload_on_hangup(current, _say)
    return app
