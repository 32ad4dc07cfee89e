"""Skill URIs: parsing, directory URIs, and relative-reference resolution.

Theory of operation
-------------------
A skill's files are resources named ``<scheme>://<skill-path>/<file-path>`` (spec, "Resource
Mapping"). The skill itself is named by its SKILL.md URI, ``<scheme>://<skill-path>/SKILL.md``; the
final ``<skill-path>`` segment is the skill's name and the segments before it are a server-chosen
prefix. The first segment sits where an RFC 3986 authority would, but carries no meaning and is never
resolved (URI-11).

Three rules shape everything here (docs/design.md#d5):

1. **URIs are exact strings.** Identity, manifest membership, approvals and cache keys compare the
   string as sent: never lowercased, never percent-decoded, never normalised (SIL-06). So this module
   parses by splitting strings, never with :mod:`urllib.parse` (whose ``hostname`` lowercases and whose
   ``urljoin`` ignores unknown schemes; docs/requirements.md#uri-parser-evidence).
2. **Refuse, never repair.** A URI or reference that is malformed or hostile raises
   :class:`~skills_core.errors.URIError`; nothing is clamped or cleaned up silently (SIL-01, SIL-02).
3. **References resolve against the skill root, lexically.** ``resolve_reference`` walks the
   reference's segments over the root and refuses anything that climbs above it, instead of running
   generic RFC 3986 resolution (which climbs into the prefix, clamps at the authority, and lets
   ``//host`` swap the authority; URI-19..URI-23).

What a path segment may contain: RFC 3986 ``pchar`` (unreserved, sub-delims, ``:`` and ``@``) plus
well-formed ``%XX`` escapes, and, in segments after the first, printable non-ASCII characters (IRI
style, as some servers publish them). Refused everywhere: control characters (C0, DEL, C1), Unicode
format characters (bidi controls, zero-width characters, tag characters), separators and whitespace
(SIL-07), backslashes, and the escapes ``%2e`` (an encoded dot), ``%2f`` and ``%5c`` (encoded
separators) and ``%00``-``%1f``/``%7f`` (encoded controls). Refusing every ``%2e``, not only those that
would form a dot segment, is stricter than SIL-01: an encoder never needs to escape ``.``, so only a
hostile or broken one produces it.

References are relative paths "as in the filesystem form" (spec, "Relative References"), read as URI
references: ``%XX`` escapes keep their meaning, and characters that a URI cannot carry raw but a file
name can (a space, ``"``, non-ASCII letters) are percent-encoded as UTF-8 with uppercase hex, the
same way :func:`encode_path_segment` (used by servers to build URIs) encodes them.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Final, final

from .errors import URIError, URIErrorKind, quote_for_message
from .names import skill_name_problem
from .spec import SKILL_MD

__all__ = [
    "MAX_URI_LENGTH",
    "SkillURI",
    "parse_skill_uri",
    "is_skill_md_uri",
    "skill_root",
    "resolve_reference",
    "resolve_directory_reference",
    "encode_path_segment",
    "check_path_segment",
    "percent_decode",
]

#: Longest URI or reference accepted, in characters. Real skill URIs are well under 300 characters;
#: browsers and HTTP servers commonly cap URLs at 8 KiB, and nothing legitimate comes close.
MAX_URI_LENGTH: Final = 8192

_SCHEME_RE: Final = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
# One path segment made only of allowed ASCII characters and well-formed escapes (the fast path).
_ASCII_SEGMENT_RE: Final = re.compile(r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})+")
# A reg-name (RFC 3986 §3.2.2): unreserved, sub-delims and escapes; no ':' '@' '[' ']'.
_REG_NAME_RE: Final = re.compile(r"(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})+")
# Escapes that are refused wherever they appear: an encoded dot, '/', '\', or control character.
_FORBIDDEN_ESCAPE_RE: Final = re.compile(r"%(?:2[eEfF]|5[cC]|[01][0-9A-Fa-f]|7[fF])")
# A whole clean file path of ASCII segments (no empty or dot segments): the fast path of
# file_path_of. Anything it refuses goes through the segment-by-segment checks for a precise error.
_SEG: Final = r"(?!\.\.?(?:/|$))(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})+"
_CLEAN_PATH_RE: Final = re.compile(rf"{_SEG}(?:/{_SEG})*")
_ALLOWED_ASCII: Final = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@"
)
_HEX: Final = frozenset("0123456789abcdefABCDEF")
_ESCAPES_RE: Final = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def percent_decode(text: str, *, errors: str = "replace") -> str:
    """Decode the ``%XX`` escapes of ``text`` as UTF-8, as ``urllib.parse.unquote`` does.

    The same result as ``unquote(text, errors=errors)``: a ``%`` not followed by two hex digits
    stays as it is, other characters are kept, and each run of escapes is decoded with
    ``errors`` (``"strict"`` raises :class:`UnicodeDecodeError`). Written here so that nothing
    on a server's start-up path imports :mod:`urllib.parse` (and :mod:`ipaddress` with it).
    """
    if "%" not in text:
        return text
    return _ESCAPES_RE.sub(
        lambda run: bytes.fromhex(run.group().replace("%", "")).decode("utf-8", errors), text
    )


# Unicode categories refused anywhere: controls, format characters (bidi, zero-width, tags),
# surrogates, private use, and every kind of separator / whitespace.
_BAD_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Co", "Zs", "Zl", "Zp"})
_SKILL_MD_SUFFIX: Final = "/" + SKILL_MD


def _fail(kind: URIErrorKind, value: str, message: str) -> URIError:
    return URIError(message, kind=kind, value=value)


def _describe_char(ch: str) -> str:
    name = unicodedata.name(ch, "")
    code = f"U+{ord(ch):04X}"
    return f"{code} {name}" if name else code


def _check_length(value: str, what: str) -> None:
    if len(value) > MAX_URI_LENGTH:
        raise _fail(
            URIErrorKind.TOO_LONG,
            value,
            f"{what} is {len(value)} characters long; the maximum is {MAX_URI_LENGTH}",
        )


def _check_characters(value: str, what: str) -> None:
    """Refuse control, format and separator characters, and backslashes, anywhere in ``value``."""
    if value.isascii() and value.isprintable() and "\\" not in value and " " not in value:
        return
    for ch in value:
        if ch == "\\":
            raise _fail(
                URIErrorKind.BAD_CHARACTER,
                value,
                f"{what} {quote_for_message(value)} contains a backslash; paths use '/' only",
            )
        if ch == " " and what != "reference":
            raise _fail(
                URIErrorKind.BAD_CHARACTER,
                value,
                f"{what} {quote_for_message(value)} contains a space; a URI must encode it as %20",
            )
        if ch != " " and unicodedata.category(ch) in _BAD_CATEGORIES:
            raise _fail(
                URIErrorKind.BAD_CHARACTER,
                value,
                f"{what} {quote_for_message(value)} contains the forbidden character "
                f"{_describe_char(ch)}",
            )


def _check_segment(segment: str, value: str, what: str, *, allow_non_ascii: bool = True) -> None:
    """Check one already-split path segment of a URI (not of a reference)."""
    if not segment:
        raise _fail(
            URIErrorKind.EMPTY_SEGMENT,
            value,
            f"{what} {quote_for_message(value)} has an empty path segment ('//' or a trailing '/')",
        )
    if segment in (".", ".."):
        raise _fail(
            URIErrorKind.DOT_SEGMENT,
            value,
            f"{what} {quote_for_message(value)} contains a {segment!r} segment",
        )
    if _ASCII_SEGMENT_RE.fullmatch(segment) is None:
        _explain_bad_segment(segment, value, what, allow_non_ascii=allow_non_ascii)
    if "%" in segment and _FORBIDDEN_ESCAPE_RE.search(segment) is not None:
        raise _fail(
            URIErrorKind.ENCODED_SEPARATOR,
            value,
            f"{what} {quote_for_message(value)} contains a percent-encoded dot, separator or "
            "control character (%2e, %2f, %5c, %00-%1f or %7f)",
        )


def check_path_segment(segment: str, *, uri: str | None = None) -> None:
    """Check that ``segment`` is one clean URI path segment (used for directory children; SIL-29).

    A clean segment is non-empty, not ``.`` or ``..``, holds no ``/``, ``?``, ``#``, backslash,
    control, format or whitespace character, and no malformed or forbidden escape.

    Args:
        segment: The segment to check.
        uri: The URI the segment came from, quoted in the error message.

    Raises:
        URIError: the segment is not clean.
    """
    value = segment if uri is None else uri
    _check_characters(segment, "path segment")
    _check_segment(segment, value, "path segment")


def _explain_bad_segment(segment: str, value: str, what: str, *, allow_non_ascii: bool) -> None:
    """Slow path: raise the precise error for a segment the fast regex refused, or accept it.

    Callers run :func:`_check_characters` on the whole URI first, so control, format and
    separator characters never reach this function.
    """
    i = 0
    n = len(segment)
    while i < n:
        ch = segment[i]
        if ch == "%":
            pair = segment[i + 1 : i + 3]
            if len(pair) != 2 or not (pair[0] in _HEX and pair[1] in _HEX):
                raise _fail(
                    URIErrorKind.BAD_ESCAPE,
                    value,
                    f"{what} {quote_for_message(value)} has a '%' not followed by two hex digits",
                )
            i += 3
            continue
        if ch in _ALLOWED_ASCII:
            i += 1
            continue
        if ch.isascii() or not allow_non_ascii:
            raise _fail(
                URIErrorKind.BAD_CHARACTER,
                value,
                f"{what} {quote_for_message(value)} contains {_describe_char(ch)}, which a URI "
                "path segment cannot carry unencoded",
            )
        # Other non-ASCII characters were screened by _check_characters already.
        i += 1


def _split_scheme(value: str, what: str) -> tuple[str, str]:
    """Split ``scheme://rest``; refuse anything without the ``://`` structure."""
    match = _SCHEME_RE.match(value)
    if match is None or not value.startswith("//", match.end()):
        raise _fail(
            URIErrorKind.MALFORMED,
            value,
            f"{what} {quote_for_message(value)} is not of the form <scheme>://<skill-path>/...",
        )
    return match.group(1), value[match.end() + 2 :]


