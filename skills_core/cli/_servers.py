"""The ``--server`` and ``--header`` options, and opening a server connection, for ``host`` and ``check``.

Theory of operation: both commands name servers the same way (``LABEL=COMMAND`` to spawn a stdio
server, ``LABEL=URL`` for a Streamable HTTP endpoint, ``--header LABEL=NAME:VALUE`` for one HTTP
server) and reach them the same way, so the parsing and :func:`open_connection` live here once: a
command is spawned with the asyncio adapter (:func:`~skills_core.adapters.asyncio_stdio.open_stdio_client`,
its stderr kept, not shown); a URL is reached with the HTTP client (httpx2 and anyio, the
``http-client`` extra). Each usage error is a :class:`~skills_core.cli._common.CliError` with the
exit code the calling command gives (``host`` and ``check`` number their exits differently); a
message never shows a header's value or a URL (either may carry a token).

This module does I/O: it spawns processes and opens connections (through the adapters).
"""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import LocalProtocolError
from ._common import CliError

if TYPE_CHECKING:
    from ..host.driver import Requester
    from ..http.eras import EraCache

__all__ = ["ServerSpec", "parse_servers", "parse_headers", "open_connection"]

#: A ``--server`` value: a command to spawn (argv) or the URL of a Streamable HTTP endpoint.
ServerSpec = list[str] | str


def parse_servers(specs: list[str], *, command: str, exit_code: int) -> dict[str, ServerSpec]:
    """The ``--server LABEL=COMMAND|URL`` values, by label (a URL checked, a command split).

    Raises:
        CliError: none given, a malformed value, a label used twice, a URL the client refuses.
    """
    if not specs:
        raise CliError(
            f"{command}: give at least one --server LABEL=COMMAND or LABEL=URL", exit_code
        )
    servers: dict[str, ServerSpec] = {}
    for spec in specs:
        label, sep, value = spec.partition("=")
        label = label.strip()
        if not sep or not label or not value.strip():
            raise CliError(f"--server {spec!r}: expected LABEL=COMMAND or LABEL=URL", exit_code)
        if label in servers:
            raise CliError(f"--server: the label {label!r} is used twice", exit_code)
        if value.strip().lower().startswith(("http://", "https://")):
            servers[label] = _checked_url(label, value.strip(), exit_code)
            continue
        try:
            argv = shlex.split(value)
        except ValueError as exc:
            raise CliError(
                f"--server {label}: cannot parse the command ({exc})", exit_code
            ) from None
        servers[label] = argv
    return servers


def _checked_url(label: str, url: str, exit_code: int) -> str:
    from ..http.urls import check_url  # noqa: PLC0415 - only for URL servers

    try:
        return check_url(url)
    except ValueError as exc:  # the message does not repeat the URL: it may carry a token
        raise CliError(f"--server {label}: {exc}", exit_code) from None


def parse_headers(
    specs: list[str], servers: dict[str, ServerSpec], *, exit_code: int
) -> dict[str, list[tuple[str, str]]]:
    """``--header LABEL=NAME:VALUE`` values per label; a message never shows a VALUE."""
    from ..http.headers import check_custom_header  # noqa: PLC0415

    headers: dict[str, list[tuple[str, str]]] = {}
    for spec in specs:
        label, _, field = spec.partition("=")
        name, colon, value = field.partition(":")
        label, name = label.strip(), name.strip()
        if not colon or not label or not name:
            raise CliError("--header: expected LABEL=NAME:VALUE", exit_code)
        if not isinstance(servers.get(label), str):
            raise CliError(
                f"--header {label}={name}: no --server {label}=URL (headers go to HTTP servers)",
                exit_code,
            )
        try:
            headers.setdefault(label, []).append(check_custom_header(name, value))
        except LocalProtocolError as exc:
            raise CliError(f"--header {label}={name}: {exc}", exit_code) from None
    return headers


async def open_connection(
    stack: contextlib.AsyncExitStack,
    label: str,
    spec: ServerSpec,
    *,
    exit_code: int,
    headers: list[tuple[str, str]] | tuple[()] = (),
    era_cache: EraCache | None = None,
    on_report: Callable[[str], None],
    on_stderr: Callable[[str], None],
) -> Requester:
    """Open the connection to one ``--server`` and enter it into ``stack`` (closed with it).

    A command is spawned in a process group of its own (its stderr lines go to ``on_stderr``,
    the adapter's reports to ``on_report``); a URL is a Streamable HTTP endpoint.

    Raises:
        TransportError: the server cannot be spawned or reached.
        CliError: the HTTP client is not installed, or refuses the URL.
    """
    if not isinstance(spec, str):
        from ..adapters.asyncio_stdio import open_stdio_client  # noqa: PLC0415

        return await stack.enter_async_context(
            open_stdio_client(spec, label=label, on_report=on_report, on_stderr=on_stderr)
        )
    try:
        from ..adapters.http_client import open_http_client  # noqa: PLC0415
    except ImportError as exc:  # the message names the packages to install
        raise CliError(str(exc), exit_code) from None
    try:
        return await stack.enter_async_context(
            open_http_client(
                spec, label=label, headers=headers, era_cache=era_cache, on_report=on_report
            )
        )
    except ValueError as exc:  # a URL the HTTP library refuses (the message omits the URL)
        raise CliError(f"--server {label}: {exc}", exit_code) from None
