"""Skill URIs and relative references: URI-*, SIL-01..SIL-08, SIL-21, SIL-27."""

from __future__ import annotations

import socket
from urllib.parse import unquote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skills_core import (
    SkillURI,
    URIError,
    URIErrorKind,
    encode_path_segment,
    is_skill_md_uri,
    parse_skill_uri,
    resolve_directory_reference,
    resolve_reference,
    skill_root,
)
from skills_core.uri import MAX_URI_LENGTH, percent_decode

REFUNDS = "skill://acme/billing/refunds/SKILL.md"
GIT = "skill://git-workflow/SKILL.md"


# --- structure -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("uri", "skill_path", "prefix", "name", "root"),
    [
        (GIT, "git-workflow", "", "git-workflow", "skill://git-workflow"),
        (
            REFUNDS,
            "acme/billing/refunds",
            "acme/billing",
            "refunds",
            "skill://acme/billing/refunds",
        ),
        (
            "github://owner/repo/skills/refunds/SKILL.md",
            "owner/repo/skills/refunds",
            "owner/repo/skills",
            "refunds",
            "github://owner/repo/skills/refunds",
        ),
        ("skill://a/SKILL.md", "a", "", "a", "skill://a"),
    ],
)
# Requirement rows: URI-02, URI-05, URI-08, URI-13
def test_parse_skill_uri_parts_URI_02_URI_05_URI_08_URI_13(
    uri: str, skill_path: str, prefix: str, name: str, root: str
) -> None:
    parsed = parse_skill_uri(uri)
    assert parsed.uri == uri
    assert parsed.skill_path == skill_path
    assert parsed.prefix == prefix
    assert parsed.name == name
    assert parsed.root == root
    assert skill_root(uri) == root
    assert is_skill_md_uri(uri)


# Requirement rows: SIL-06
def test_authority_is_first_segment_and_never_lowercased_SIL_06() -> None:
    parsed = parse_skill_uri("skill://Acme/billing/refunds/SKILL.md")
    assert parsed.authority == "Acme"
    assert parsed.root == "skill://Acme/billing/refunds"
    # exact-string identity: the two spellings are different skills
    assert parsed != parse_skill_uri("skill://acme/billing/refunds/SKILL.md")
    assert parse_skill_uri("SKILL://x/SKILL.md").scheme == "SKILL"