def _check_no_query_or_fragment(value: str, what: str) -> None:
    if "?" in value:
        raise _fail(
            URIErrorKind.QUERY,
            value,
            f"{what} {quote_for_message(value)} has a query ('?'); skill URIs carry none",
        )
    if "#" in value:
        raise _fail(
            URIErrorKind.FRAGMENT,
            value,
            f"{what} {quote_for_message(value)} has a fragment ('#'); skill URIs carry none",
        )


_PERCENT_ENCODE_SAFE: Final = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@"
)


def encode_path_segment(name: str) -> str:
    """Percent-encode one file or folder name for use as a URI path segment.

    Every character outside RFC 3986 ``pchar`` (unreserved, sub-delims, ``:`` and ``@``) is
    encoded as UTF-8 with uppercase hex, ``%`` included, so the result is plain ASCII and decodes back
    to ``name`` exactly. Servers use this to build resource URIs from folder names.

    Raises:
        URIError: ``name`` is empty, ``.`` or ``..``, or contains ``/``, a backslash, a control or
            format character, or a lone surrogate (none of which a file name may safely carry).
    """
    if not name or name in (".", ".."):
        raise _fail(
            URIErrorKind.DOT_SEGMENT if name else URIErrorKind.EMPTY_SEGMENT,
            name,
            f"{name!r} cannot be a path segment",
        )
    if "/" in name:
        raise _fail(URIErrorKind.BAD_CHARACTER, name, f"path segment {name!r} contains '/'")
    for ch in name:
        if ch == "\\" or (ch != " " and unicodedata.category(ch) in _BAD_CATEGORIES):
            raise _fail(
                URIErrorKind.BAD_CHARACTER,
                name,
                f"name {quote_for_message(name)} contains the forbidden character "
                f"{_describe_char(ch)}",
            )
    if all(ch in _PERCENT_ENCODE_SAFE for ch in name):
        return name
    out: list[str] = []
    for ch in name:
        if ch in _PERCENT_ENCODE_SAFE:
            out.append(ch)
        else:
            out.extend(f"%{byte:02X}" for byte in ch.encode("utf-8"))
    return "".join(out)


