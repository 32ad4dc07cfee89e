"""Reads that are not a load: previews for the user, ordinary resources for the model.

Theory of operation
-------------------
Neither opens a window nor records an approval.

* ``Host.preview`` lets a person inspect a skill file before loading it (SEC-05, SIL-33, WG-10).
  The file must be listed in the skill's entry; its bytes are verified like a load's (size, then
  digest, and for SKILL.md the frontmatter against the entry; VER-10), counted against the
  per-server budget (WG-04), kept in the verified cache, and returned as
  :class:`~skills_core.host.effects.PreviewReady` with the hidden-text findings of
  :func:`~skills_core.host.framing.content_warnings`. Nothing reaches the model.
* ``Host.read_resource`` outside any acting skill is an ordinary ``resources/read`` (VER-02,
  VER-03): nothing to verify it against, so it is delivered as ``kind="resource"``, unverified,
  tagged with its origin, and capped at ``HostPolicy.max_resource_bytes`` (WG-03).
"""

from __future__ import annotations

from ..digest import verify_bytes
from ..entry import SkillEntry
from ..errors import RemoteProtocolError, URIError, VerificationError, VerificationKind
from ..messages import decode_read_result
from ..uri import resolve_reference
from .codes import DeliveryKind, FailureSource, RefusalCode
from .context import (
    HostContext,
    OriginRecord,
    cache_failure,
    check_frontmatter,
    not_connected,
    over_budget,
    protocol_failed,
    reference_error,
)
from .effects import (
    DeliverToModel,
    Effect,
    PreviewReady,
    Refused,
    VerificationFailed,
)
from .framing import content_warnings
from .requests import ReadPreview, ReadResource

__all__ = ["preview_read", "take_preview", "take_resource"]


def preview_read(
    ctx: HostContext, server: OriginRecord, entry: SkillEntry, ref: str | None
) -> list[Effect]:
    """Preview ``ref`` (SKILL.md when None) of ``entry``: from the verified cache, or a read."""
    origin = server.label
    if ref is None:
        uri = entry.uri
    else:
        try:
            uri = resolve_reference(entry.skill, ref)
        except URIError as exc:
            return [reference_error(origin, entry.uri, ref, exc)]
    resource = entry.resource(uri)
    if resource is None and not entry.is_dynamic:
        error = VerificationError(
            f"{uri} is not listed in the entry of {entry.uri}",
            kind=VerificationKind.UNLISTED,
            uri=uri,
        )
        return [_failed(origin, uri, entry, error, FailureSource.MANIFEST)]
    effects: list[Effect] = []
    if resource is not None:
        hit = ctx.cache.get(origin, resource)
        if hit.error is not None:
            effects.append(cache_failure(origin, entry.uri, hit.error))
        if hit.data is not None:
            return [_ready(origin, entry, uri, hit.data)]
        if not server.can_fetch(resource.size, ctx.policy):
            return [*effects, over_budget(ctx.policy, origin, uri)]
    if not server.connected:
        return [*effects, not_connected(origin, uri)]
    request = ReadPreview(origin=origin, uri=uri, entry=entry, resource=resource)
    effects.append(ctx.send(server, {"uri": uri}, request))
    return effects


def take_preview(ctx: HostContext, request: ReadPreview, result: object) -> list[Effect]:
    """The preview's read answered: verify, keep in the cache, show to the user."""
    entry, resource, origin = request.entry, request.resource, request.origin
    max_size = resource.size if resource is not None else ctx.policy.dynamic_total_bytes
    try:
        data = decode_read_result(result, uri=request.uri, max_size=max_size)
        ctx.origins[origin].bytes_fetched += len(data)
        if resource is not None:
            verify_bytes(data, size=resource.size, digest=resource.digest, uri=request.uri)
        if request.uri == entry.uri:
            check_frontmatter(entry, data, max_bytes=ctx.policy.max_frontmatter_bytes)
    except VerificationError as exc:
        return [_failed(origin, request.uri, entry, exc, FailureSource.SERVER)]
    except RemoteProtocolError as exc:
        return [protocol_failed(request, exc)]
    if resource is not None:
        ctx.cache.put(origin, resource, data)
    return [_ready(origin, entry, request.uri, data)]


def _failed(
    origin: str, uri: str, entry: SkillEntry, error: VerificationError, source: FailureSource
) -> VerificationFailed:
    return VerificationFailed(
        origin=origin,
        uri=uri,
        skill_uri=entry.uri,
        error=error,
        source=source,
        refreshing=False,
    )


def _ready(origin: str, entry: SkillEntry, uri: str, data: bytes) -> PreviewReady:
    return PreviewReady(
        origin=origin,
        skill_uri=entry.uri,
        uri=uri,
        content=data,
        verified=not entry.is_dynamic,
        warnings=content_warnings(data),
    )


def take_resource(ctx: HostContext, request: ReadResource, result: object) -> list[Effect]:
    """An ordinary read answered: deliver it unverified, within the cap (VER-02, WG-03)."""
    cap = ctx.policy.max_resource_bytes
    try:
        data = decode_read_result(result, uri=request.uri, max_size=cap)
    except VerificationError as exc:
        if exc.kind is VerificationKind.SIZE:
            return [_too_large(request, cap)]
        return [protocol_failed(request, exc)]
    except RemoteProtocolError as exc:
        return [protocol_failed(request, exc)]
    if len(data) > cap:
        return [_too_large(request, cap)]
    return [
        DeliverToModel(
            origin=request.origin,
            uri=request.uri,
            kind=DeliveryKind.RESOURCE,
            content=data,
            verified=False,
            skill_uri=None,
            skill_root=None,
        )
    ]


def _too_large(request: ReadResource, cap: int) -> Refused:
    return Refused(
        code=RefusalCode.RESOURCE_TOO_LARGE,
        message=f"{request.uri} is larger than {cap} bytes, the most this host accepts from an "
        "ordinary read (WG-03)",
        origin=request.origin,
        uri=request.uri,
    )