@pytest.mark.parametrize(
    ("uri", "kind"),
    [
        ("skill:///SKILL.md", URIErrorKind.NOT_SKILL_MD),  # URI-02: no skill path
        ("skill://SKILL.md", URIErrorKind.NOT_SKILL_MD),
        ("skill://a//b/SKILL.md", URIErrorKind.EMPTY_SEGMENT),
        ("skill://git-workflow", URIErrorKind.NOT_SKILL_MD),  # URI-04
        ("skill://git-workflow/", URIErrorKind.NOT_SKILL_MD),
        ("skill://git-workflow/skill.md", URIErrorKind.NOT_SKILL_MD),  # SIL-05
        ("skill://git-workflow/Skill.md", URIErrorKind.NOT_SKILL_MD),
        ("skill://git-workflow/README.md", URIErrorKind.NOT_SKILL_MD),
        ("skill://user@host/x/SKILL.md", URIErrorKind.BAD_AUTHORITY),  # SIL-27
        ("skill://a:80/x/SKILL.md", URIErrorKind.BAD_AUTHORITY),
        ("skill://[::1]/x/SKILL.md", URIErrorKind.BAD_AUTHORITY),
        ("skill:///x/SKILL.md", URIErrorKind.BAD_AUTHORITY),
        ("skill://%zz/x/SKILL.md", URIErrorKind.BAD_AUTHORITY),  # URI-09
        ("skill://a b/x/SKILL.md", URIErrorKind.BAD_CHARACTER),
        ("skill://café/x/SKILL.md", URIErrorKind.BAD_AUTHORITY),
        ("skill://a/PDF-Processing/SKILL.md", URIErrorKind.BAD_NAME),  # URI-07
        ("skill://-pdf/SKILL.md", URIErrorKind.BAD_NAME),
        ("skill://a/pdf_processing/SKILL.md", URIErrorKind.BAD_NAME),
        ("skill://a/pdf%2dx/SKILL.md", URIErrorKind.BAD_NAME),
        ("skill://a/../b/SKILL.md", URIErrorKind.DOT_SEGMENT),
        ("skill://a/./b/SKILL.md", URIErrorKind.DOT_SEGMENT),
        ("skill://a/%2e%2e/b/SKILL.md", URIErrorKind.ENCODED_SEPARATOR),  # SIL-01
        ("skill://a/x%2fy/b/SKILL.md", URIErrorKind.ENCODED_SEPARATOR),
        ("skill://a/x%5Cy/b/SKILL.md", URIErrorKind.ENCODED_SEPARATOR),
        ("skill://a/x%00/b/SKILL.md", URIErrorKind.ENCODED_SEPARATOR),
        ("skill://a/x%/b/SKILL.md", URIErrorKind.BAD_ESCAPE),
        ("skill://a/b/SKILL.md?x=1", URIErrorKind.QUERY),  # SIL-03
        ("skill://a/b/SKILL.md#top", URIErrorKind.FRAGMENT),
        ("skill://a\\b/SKILL.md", URIErrorKind.BAD_CHARACTER),
        ("skill://a/b\x00/SKILL.md", URIErrorKind.BAD_CHARACTER),
        ("skill://a/x\u202eb/b/SKILL.md", URIErrorKind.BAD_CHARACTER),  # SIL-07: bidi control
        ("skill://a/x\u200bb/b/SKILL.md", URIErrorKind.BAD_CHARACTER),  # zero-width space
        ("skill://a/x\U000e0041/b/SKILL.md", URIErrorKind.BAD_CHARACTER),  # tag character
        ("skill://a/x<y/b/SKILL.md", URIErrorKind.BAD_CHARACTER),
        ("skill:a/SKILL.md", URIErrorKind.MALFORMED),
        ("a/SKILL.md", URIErrorKind.MALFORMED),
        ("1skill://a/SKILL.md", URIErrorKind.MALFORMED),
        ("", URIErrorKind.MALFORMED),
    ],
)
def test_invalid_skill_uris(uri: str, kind: URIErrorKind) -> None:
    with pytest.raises(URIError) as info:
        parse_skill_uri(uri)
    assert info.value.kind is kind
    assert info.value.value == uri
    assert not is_skill_md_uri(uri)


# Requirement rows: SIL-05
def test_skill_md_case_hint_in_message_SIL_05() -> None:
    with pytest.raises(URIError, match="case-sensitive"):
        parse_skill_uri("skill://git-workflow/skill.md")


@pytest.mark.parametrize("name", ["pdf-processing", "a", "a" * 64, "abc-123", "x1-y2-z3"])
# Requirement rows: URI-07
def test_valid_names_URI_07(name: str) -> None:
    assert parse_skill_uri(f"skill://{name}/SKILL.md").name == name


@pytest.mark.parametrize(
    "name",
    [
        "PDF-Processing",
        "-pdf",
        "pdf-",
        "pdf--processing",
        "a" * 65,
        "pdf_processing",
        "pdf.processing",
        "café",
    ],
)
# Requirement rows: URI-07
def test_invalid_names_URI_07(name: str) -> None:
    with pytest.raises(URIError) as info:
        parse_skill_uri(f"skill://p/{name}/SKILL.md")
    assert info.value.kind in (URIErrorKind.BAD_NAME, URIErrorKind.DOT_SEGMENT)


def test_non_string_uri_is_a_typed_error() -> None:
    with pytest.raises(URIError) as info:
        parse_skill_uri(42)  # type: ignore[arg-type]
    assert info.value.kind is URIErrorKind.MALFORMED
    assert not is_skill_md_uri(None)


