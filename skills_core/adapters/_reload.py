"""Reload on ``SIGHUP``: the server re-scans its source at once (signals; the operator's log).

Theory of operation: :func:`reload` is the one thing a ``SIGHUP`` does, whatever the transport:
:meth:`~skills_core.server.handler.SkillsServer.refresh` (the source re-scans, following each
root as named; the server swaps catalogs through its one change path), and one line for the
operator, the number of skills served, or why the catalog was kept (a failed scan never empties
it). It must run where the server is driven, never in the middle of a request:

* the blocking stdio loop (:mod:`skills_core.adapters.blocking_stdio`) runs it from the signal
  handler only while it waits for input, and otherwise before it takes the next request;
* an HTTP worker (:func:`reload_on_hangup`, installed by
  :func:`~skills_core.adapters.asgi.app_from_env`) hands it to its asyncio event loop as a
  callback (``call_soon_threadsafe``), which runs between requests.

With uvicorn's ``--workers N`` (N > 1), the supervisor process keeps its own ``SIGHUP``: it
replaces the workers one at a time, each starting with a fresh scan; a ``SIGHUP`` sent to one
worker re-scans that worker in place.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..server.handler import SkillsServer

__all__ = ["reload", "reload_on_hangup"]


def reload(server: SkillsServer, log: Callable[[str], None]) -> None:
    """Re-scan ``server``'s source now and say what is served (or why nothing changed)."""
    try:
        catalog = server.refresh()
    except Exception as exc:  # noqa: BLE001 - a reload must never stop the server
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        if isinstance(exc, OSError) and exc.filename is not None:
            reason = f"{exc.filename}: {reason}"
        log(
            f"reload failed ({reason}); the catalog served is kept "
            f"({len(server.catalog.skills)} skill(s))"
        )
        return
    log(f"reloaded: {len(catalog.skills)} skill(s) served")


def reload_on_hangup(
    server: SkillsServer | Callable[[], SkillsServer | None], log: Callable[[str], None]
) -> bool:
    """Make ``SIGHUP`` reload ``server`` on the asyncio event loop running when it arrives.

    Installed with ``signal.signal`` from the main thread (an ASGI factory may be called before
    its server's loop runs); the handler hands :func:`reload` to the running loop. Returns
    False, and installs nothing, off the main thread or where there is no ``SIGHUP``.

    ``server`` may be a function returning the server when the signal arrives, or None when it
    took care of the reload itself (an app still loading its skills in a thread re-scans them
    once loaded: :meth:`~skills_core.adapters.asgi.SkillsApp.when_loaded`).
    """
    import asyncio  # noqa: PLC0415 - not for the stdio server, whose start-up stays lean

    hangup = getattr(signal, "SIGHUP", None)
    if hangup is None or threading.current_thread() is not threading.main_thread():
        return False

    def on_hangup(signum: int, frame: object) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop running in this thread: nothing to drive the server
            log("SIGHUP ignored: no event loop is running to reload on")
            return
        target = server() if callable(server) else server
        if target is None:  # deferred by ``server``: the skills are still loading
            return
        loop.call_soon_threadsafe(reload, target, log)

    signal.signal(hangup, on_hangup)
    return True
