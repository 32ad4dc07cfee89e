"""One connection's opt-ins to change notifications, in both eras (internal).

Theory of operation
-------------------
A :class:`~skills_core.server.ServerConnection` keeps one :class:`Subscriptions`: what its client
asked to be told of, and nothing else. The server finds a change once
(:meth:`SkillsServer.changes <skills_core.server.SkillsServer.changes>`); each connection turns
it into the messages its client gets (:meth:`Subscriptions.messages`), a few dictionaries, and the
transport writes them.

**2025-11-25.** A connection that negotiated a legacy version gets
``notifications/resources/list_changed`` for every change (the server declares
``resources.listChanged``; PUSH-03), and ``notifications/resources/updated`` for each URI it
subscribed to with ``resources/subscribe`` whose bytes changed, appeared or vanished
(``resources/unsubscribe`` undoes it; PUSH-04). A URI may be subscribed before it exists. At most
:data:`MAX_SUBSCRIBED` URIs per connection: one more is ``-32602``.

**2026-07-28.** Nothing is sent unasked: a client opens a stream with ``subscriptions/listen``
``{notifications: SubscriptionFilter}`` (PUSH-06). The server answers at once with
``notifications/subscriptions/acknowledged`` carrying the *honored* filter (only
``resourcesListChanged`` and ``resourceSubscriptions``, the two this server can deliver; the TS
SDK 2.4.0 server honors the same subset of what was asked), tagged with
``_meta["io.modelcontextprotocol/subscriptionId"]`` = the listen request's id; then each change
notification it opted into, tagged the same way (PUSH-07); and when the server shuts down, the
listen request's result, ``{resultType: "complete", _meta: {subscriptionId, serverInfo}}``, which
ends the stream gracefully (PUSH-08). ``notifications/cancelled`` naming the listen id ends it at
the client's wish: nothing more is sent for it. At most :data:`MAX_LISTENS` streams per
connection; one more is ``-32603 Subscription limit reached`` (as the TS SDK server answers).
"""

from __future__ import annotations

from typing import Final, final

from ..jsonrpc import ErrorObject, JSONObject, RequestId
from ..jsonvalue import JSONValue
from ..spec import ErrorCode
from .changes import LIST_CHANGED, UPDATED, SkillChanges

__all__ = [
    "Subscriptions",
    "LISTEN",
    "SUBSCRIBE",
    "UNSUBSCRIBE",
    "ACKNOWLEDGED",
    "SUBSCRIPTION_ID",
    "MAX_SUBSCRIBED",
    "MAX_LISTENS",
]

LISTEN: Final = "subscriptions/listen"
SUBSCRIBE: Final = "resources/subscribe"
UNSUBSCRIBE: Final = "resources/unsubscribe"
ACKNOWLEDGED: Final = "notifications/subscriptions/acknowledged"
SUBSCRIPTION_ID: Final = "io.modelcontextprotocol/subscriptionId"
_SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"

#: URIs one connection may subscribe to (a host subscribes to the skills it holds: a few dozen).
MAX_SUBSCRIBED: Final = 4096
#: Listen streams one connection may hold open (the TS SDK client opens one).
MAX_LISTENS: Final = 16
#: URIs one listen filter may name.
MAX_LISTEN_URIS: Final = 4096


def _invalid(message: str) -> ErrorObject:
    return ErrorObject(code=ErrorCode.INVALID_PARAMS, message=message)