def test_too_long_uri_is_refused() -> None:
    uri = "skill://a/" + "b/" * MAX_URI_LENGTH + "c/SKILL.md"
    with pytest.raises(URIError) as info:
        parse_skill_uri(uri)
    assert info.value.kind is URIErrorKind.TOO_LONG


# Requirement rows: URI-11
def test_no_dns_or_network_resolution_of_the_authority_URI_11(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("the authority must never be resolved")

    monkeypatch.setattr(socket, "getaddrinfo", forbidden)
    monkeypatch.setattr(socket, "gethostbyname", forbidden)
    skill = parse_skill_uri("skill://example.com/x/SKILL.md")
    assert skill.resolve("a.md") == "skill://example.com/x/a.md"
    # a reference naming another host is refused, never routed anywhere
    with pytest.raises(URIError):
        skill.resolve("skill://other-server.example/exfil/secrets.md")


# --- the spec's Resource Mapping table (URI-03) ---------------------------------------------


@pytest.mark.parametrize(
    ("skill_path", "file_path", "uri"),
    [
        ("git-workflow", "SKILL.md", "skill://git-workflow/SKILL.md"),
        ("pdf-processing", "references/FORMS.md", "skill://pdf-processing/references/FORMS.md"),
        ("pdf-processing", "scripts/extract.py", "skill://pdf-processing/scripts/extract.py"),
        ("acme/billing/refunds", "SKILL.md", "skill://acme/billing/refunds/SKILL.md"),
        (
            "acme/billing/refunds",
            "examples/email.md",
            "skill://acme/billing/refunds/examples/email.md",
        ),
    ],
)
# Requirement rows: URI-01, URI-03
def test_resource_mapping_table_URI_01_URI_03(skill_path: str, file_path: str, uri: str) -> None:
    skill = parse_skill_uri(f"skill://{skill_path}/SKILL.md")
    assert skill.resource_uri(file_path) == uri
    assert skill.file_path_of(uri) == file_path


@pytest.mark.parametrize(
    ("uri", "kind"),
    [
        ("skill://acme/billing/other/x.md", URIErrorKind.NOT_IN_SKILL),
        ("skill://acme/billing/refunds", URIErrorKind.NOT_IN_SKILL),
        ("skill://acme/billing/refundsX/a.md", URIErrorKind.NOT_IN_SKILL),
        ("github://acme/billing/refunds/a.md", URIErrorKind.NOT_IN_SKILL),
        ("skill://ACME/billing/refunds/a.md", URIErrorKind.NOT_IN_SKILL),
        ("skill://acme/billing/refunds/../x", URIErrorKind.DOT_SEGMENT),
        ("skill://acme/billing/refunds/%2e%2e/x", URIErrorKind.ENCODED_SEPARATOR),
        ("skill://acme/billing/refunds/a/", URIErrorKind.EMPTY_SEGMENT),
        ("skill://acme/billing/refunds/a.md?v=1", URIErrorKind.QUERY),
        ("skill://acme/billing/refunds/a.md#x", URIErrorKind.FRAGMENT),
        ("skill://acme/billing/refunds/a b.md", URIErrorKind.BAD_CHARACTER),
    ],
)
# Requirement rows: ENTRY-10
def test_file_path_of_refuses_outside_or_malformed_ENTRY_10(uri: str, kind: URIErrorKind) -> None:
    skill = parse_skill_uri(REFUNDS)
    with pytest.raises(URIError) as info:
        skill.file_path_of(uri)
    assert info.value.kind is kind
    assert not skill.contains(uri)


def test_file_path_of_accepts_iri_and_escapes() -> None:
    skill = parse_skill_uri(REFUNDS)
    assert skill.file_path_of("skill://acme/billing/refunds/caf%C3%A9.md") == "caf%C3%A9.md"
    assert skill.file_path_of("skill://acme/billing/refunds/café.md") == "café.md"
    assert skill.contains("skill://acme/billing/refunds/SKILL.md")


# Requirement rows: DIR-02, SIL-08
def test_directory_path_of_DIR_02_SIL_08() -> None:
    skill = parse_skill_uri("skill://pdf-processing/SKILL.md")
    assert skill.directory_path_of("skill://pdf-processing") == ""
    assert skill.directory_path_of("skill://pdf-processing/templates") == "templates"
    with pytest.raises(URIError) as info:
        skill.directory_path_of("skill://pdf-processing/templates/")
    assert info.value.kind is URIErrorKind.EMPTY_SEGMENT
    with pytest.raises(URIError):
        skill.directory_path_of("skill://pdf-processing/")


# --- relative references ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("base", "ref", "expected"),
    [
        (
            REFUNDS,
            "references/GUIDE.md",
            "skill://acme/billing/refunds/references/GUIDE.md",
        ),  # URI-17
        (GIT, "scripts/a.sh", "skill://git-workflow/scripts/a.sh"),
        (
            REFUNDS,
            "references/../scripts/a.py",
            "skill://acme/billing/refunds/scripts/a.py",
        ),  # URI-19
        (REFUNDS, "./x.md", "skill://acme/billing/refunds/x.md"),  # URI-23
        (REFUNDS, "a/./b.md", "skill://acme/billing/refunds/a/b.md"),
        (
            REFUNDS,
            "references/GUIDE.md#intro",
            "skill://acme/billing/refunds/references/GUIDE.md",
        ),  # URI-24
        (REFUNDS, "x.md#a?b", "skill://acme/billing/refunds/x.md"),
        (REFUNDS, "a b.md", "skill://acme/billing/refunds/a%20b.md"),
        (REFUNDS, "a%20b.md", "skill://acme/billing/refunds/a%20b.md"),
        (REFUNDS, "café.md", "skill://acme/billing/refunds/caf%C3%A9.md"),
        (REFUNDS, "x[1].md", "skill://acme/billing/refunds/x%5B1%5D.md"),
        (REFUNDS, "SKILL.md", REFUNDS),
        # an absolute URI inside the same skill is accepted as is (fragment dropped)
        (REFUNDS, "skill://acme/billing/refunds/a.md#s", "skill://acme/billing/refunds/a.md"),
        # URI-18: a nested skill's references resolve against its own root
        ("skill://a/sub/SKILL.md", "x.md", "skill://a/sub/x.md"),
    ],
)
def test_resolve_reference(base: str, ref: str, expected: str) -> None:
    assert resolve_reference(base, ref) == expected
    assert resolve_reference(parse_skill_uri(base), ref) == expected


