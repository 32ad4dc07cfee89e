"""The error hierarchy: one root, stable kinds, actionable messages."""

from __future__ import annotations

import pickle

import pytest

import skills_core
from skills_core import (
    EntryOverLimitError,
    EntryProblem,
    FrontmatterError,
    InvalidEntryError,
    LocalProtocolError,
    ProtocolError,
    RemoteProtocolError,
    SkillsError,
    URIError,
    URIErrorKind,
    VerificationError,
    VerificationKind,
)
from skills_core.errors import FrontmatterErrorKind, TransportError, TransportErrorKind


def test_every_exported_exception_derives_from_skills_error() -> None:
    for name in skills_core.__all__:
        obj = getattr(skills_core, name)
        if isinstance(obj, type) and issubclass(obj, BaseException):
            assert issubclass(obj, SkillsError), name


def test_value_errors_are_also_value_errors() -> None:
    for cls in (URIError, InvalidEntryError, FrontmatterError):
        assert issubclass(cls, ValueError)


def test_verification_kinds_are_stable_strings() -> None:
    assert [k.value for k in VerificationKind] == [
        "size",
        "digest",
        "unlisted",
        "frontmatter",
        "content",
    ]
    err = VerificationError("x", kind=VerificationKind.UNLISTED, uri="skill://a/b")
    assert err.kind == "unlisted"
    assert err.uri == "skill://a/b"


def test_frontmatter_error_message_carries_location() -> None:
    err = FrontmatterError(
        "duplicate key 'a' (first at line 2)", kind="duplicate-key", line=4, column=1
    )
    assert str(err) == "frontmatter line 4, column 1: duplicate key 'a' (first at line 2)"
    assert str(FrontmatterError("r", kind="syntax", line=3)) == "frontmatter line 3: r"
    assert str(FrontmatterError("r", kind="schema")) == "frontmatter: r"
    assert err.kind is FrontmatterErrorKind.DUPLICATE_KEY


def test_closed_kind_families_are_enums_and_refuse_unknown_kinds() -> None:
    """The module's rule: a family whose kinds are a closed set has them as a StrEnum."""
    assert TransportError("x", kind="timeout").kind is TransportErrorKind.TIMEOUT
    assert TransportError("x", kind="timeout").kind == "timeout"
    with pytest.raises(ValueError, match="TransportErrorKind"):
        TransportError("x", kind="tmeout")
    with pytest.raises(ValueError, match="FrontmatterErrorKind"):
        FrontmatterError("x", kind="k")


def test_protocol_error_is_abstract() -> None:
    with pytest.raises(TypeError):
        ProtocolError("x", kind="k")
    local = LocalProtocolError("x", kind="k", rpc_code=-32600)
    remote = RemoteProtocolError("y", kind="k")
    assert local.rpc_code == -32600
    assert remote.rpc_code == -32603


def test_invalid_entry_needs_problems_and_over_limit_split() -> None:
    with pytest.raises(ValueError, match="at least one"):
        InvalidEntryError(())
    limit = EntryProblem(code="too-large", pointer="/resources", message="m", over_limit=True)
    err = EntryOverLimitError((limit,), uri="skill://a/SKILL.md")
    assert err.kind == "over-limit"
    assert str(err) == "invalid skill entry skill://a/SKILL.md: /resources: m"
    assert str(EntryProblem(code="c", pointer="", message="m")) == "entry: m"


@pytest.mark.parametrize(
    "err",
    [
        URIError("m", kind=URIErrorKind.QUERY, value="x?y"),
        VerificationError("m", kind=VerificationKind.SIZE, uri="u", expected=1, actual=2),
        FrontmatterError("r", kind="syntax", line=1, column=2),
        RemoteProtocolError("m", kind="parse", rpc_code=-32700),
    ],
)
def test_errors_pickle(err: SkillsError) -> None:
    clone = pickle.loads(pickle.dumps(err))
    assert type(clone) is type(err)
    assert clone.__dict__ == err.__dict__
    assert str(clone) == str(err)