def _encode_reference_segment(segment: str, ref: str) -> str:
    """Turn one segment of a reference into URI form (see the module docstring)."""
    if _ASCII_SEGMENT_RE.fullmatch(segment) is None:
        out: list[str] = []
        i = 0
        n = len(segment)
        while i < n:
            ch = segment[i]
            if ch == "%":
                pair = segment[i + 1 : i + 3]
                if len(pair) != 2 or not (pair[0] in _HEX and pair[1] in _HEX):
                    raise _fail(
                        URIErrorKind.BAD_ESCAPE,
                        ref,
                        f"reference {quote_for_message(ref)} has a '%' not followed by two hex "
                        "digits",
                    )
                out.append(segment[i : i + 3])
                i += 3
                continue
            if ch in _ALLOWED_ASCII:
                out.append(ch)
            else:
                out.extend(f"%{byte:02X}" for byte in ch.encode("utf-8"))
            i += 1
        segment = "".join(out)
    if "%" in segment and _FORBIDDEN_ESCAPE_RE.search(segment) is not None:
        raise _fail(
            URIErrorKind.ENCODED_SEPARATOR,
            ref,
            f"reference {quote_for_message(ref)} contains a percent-encoded dot, separator or "
            "control character (%2e, %2f, %5c, %00-%1f or %7f)",
        )
    return segment