@pytest.mark.parametrize(
    ("ref", "kind"),
    [
        ("../x.md", URIErrorKind.ESCAPES_ROOT),  # URI-19: RFC 3986 gives skill://acme/billing/x.md
        ("../../etc/passwd", URIErrorKind.ESCAPES_ROOT),
        ("a/../../x.md", URIErrorKind.ESCAPES_ROOT),
        ("../refunds/x.md", URIErrorKind.ESCAPES_ROOT),  # even when it would come back
        ("/etc/passwd", URIErrorKind.ABSOLUTE_PATH),  # URI-20
        ("//evil/x", URIErrorKind.NETWORK_PATH),
        ("file:/etc/passwd", URIErrorKind.SCHEME),  # URI-21, WG-02
        ("file:///etc/passwd", URIErrorKind.SCHEME),
        ("FILE:///etc/passwd", URIErrorKind.SCHEME),
        ("file:etc/passwd", URIErrorKind.SCHEME),
        ("https://x/y", URIErrorKind.SCHEME),
        ("github://acme/billing/refunds/a.md", URIErrorKind.SCHEME),
        ("skill://other/SKILL.md", URIErrorKind.NOT_IN_SKILL),
        ("skill://acme/billing/x.md", URIErrorKind.NOT_IN_SKILL),
        ("skill:relative", URIErrorKind.SCHEME),
        ("%2e%2e/x.md", URIErrorKind.ENCODED_SEPARATOR),  # URI-22, SIL-01
        (".%2e/x.md", URIErrorKind.ENCODED_SEPARATOR),
        ("%2E%2E/x.md", URIErrorKind.ENCODED_SEPARATOR),
        ("references%2f..%2fx", URIErrorKind.ENCODED_SEPARATOR),
        ("a%5c..%5cx", URIErrorKind.ENCODED_SEPARATOR),
        ("a%00.md", URIErrorKind.ENCODED_SEPARATOR),
        ("a%0a.md", URIErrorKind.ENCODED_SEPARATOR),
        ("a%.md", URIErrorKind.BAD_ESCAPE),
        ("a%zz.md", URIErrorKind.BAD_ESCAPE),
        ("a%2", URIErrorKind.BAD_ESCAPE),
        ("references\\..\\x", URIErrorKind.BAD_CHARACTER),  # URI-23
        ("C:\\x", URIErrorKind.BAD_CHARACTER),
        ("C:/x", URIErrorKind.SCHEME),
        ("\\\\host\\share", URIErrorKind.BAD_CHARACTER),
        ("a//b.md", URIErrorKind.EMPTY_SEGMENT),
        ("a\x00.md", URIErrorKind.BAD_CHARACTER),
        ("a\n.md", URIErrorKind.BAD_CHARACTER),
        ("a\x7f.md", URIErrorKind.BAD_CHARACTER),
        ("a\u202e.md", URIErrorKind.BAD_CHARACTER),
        ("x.md#\x00", URIErrorKind.BAD_CHARACTER),
        ("x.md?v=2", URIErrorKind.QUERY),  # URI-24, SIL-03
        ("?v=2", URIErrorKind.QUERY),
        ("", URIErrorKind.NOT_A_FILE),
        ("#frag", URIErrorKind.NOT_A_FILE),
        (".", URIErrorKind.NOT_A_FILE),
        ("templates/", URIErrorKind.NOT_A_FILE),
        ("templates/..", URIErrorKind.NOT_A_FILE),
        ("a/b/..", URIErrorKind.NOT_A_FILE),
        ("a/.", URIErrorKind.NOT_A_FILE),
    ],
)
def test_resolve_reference_refuses(ref: str, kind: URIErrorKind) -> None:
    with pytest.raises(URIError) as info:
        resolve_reference(REFUNDS, ref)
    assert info.value.kind is kind, info.value.message
    assert info.value.value == ref