@final
class Subscriptions:
    """What one client asked to be told of; see the module docstring."""

    __slots__ = ("_listens", "_uris", "legacy")

    def __init__(self) -> None:
        #: True once the connection negotiated a 2025-11-25-era version.
        self.legacy = False
        self._uris: set[str] = set()
        # listen id -> (resourcesListChanged, the URIs it subscribed to)
        self._listens: dict[RequestId, tuple[bool, frozenset[str]]] = {}

    @property
    def listening(self) -> bool:
        """Whether a 2026-07-28 listen stream is open."""
        return bool(self._listens)

    @property
    def subscribed(self) -> frozenset[str]:
        """The URIs ``resources/subscribe`` named (2025-11-25)."""
        return frozenset(self._uris)

    def subscribe(self, method: str, params: JSONObject) -> dict[str, JSONValue] | ErrorObject:
        """Answer ``resources/subscribe`` or ``resources/unsubscribe`` (a legacy connection's)."""
        uri = params.get("uri")
        if not isinstance(uri, str) or not uri:
            return _invalid(f"{method} needs params.uri (a string)")
        if method == SUBSCRIBE:
            if uri not in self._uris and len(self._uris) >= MAX_SUBSCRIBED:
                return _invalid(f"at most {MAX_SUBSCRIBED} URIs may be subscribed to")
            self._uris.add(uri)
        else:
            self._uris.discard(uri)
        return {}

    def listen(
        self, request_id: RequestId, params: JSONObject
    ) -> dict[str, JSONValue] | ErrorObject:
        """Open a listen stream; return its acknowledgement notification, or the error to answer.

        The era and ``_meta`` are the caller's to check first (only a 2026-07-28 request opens a
        stream).
        """
        wanted = params.get("notifications")
        if not isinstance(wanted, dict):
            return _invalid(
                "Invalid params: 'notifications' is required and must be a SubscriptionFilter"
            )
        if request_id in self._listens:
            return _invalid("Invalid params: a listen stream with this id is open already")
        if len(self._listens) >= MAX_LISTENS:
            return ErrorObject(code=ErrorCode.INTERNAL_ERROR, message="Subscription limit reached")
        honored: dict[str, JSONValue] = {}
        list_changed = wanted.get("resourcesListChanged") is True
        if list_changed:
            honored["resourcesListChanged"] = True
        uris = wanted.get("resourceSubscriptions")
        if uris is not None and (
            not isinstance(uris, list)
            or not all(isinstance(uri, str) for uri in uris)
            or len(uris) > MAX_LISTEN_URIS
        ):
            return _invalid(
                "Invalid params: notifications.resourceSubscriptions must be a list of at most "
                f"{MAX_LISTEN_URIS} URI strings"
            )
        subscribed = frozenset(str(uri) for uri in uris or ())
        if subscribed:
            honored["resourceSubscriptions"] = list[JSONValue](sorted(subscribed))
        self._listens[request_id] = (list_changed, subscribed)
        return {
            "jsonrpc": "2.0",
            "method": ACKNOWLEDGED,
            "params": {"_meta": {SUBSCRIPTION_ID: request_id}, "notifications": honored},
        }

    def cancel(self, request_id: RequestId) -> bool:
        """End a listen stream at the client's wish; True when one was open under that id."""
        return self._listens.pop(request_id, None) is not None

    def messages(self, change: SkillChanges) -> list[dict[str, JSONValue]]:
        """The notifications ``change`` makes for this client, in order (maybe none)."""
        if not change:
            return []
        out: list[dict[str, JSONValue]] = []
        touched = change.resources
        if self.legacy:
            out.append({"jsonrpc": "2.0", "method": LIST_CHANGED})
            if self._uris:
                out.extend(_updated(uri, None) for uri in touched if uri in self._uris)
        for listen_id, (list_changed, uris) in self._listens.items():
            if list_changed:
                out.append(
                    {
                        "jsonrpc": "2.0",
                        "method": LIST_CHANGED,
                        "params": {"_meta": {SUBSCRIPTION_ID: listen_id}},
                    }
                )
            if uris:
                out.extend(_updated(uri, listen_id) for uri in touched if uri in uris)
        return out

    def close(self, server_info: JSONObject | None) -> list[tuple[RequestId, dict[str, JSONValue]]]:
        """End every listen stream gracefully (the server is shutting down).

        Returns:
            ``(listen id, result)`` for each open stream: send each as the listen request's
            response. Nothing more is sent on them afterwards.
        """
        out: list[tuple[RequestId, dict[str, JSONValue]]] = []
        for listen_id in self._listens:
            meta: dict[str, JSONValue] = {SUBSCRIPTION_ID: listen_id}
            if server_info is not None:
                meta[_SERVER_INFO] = server_info
            out.append((listen_id, {"resultType": "complete", "_meta": meta}))
        self._listens.clear()
        return out


def _updated(uri: str, listen_id: RequestId | None) -> dict[str, JSONValue]:
    params: dict[str, JSONValue] = {"uri": uri}
    if listen_id is not None:
        params["_meta"] = {SUBSCRIPTION_ID: listen_id}
    return {"jsonrpc": "2.0", "method": UPDATED, "params": params}