@final
@dataclass(frozen=True, slots=True)
class SkillURI:
    """A parsed SKILL.md URI, ``<scheme>://<skill-path>/SKILL.md``.

    Build one with :meth:`parse` (or :func:`parse_skill_uri`); the constructor does not validate.

    Attributes:
        uri: The SKILL.md URI exactly as given.
        scheme: The scheme, exactly as given (``skill``, ``github``, ...).
        skill_path: ``<skill-path>``, e.g. ``acme/billing/refunds``.
    """

    uri: str
    scheme: str
    skill_path: str

    @classmethod
    def parse(cls, uri: str) -> SkillURI:
        """Parse and validate a SKILL.md URI.

        Raises:
            URIError: ``uri`` is not ``<scheme>://<skill-path>/SKILL.md`` with a valid authority
                (SIL-27), no empty or dot segments, no query or fragment, no forbidden characters or
                escapes, and a final skill-path segment that is a valid skill name (URI-07).
        """
        if not isinstance(uri, str):
            raise _fail(
                URIErrorKind.MALFORMED,
                repr(uri),
                f"a skill URI must be a string, not {type(uri).__name__}",
            )
        what = "skill URI"
        _check_length(uri, what)
        _check_characters(uri, what)
        scheme, rest = _split_scheme(uri, what)
        _check_no_query_or_fragment(uri, what)
        if not rest.endswith(_SKILL_MD_SUFFIX):
            hint = ""
            if rest.lower().endswith("/skill.md"):
                hint = " (the file name SKILL.md is case-sensitive)"
            raise _fail(
                URIErrorKind.NOT_SKILL_MD,
                uri,
                f"{quote_for_message(uri)} is not a SKILL.md URI: it must end in '/SKILL.md'{hint}",
            )
        skill_path = rest[: -len(_SKILL_MD_SUFFIX)]
        if not skill_path:
            raise _fail(
                URIErrorKind.NOT_SKILL_MD,
                uri,
                f"{quote_for_message(uri)} has no skill path before '/SKILL.md'",
            )
        segments = skill_path.split("/")
        authority = segments[0]
        if not authority:
            raise _fail(
                URIErrorKind.BAD_AUTHORITY,
                uri,
                f"{quote_for_message(uri)} has an empty first segment (authority)",
            )
        if _REG_NAME_RE.fullmatch(authority) is None:
            raise _fail(
                URIErrorKind.BAD_AUTHORITY,
                uri,
                f"the first segment {quote_for_message(authority)} of {quote_for_message(uri)} is "
                "not an RFC 3986 reg-name (no '@', ':', '[', ']', spaces or non-ASCII characters)",
            )
        for index, segment in enumerate(segments):
            _check_segment(segment, uri, what, allow_non_ascii=index > 0)
        name = segments[-1]
        problem = skill_name_problem(name)
        if problem is not None:
            raise _fail(
                URIErrorKind.BAD_NAME,
                uri,
                f"the last skill-path segment of {quote_for_message(uri)} must be the skill name: "
                f"{problem}",
            )
        return cls(uri=uri, scheme=scheme, skill_path=skill_path)

    @property
    def name(self) -> str:
        """The skill name: the final skill-path segment (URI-06)."""
        return self.skill_path.rpartition("/")[2]

    @property
    def prefix(self) -> str:
        """The organisational prefix before the name, ``""`` when there is none (URI-08)."""
        return self.skill_path.rpartition("/")[0]

    @property
    def authority(self) -> str:
        """The first skill-path segment. It has no meaning and is never resolved (URI-11)."""
        return self.skill_path.partition("/")[0]

    @property
    def root(self) -> str:
        """The skill's root directory URI: the SKILL.md URI without ``/SKILL.md`` (URI-05)."""
        return f"{self.scheme}://{self.skill_path}"

    def resource_uri(self, file_path: str) -> str:
        """Build the URI of ``file_path`` (already in URI form, ``/``-separated) in this skill.

        Raises:
            URIError: ``file_path`` is empty or has an empty, dot or malformed segment.
        """
        uri = f"{self.root}/{file_path}"
        self.file_path_of(uri)
        return uri

    def file_path_of(self, uri: str) -> str:
        """Return the file path of ``uri`` relative to the skill root, if ``uri`` is in the skill.

        The check is on exact strings: ``uri`` must start with the root followed by ``/`` (so
        ``.../refundsX/a.md`` is not inside ``.../refunds``), and what follows must be a clean
        file path with no empty or dot segments, forbidden escapes, query or fragment (ENTRY-10).

        Raises:
            URIError: ``uri`` is outside the skill (kind ``not-in-skill``) or malformed.
        """
        what = "resource URI"
        if not isinstance(uri, str):
            raise _fail(
                URIErrorKind.MALFORMED,
                repr(uri),
                f"a resource URI must be a string, not {type(uri).__name__}",
            )
        _check_length(uri, what)
        root_slash = self.root + "/"
        if not uri.startswith(root_slash):
            raise _fail(
                URIErrorKind.NOT_IN_SKILL,
                uri,
                f"{quote_for_message(uri)} is not inside the skill directory {self.root}",
            )
        file_path = uri[len(root_slash) :]
        if _CLEAN_PATH_RE.fullmatch(file_path) is not None and (
            "%" not in file_path or _FORBIDDEN_ESCAPE_RE.search(file_path) is None
        ):
            return file_path
        _check_characters(uri, what)
        _check_no_query_or_fragment(uri, what)
        for segment in file_path.split("/"):
            _check_segment(segment, uri, what)
        return file_path

    def directory_path_of(self, uri: str) -> str:
        """Return the directory path of a directory URI in this skill (``""`` for the root).

        Directory URIs carry no trailing slash (spec, "Directory Resources"; DIR-02, SIL-08).

        Raises:
            URIError: ``uri`` is outside the skill or malformed (a trailing slash included).
        """
        if uri == self.root:
            return ""
        return self.file_path_of(uri)

    def contains(self, uri: str) -> bool:
        """Return True when ``uri`` is a well-formed URI of a file inside this skill."""
        try:
            self.file_path_of(uri)
        except URIError:
            return False
        return True

    def resolve(self, ref: str) -> str:
        """Resolve a relative reference to a file; see :func:`resolve_reference`."""
        return _resolve(self, ref, directory=False)

    def resolve_directory(self, ref: str) -> str:
        """Resolve a relative reference to a directory; see :func:`resolve_directory_reference`."""
        return _resolve(self, ref, directory=True)