def test_escape_message_names_the_reference_and_skill() -> None:
    with pytest.raises(URIError) as info:
        resolve_reference(REFUNDS, "../x.md")
    assert "'../x.md'" in str(info.value)
    assert REFUNDS in str(info.value)


# Requirement rows: SIL-21
def test_resolve_reference_from_supporting_file_still_uses_root_SIL_21() -> None:
    # "../scripts/x.py" written in references/GUIDE.md is resolved against the skill root.
    with pytest.raises(URIError) as info:
        resolve_reference(REFUNDS, "../scripts/x.py")
    assert info.value.kind is URIErrorKind.ESCAPES_ROOT


def test_resolve_reference_with_invalid_base() -> None:
    with pytest.raises(URIError) as info:
        resolve_reference("skill://a/README.md", "x.md")
    assert info.value.kind is URIErrorKind.NOT_SKILL_MD


def test_resolve_reference_non_string() -> None:
    with pytest.raises(URIError) as info:
        resolve_reference(REFUNDS, None)  # type: ignore[arg-type]
    assert info.value.kind is URIErrorKind.MALFORMED


def test_resolve_reference_too_long() -> None:
    with pytest.raises(URIError) as info:
        resolve_reference(REFUNDS, "a/" * MAX_URI_LENGTH)
    assert info.value.kind is URIErrorKind.TOO_LONG


