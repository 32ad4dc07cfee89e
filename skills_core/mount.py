"""Where a skill's files go when a host materialises the skill on disk, and how a reference resolves there.

A host may give the model a skill as a folder (a *virtual mount*: the skill's verified files
written under a folder of the host's choosing) instead of reading each file through
``resources/read``. Both ways must agree: a relative reference in the skill names the same file
whether it is resolved as a URI or as a path in the mount (URI-26, WG-12), and a reference that
fails one way fails the other.

So a path in a mount is never resolved by the filesystem's own rules (which would follow
``%2e%2e`` once decoded, a backslash on Windows, or a ``..`` above the folder): it is the URI
resolution of :func:`skills_core.uri.resolve_reference`, mapped to a path by :func:`mount_path`.
:func:`mount_uri` maps a path back. The mapping is one file name per URI path segment, each the
segment percent-decoded as UTF-8 (``a%20b.md`` is the file ``a b.md``, ``caf%C3%A9.md`` the file
``café.md``), and the URI of a path is each name percent-encoded as the server encodes it.

Everything here works on strings, with ``/`` between names: the host joins the path to its own
folder (after checking, as always, that what it writes there is what it verified). No I/O.
"""

from __future__ import annotations

from .errors import URIError, URIErrorKind
from .uri import (
    SkillURI,
    encode_path_segment,
    percent_decode,
    resolve_directory_reference,
    resolve_reference,
)

__all__ = ["mount_path", "mount_uri", "resolve_in_mount", "resolve_directory_in_mount"]


def _skill(skill_uri: str | SkillURI) -> SkillURI:
    return skill_uri if isinstance(skill_uri, SkillURI) else SkillURI.parse(skill_uri)


def mount_path(skill_uri: str | SkillURI, uri: str) -> str:
    """The path, relative to the mount's folder, of the skill file ``uri``.

    ``mount_path("skill://acme/billing/SKILL.md", "skill://acme/billing/references/a%20b.md")``
    is ``"references/a b.md"``; the ``SKILL.md`` URI itself is ``"SKILL.md"``.

    Only a URI in the encoding this library's servers use maps to a path (each segment exactly
    :func:`~skills_core.uri.encode_path_segment` of its name: ``%C3%A9``, not ``%c3%a9``, and
    ``A``, not ``%41``): two spellings of one name would be two URIs in ``resources/read`` but one
    file in a mount, and the two ways would disagree about which files the skill lists.

    Raises:
        URIError: ``uri`` is not a file of the skill (``not-in-skill``) or is malformed; a
            segment is not UTF-8 once decoded (``bad-escape``), decodes to a name a folder cannot
            hold safely (``bad-character``, ``dot-segment``), or is not spelt as the encoding of
            its name (``bad-escape``).
    """
    skill = _skill(skill_uri)
    return _path(uri, skill.file_path_of(uri))


def _path(uri: str, relative: str) -> str:
    """The names of ``relative`` (a clean URI path), decoded and checked as :func:`mount_path` says."""
    names = []
    for segment in relative.split("/"):
        try:
            name = percent_decode(segment, errors="strict")
        except UnicodeDecodeError:
            raise URIError(
                f"{uri}: the segment {segment!r} is not UTF-8 once decoded, so no file name in "
                "a mount matches it",
                kind=URIErrorKind.BAD_ESCAPE,
                value=uri,
            ) from None
        if encode_path_segment(name) != segment:
            raise URIError(
                f"{uri}: the segment {segment!r} is not spelt as the name {name!r} is encoded "
                f"({encode_path_segment(name)!r}), so it cannot be given a path in a mount",
                kind=URIErrorKind.BAD_ESCAPE,
                value=uri,
            )
        names.append(name)
    return "/".join(names)


def mount_uri(skill_uri: str | SkillURI, path: str) -> str:
    """The URI of the file at ``path`` (relative to the mount's folder, ``/`` between names).

    The inverse of :func:`mount_path`: ``mount_uri(s, mount_path(s, uri)) == uri`` for every
    URI :func:`mount_path` accepts, and ``mount_path(s, mount_uri(s, path)) == path``.

    Raises:
        URIError: ``path`` is empty or absolute, or has a name no skill file can have (empty,
            ``.``, ``..``, a backslash, a control or format character).
    """
    skill = _skill(skill_uri)
    if not path or path.startswith("/"):
        raise URIError(
            f"{path!r} is not a path relative to the mount's folder",
            kind=URIErrorKind.ABSOLUTE_PATH if path else URIErrorKind.EMPTY_SEGMENT,
            value=path,
        )
    return skill.resource_uri("/".join(encode_path_segment(name) for name in path.split("/")))


def resolve_in_mount(skill_uri: str | SkillURI, ref: str) -> str:
    """Resolve a reference found in the skill to a path in its mount (URI-26).

    The same file :func:`~skills_core.uri.resolve_reference` names, as a path relative to the
    mount's folder; a reference it refuses (above the root, absolute, another scheme, an encoded
    dot or separator, a query, ...) is refused here with the same :class:`URIError`.
    """
    skill = _skill(skill_uri)
    return mount_path(skill, resolve_reference(skill, ref))


def resolve_directory_in_mount(skill_uri: str | SkillURI, ref: str) -> str:
    """Resolve a reference to a directory of the skill to a path in its mount (``""``: the root).

    As :func:`~skills_core.uri.resolve_directory_reference`, mapped like :func:`mount_path`.
    """
    skill = _skill(skill_uri)
    resolved = resolve_directory_reference(skill, ref)
    relative = skill.directory_path_of(resolved)
    return _path(resolved, relative) if relative else ""