def parse_skill_uri(uri: str) -> SkillURI:
    """Parse and validate a SKILL.md URI; see :meth:`SkillURI.parse`."""
    return SkillURI.parse(uri)


def is_skill_md_uri(uri: object) -> bool:
    """Return True when ``uri`` is a valid SKILL.md URI (never raises)."""
    if not isinstance(uri, str):
        return False
    try:
        SkillURI.parse(uri)
    except URIError:
        return False
    return True


def skill_root(uri: str) -> str:
    """Return the root directory URI of the skill whose SKILL.md is ``uri`` (URI-05).

    Raises:
        URIError: ``uri`` is not a valid SKILL.md URI.
    """
    return SkillURI.parse(uri).root


def resolve_reference(skill_uri: str | SkillURI, ref: str) -> str:
    """Resolve a relative reference found in a skill against the skill's root (URI-17..URI-24).

    ``references/GUIDE.md`` in ``skill://acme/billing/refunds/SKILL.md`` resolves to
    ``skill://acme/billing/refunds/references/GUIDE.md``. Interior ``..`` that stays inside the root
    is fine (``references/../scripts/a.py``), a leading ``./`` is fine, and a fragment is dropped.
    An absolute URI of the same scheme inside the skill is returned unchanged (without fragment).
    References in supporting files resolve against the skill root too (SIL-21).

    Args:
        skill_uri: The SKILL.md URI of the skill (a string or a parsed :class:`SkillURI`).
        ref: The reference, as written.

    Returns:
        The resolved resource URI, an exact string to look up in the held entry.

    Raises:
        URIError: the reference climbs above the root (``escapes-root``), is absolute or a network
            path, carries another scheme (any spelling of ``file:`` included) or a query, contains
            ``%2e``/``%2f``/``%5c``/encoded controls, a malformed escape, a backslash, NUL or another
            control or format character, an empty segment, or names a directory; or ``skill_uri``
            itself is invalid.
    """
    skill = skill_uri if isinstance(skill_uri, SkillURI) else SkillURI.parse(skill_uri)
    return _resolve(skill, ref, directory=False)