def test_absolute_same_skill_uri_must_still_be_clean() -> None:
    with pytest.raises(URIError) as info:
        resolve_reference(REFUNDS, "skill://acme/billing/refunds/a/../b.md")
    assert info.value.kind is URIErrorKind.DOT_SEGMENT


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ("", "skill://pdf-processing"),
        (".", "skill://pdf-processing"),
        ("./", "skill://pdf-processing"),
        ("templates", "skill://pdf-processing/templates"),
        ("templates/", "skill://pdf-processing/templates"),
        ("templates/regional/", "skill://pdf-processing/templates/regional"),
        ("templates/..", "skill://pdf-processing"),
        ("skill://pdf-processing", "skill://pdf-processing"),
        ("skill://pdf-processing/templates", "skill://pdf-processing/templates"),
    ],
)
# Requirement rows: DIR-02
def test_resolve_directory_reference_DIR_02(ref: str, expected: str) -> None:
    assert resolve_directory_reference("skill://pdf-processing/SKILL.md", ref) == expected
    skill = parse_skill_uri("skill://pdf-processing/SKILL.md")
    assert skill.resolve_directory(ref) == expected


@pytest.mark.parametrize("ref", ["..", "../x", "/templates", "templates//x", "%2e"])
def test_resolve_directory_reference_refuses(ref: str) -> None:
    with pytest.raises(URIError):
        resolve_directory_reference("skill://pdf-processing/SKILL.md", ref)


# --- encoding names into segments (servers) -------------------------------------------------


@pytest.mark.parametrize(
    ("name", "segment"),
    [
        ("invoice.md", "invoice.md"),
        ("my file.md", "my%20file.md"),
        ("café.md", "caf%C3%A9.md"),
        ("100%.md", "100%25.md"),
        ("a#b?c.md", "a%23b%3Fc.md"),
        ("...", "..."),
        ("x:y@z", "x:y@z"),
    ],
)
# Requirement rows: URI-10
def test_encode_path_segment_URI_10(name: str, segment: str) -> None:
    assert encode_path_segment(name) == segment
    skill = parse_skill_uri("skill://s/SKILL.md")
    assert skill.file_path_of(f"skill://s/{segment}") == segment


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", "a\\b", "a\x00b", "a\u202eb", "\ud800"])
def test_encode_path_segment_refuses(name: str) -> None:
    with pytest.raises(URIError):
        encode_path_segment(name)


def test_skill_uri_resource_uri_validates_file_path() -> None:
    skill = SkillURI.parse(GIT)
    with pytest.raises(URIError):
        skill.resource_uri("../x")
    with pytest.raises(URIError):
        skill.resource_uri("")


def test_file_path_of_non_string() -> None:
    with pytest.raises(URIError) as info:
        parse_skill_uri(GIT).file_path_of(None)  # type: ignore[arg-type]
    assert info.value.kind is URIErrorKind.MALFORMED


# Escapes, stray '%', hex-looking text and non-ASCII, so every branch of unquote is reached.
_PIECES = ["%", "%2", "%C3", "%A9", "%e2%80", "%ff", "%41", "%4", "x", "/", "é", "\u2028", "%%"]
_PERCENT_TEXT = st.lists(st.sampled_from(_PIECES), max_size=12).map("".join) | st.text(max_size=30)


@given(_PERCENT_TEXT)
def test_percent_decode_is_unquote(text: str) -> None:
    """Our decoder (kept so start-up never imports urllib.parse) agrees with unquote."""
    assert percent_decode(text) == unquote(text)
    try:
        expected: str | None = unquote(text, errors="strict")
    except UnicodeDecodeError:
        expected = None
    try:
        got: str | None = percent_decode(text, errors="strict")
    except UnicodeDecodeError:
        got = None
    assert got == expected


def test_percent_decode_examples() -> None:
    assert percent_decode("caf%C3%A9%20x") == "café x"
    assert percent_decode("100%") == "100%"
    assert percent_decode("%zz%4") == "%zz%4"
    assert percent_decode("%C3x%A9") == "\ufffdx\ufffd"
    with pytest.raises(UnicodeDecodeError):
        percent_decode("%C3", errors="strict")
