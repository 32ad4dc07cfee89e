"""The paths an operator's tools ask an HTTP skills server about itself, and who may ask.

Theory of operation
-------------------
Beside its MCP endpoint, a :class:`~skills_core.adapters.asgi.SkillsApp` answers three ``GET``
paths (under a mount's ``root_path``, as the endpoint is) for load balancers, orchestrators and
monitoring, each cheap and none touching the skills:

* ``/healthz``: the process answers (200, always);
* ``/readyz``: the server has a catalog to serve (200), or not yet, or it is stopping (503): an
  app that scans its skills in a thread while it answers (``SkillsApp.loading``, as each
  ``serve --http`` worker does), or a source whose first catalog arrives from a background fetch
  (:attr:`SkillsServer.has_catalog <skills_core.server.SkillsServer.has_catalog>`);
* ``/metrics``: counters in the Prometheus text format (:mod:`skills_core.http.metrics`), only
  when :attr:`HttpOptions.metrics <skills_core.http.options.HttpOptions.metrics>` is set.

A probe skips the rungs that are about MCP (the method must be ``GET`` or ``HEAD``; no media
types, body or session), not the ones that protect the server's answers from a browser page: its
``Host`` must be one the endpoint accepts **or a loopback name** (``localhost``, ``127.0.0.1`` or
any ``127.x.x.x``, ``[::1]``, any port), and an ``Origin``, when present, must be allowed. A
loopback name in ``Host`` is safe to accept whatever the allow-list says: DNS rebinding makes a
page's requests carry the attacker's name in ``Host``, never a loopback one, and a page on another
origin cannot read a response without CORS headers, which probes never have. So a probe on the
same machine (``curl http://localhost:8080/healthz``, a container's health check) works on a server
whose allow-list names only its public host; a probe from elsewhere sends a ``Host`` the server
accepts (a Kubernetes ``httpGet`` probe sends the pod's address: list it, or set the probe's
``Host`` header to ``localhost``). Probes are not authenticated: keep ``/metrics`` off a public
proxy's routes.

The ``Host`` check here is the same whoever connects: behind a proxy, the ``Host`` a server sees
is the one the proxy sends upstream (nginx sends the ``proxy_pass`` address unless told
``proxy_set_header Host $host``), never ``X-Forwarded-Host``.
"""

from __future__ import annotations

import ipaddress
from typing import Final, final

from .options import HttpOptions, parse_authority

__all__ = [
    "HEALTH_PATH",
    "READY_PATH",
    "METRICS_PATH",
    "Probe",
    "probe_paths",
    "is_loopback_host",
    "probe_allows_host",
]

#: The liveness probe: 200 while the process answers.
HEALTH_PATH: Final = "/healthz"
#: The readiness probe: 200 when the server has a catalog, 503 before.
READY_PATH: Final = "/readyz"
#: The Prometheus metrics, when enabled.
METRICS_PATH: Final = "/metrics"

_LOOPBACK_NAMES: Final = frozenset({"localhost", "[::1]"})


@final
class Probe:
    """A probe request that passed its checks: which one (``"healthz"``, ``"readyz"``,
    ``"metrics"``); the app answers it."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"Probe({self.name!r})"


def probe_paths(metrics: bool) -> dict[str, str]:
    """``{path: probe name}`` of the probes an app answers (``/metrics`` only with ``metrics``)."""
    paths = {HEALTH_PATH: "healthz", READY_PATH: "readyz"}
    if metrics:
        paths[METRICS_PATH] = "metrics"
    return paths


def is_loopback_host(authority: str) -> bool:
    """Whether a ``Host`` value names the loopback interface: ``localhost``, ``127.x.x.x`` or
    ``[::1]``, any port (parsed strictly, as the allow-list parses it).

    Example:
        >>> is_loopback_host("localhost:8080"), is_loopback_host("127.0.0.9")
        (True, True)
        >>> is_loopback_host("[::1]evil.example"), is_loopback_host("localhost.evil.example")
        (False, False)
    """
    parsed = parse_authority(authority)
    if parsed is None:
        return False
    host = parsed[0]
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.IPv4Address(host).is_loopback
    except ValueError:
        return False


def probe_allows_host(options: HttpOptions, authority: str) -> bool:
    """Whether a probe with this ``Host`` is answered: an allowed host, or a loopback name."""
    return options.allows_host(authority) or is_loopback_host(authority)