def resolve_directory_reference(skill_uri: str | SkillURI, ref: str) -> str:
    """Resolve a relative reference to a directory of the skill, e.g. ``templates/``.

    Like :func:`resolve_reference`, but a trailing ``/`` is allowed and ``""``, ``.`` or ``./``
    name the root. The result never has a trailing slash (DIR-02).

    Raises:
        URIError: as for :func:`resolve_reference`.
    """
    skill = skill_uri if isinstance(skill_uri, SkillURI) else SkillURI.parse(skill_uri)
    return _resolve(skill, ref, directory=True)


def _resolve(skill: SkillURI, ref: str, *, directory: bool) -> str:
    if not isinstance(ref, str):
        raise _fail(
            URIErrorKind.MALFORMED,
            repr(ref),
            f"a reference must be a string, not {type(ref).__name__}",
        )
    what = "reference"
    _check_length(ref, what)
    _check_characters(ref, what)
    path = ref.partition("#")[0]
    if "?" in path:
        raise _fail(
            URIErrorKind.QUERY,
            ref,
            f"reference {quote_for_message(ref)} has a query ('?'); references to skill files "
            "carry none",
        )
    if path.startswith("//"):
        raise _fail(
            URIErrorKind.NETWORK_PATH,
            ref,
            f"reference {quote_for_message(ref)} is a network-path reference ('//'); it would "
            "replace the skill's authority",
        )
    if path.startswith("/"):
        raise _fail(
            URIErrorKind.ABSOLUTE_PATH,
            ref,
            f"reference {quote_for_message(ref)} is an absolute path; references resolve against "
            "the skill root and must be relative",
        )
    scheme_match = _SCHEME_RE.match(path)
    if scheme_match is not None:
        return _resolve_absolute(skill, ref, path, scheme_match.group(1), directory=directory)

    raw_segments = path.split("/")
    resolved: list[str] = []
    last = len(raw_segments) - 1
    for index, raw in enumerate(raw_segments):
        if raw == "" and index == last:
            # A trailing '/' (or an empty reference): the reference names a directory.
            if not directory:
                raise _fail(
                    URIErrorKind.NOT_A_FILE,
                    ref,
                    f"reference {quote_for_message(ref)} names a directory, not a file",
                )
            continue
        if raw == "":
            raise _fail(
                URIErrorKind.EMPTY_SEGMENT,
                ref,
                f"reference {quote_for_message(ref)} has an empty path segment ('//')",
            )
        if raw == ".":
            continue
        if raw == "..":
            if not resolved:
                raise _fail(
                    URIErrorKind.ESCAPES_ROOT,
                    ref,
                    f"reference {quote_for_message(ref)} climbs above the root of skill "
                    f"{skill.uri}",
                )
            resolved.pop()
            continue
        resolved.append(_encode_reference_segment(raw, ref))
    if not resolved:
        if directory:
            return skill.root
        raise _fail(
            URIErrorKind.NOT_A_FILE,
            ref,
            f"reference {quote_for_message(ref)} names the skill root directory, not a file",
        )
    if not directory and raw_segments[-1] in (".", ".."):
        raise _fail(
            URIErrorKind.NOT_A_FILE,
            ref,
            f"reference {quote_for_message(ref)} names a directory, not a file",
        )
    return skill.root + "/" + "/".join(resolved)


def _resolve_absolute(skill: SkillURI, ref: str, path: str, scheme: str, *, directory: bool) -> str:
    """Handle a reference that carries a scheme (URI-21)."""
    if scheme != skill.scheme or not path.startswith(f"{scheme}://"):
        raise _fail(
            URIErrorKind.SCHEME,
            ref,
            f"reference {quote_for_message(ref)} carries the scheme {scheme!r}; only relative "
            f"references or {skill.scheme}:// URIs inside the skill are allowed",
        )
    if directory and path == skill.root:
        return path
    try:
        skill.file_path_of(path)
    except URIError as exc:
        if exc.kind is URIErrorKind.NOT_IN_SKILL:
            raise _fail(
                URIErrorKind.NOT_IN_SKILL,
                ref,
                f"{quote_for_message(ref)} is not inside skill {skill.uri}; another skill is "
                "loaded through skills/get and its own approval",
            ) from None
        raise
    return path
