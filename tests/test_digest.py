"""Digests and size-then-digest verification: VER-05..VER-07, ENTRY-12, SIL-18,
docs/requirements.md#spec-test-vectors."""

from __future__ import annotations

import base64
import hashlib

import pytest

from skills_core import (
    EMPTY_DIGEST,
    DigestFormatError,
    DigestVerifier,
    VerificationError,
    VerificationKind,
    check_digest,
    compute_digest,
    is_valid_digest,
    verify_bytes,
)
from skills_core import digest as digest_module
from skills_core import spec_examples as ex

SPEC_VECTORS = [
    ("SKILL.md", ex.SKILL_MD),
    ("templates/invoice.md", ex.INVOICE),
    ("templates/purchase-order.md", ex.PURCHASE_ORDER),
    ("templates/credit-note.md", ex.CREDIT_NOTE),
]


@pytest.mark.parametrize(("path", "data"), SPEC_VECTORS)
# Requirement rows: VER-05
def test_spec_example_files_have_the_published_size_and_digest_VER_05(
    path: str, data: bytes
) -> None:
    size, digest = ex.EXPECTED[path]
    assert len(data) == size
    assert compute_digest(data) == digest
    verify_bytes(data, size=size, digest=digest, uri=f"skill://pdf-processing/{path}")


def test_spec_example_texts_end_with_exactly_one_newline() -> None:
    for _, data in SPEC_VECTORS:
        assert data.endswith(b"\n")
        assert not data.endswith(b"\n\n")
        data.decode("utf-8")


# Requirement rows: SIL-18
def test_compute_digest_matches_hashlib_and_empty_digest_SIL_18() -> None:
    assert compute_digest(b"") == EMPTY_DIGEST
    assert EMPTY_DIGEST == "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    data = bytes(range(256)) * 7
    assert compute_digest(data) == "sha256:" + hashlib.sha256(data).hexdigest()
    assert compute_digest(bytearray(data)) == compute_digest(memoryview(data))


@pytest.mark.parametrize(
    "value",
    [
        "sha256:99b737495721155ece826d57521e2d66141ebdc1344a400487481ea2642ab19e",
        EMPTY_DIGEST,
    ],
)
# Requirement rows: ENTRY-12
def test_valid_digest_format_ENTRY_12(value: str) -> None:
    assert is_valid_digest(value)
    assert check_digest(value) == value


@pytest.mark.parametrize(
    "value",
    [
        "sha256:99B737495721155ECE826D57521E2D66141EBDC1344A400487481EA2642AB19E",  # uppercase hex
        "SHA256:99b737495721155ece826d57521e2d66141ebdc1344a400487481ea2642ab19e",
        "sha256:99b737495721155ece826d57521e2d66141ebdc1344a400487481ea2642ab19",  # 63
        "sha256:99b737495721155ece826d57521e2d66141ebdc1344a400487481ea2642ab19e0",  # 65
        "sha512:99b737495721155ece826d57521e2d66141ebdc1344a400487481ea2642ab19e",
        "99b737495721155ece826d57521e2d66141ebdc1344a400487481ea2642ab19e",
        " sha256:99b737495721155ece826d57521e2d66141ebdc1344a400487481ea2642ab19e",
        "sha256:99b737495721155ece826d57521e2d66141ebdc1344a400487481ea2642ab19e\n",
        "sha256:a1b2c3d4...",  # the WG draft's placeholder
        "sha256:99b737495721155ece826d57521e2d66141ebdc1344a400487481ea2642ab1\uff19e",  # fullwidth 9
        "",
        None,
        42,
    ],
)
# Requirement rows: ENTRY-12
def test_invalid_digest_format_ENTRY_12(value: object) -> None:
    assert not is_valid_digest(value)
    with pytest.raises(DigestFormatError) as info:
        check_digest(value)
    assert info.value.kind == "bad-digest"


# docs/requirements.md#spec-test-vectors, derived negative vectors
NEGATIVE = [
    (ex.SKILL_MD[:-1], 150, "a090ee9ac5ae398cecd4e30f18ee992c9cc5dcc7a64c4a4b07ef68a1f3655938"),
    (
        ex.SKILL_MD.replace(b"\n", b"\r\n"),
        159,
        "8a0f68c42fe747493a6e6977ffc244e46ae6de0c77181232026291083bc8bd5b",
    ),
    (
        b"\xef\xbb\xbf" + ex.SKILL_MD,
        154,
        "37ed456e97e029f915309da66cdc77ed2b9dde5887111928bc601dc1a6457d4c",
    ),
    (
        ex.SKILL_MD.replace(b"---\n\n", b"allowed-tools: Bash\n---\n\n"),
        171,
        "7468bce084ac0c659a3bcf13c40fc77008082dd275cf012f33be56d1ee540b53",
    ),
]


@pytest.mark.parametrize(("data", "size", "hexdigest"), NEGATIVE)
# Requirement rows: VER-07
def test_negative_vectors_fail_on_size_VER_07(data: bytes, size: int, hexdigest: str) -> None:
    assert len(data) == size
    assert compute_digest(data) == "sha256:" + hexdigest
    expected_size, expected_digest = ex.EXPECTED["SKILL.md"]
    with pytest.raises(VerificationError) as info:
        verify_bytes(data, size=expected_size, digest=expected_digest, uri=ex.SKILL_MD_URI)
    err = info.value
    assert err.kind is VerificationKind.SIZE
    assert err.expected == 151
    assert err.actual == size
    assert err.uri == ex.SKILL_MD_URI
    assert "151" in str(err)
    assert str(size) in str(err)


# Requirement rows: VER-07
def test_size_mismatch_never_computes_the_digest_VER_07(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[bytes] = []
    real = digest_module.compute_digest

    def spy(data: bytes) -> str:
        calls.append(bytes(data))
        return real(data)

    monkeypatch.setattr(digest_module, "compute_digest", spy)
    with pytest.raises(VerificationError) as info:
        digest_module.verify_bytes(
            ex.INVOICE[:-1], size=29, digest=ex.EXPECTED["templates/invoice.md"][1]
        )
    assert info.value.kind is VerificationKind.SIZE
    assert calls == []


# Requirement rows: VER-06
def test_one_flipped_byte_is_a_digest_mismatch_VER_06() -> None:
    size, digest = ex.EXPECTED["templates/invoice.md"]
    tampered = b"# Invoicf\n\nCustomer:\nAmount:\n"
    with pytest.raises(VerificationError) as info:
        verify_bytes(tampered, size=size, digest=digest)
    assert info.value.kind is VerificationKind.DIGEST
    assert info.value.expected == digest
    assert info.value.actual == compute_digest(tampered)
    assert "digest mismatch" in str(info.value)


# Requirement rows: VER-17
def test_blob_form_of_the_invoice_verifies_VER_17() -> None:
    size, digest = ex.EXPECTED["templates/invoice.md"]
    blob = "IyBJbnZvaWNlCgpDdXN0b21lcjoKQW1vdW50Ogo="
    verify_bytes(base64.b64decode(blob, validate=True), size=size, digest=digest)


# Requirement rows: SIL-18
def test_zero_size_with_empty_digest_SIL_18() -> None:
    verify_bytes(b"", size=0, digest=EMPTY_DIGEST)
    with pytest.raises(VerificationError) as info:
        verify_bytes(b"x", size=0, digest=EMPTY_DIGEST)
    assert info.value.kind is VerificationKind.SIZE


def test_verify_bytes_rejects_malformed_expected_digest() -> None:
    with pytest.raises(DigestFormatError):
        verify_bytes(b"", size=0, digest="sha256:E3B0")


def test_verify_accepts_memoryview() -> None:
    size, digest = ex.EXPECTED["templates/invoice.md"]
    verify_bytes(memoryview(ex.INVOICE), size=size, digest=digest)


# --- incremental verification -------------------------------------------------------------


@pytest.mark.parametrize("chunk", [1, 2, 7, 29, 1000])
def test_incremental_verifier_accepts_any_chunking(chunk: int) -> None:
    size, digest = ex.EXPECTED["templates/invoice.md"]
    verifier = DigestVerifier(size=size, digest=digest)
    for start in range(0, len(ex.INVOICE), chunk):
        verifier.update(ex.INVOICE[start : start + chunk])
    assert verifier.received == 29
    verifier.finish()


def test_incremental_verifier_refuses_the_first_byte_past_size() -> None:
    size, digest = ex.EXPECTED["templates/invoice.md"]
    verifier = DigestVerifier(
        size=size, digest=digest, uri="skill://pdf-processing/templates/invoice.md"
    )
    verifier.update(ex.INVOICE)
    with pytest.raises(VerificationError) as info:
        verifier.update(memoryview(b"!"))
    assert info.value.kind is VerificationKind.SIZE
    assert "more than 29" in str(info.value)
    assert verifier.received == 29  # the extra byte was never taken
    with pytest.raises(RuntimeError):
        verifier.update(b"")
    with pytest.raises(RuntimeError):
        verifier.finish()


def test_incremental_verifier_short_and_tampered() -> None:
    size, digest = ex.EXPECTED["templates/invoice.md"]
    short = DigestVerifier(size=size, digest=digest)
    short.update(ex.INVOICE[:10])
    with pytest.raises(VerificationError) as info:
        short.finish()
    assert info.value.kind is VerificationKind.SIZE
    assert info.value.actual == 10

    tampered = DigestVerifier(size=size, digest=digest)
    tampered.update(ex.INVOICE.upper())
    with pytest.raises(VerificationError) as info:
        tampered.finish()
    assert info.value.kind is VerificationKind.DIGEST


@pytest.mark.parametrize("size", [-1, True, 1.0, "29"])
def test_incremental_verifier_rejects_bad_size(size: object) -> None:
    with pytest.raises(ValueError, match="size"):
        DigestVerifier(size=size, digest=EMPTY_DIGEST)  # type: ignore[arg-type]
    with pytest.raises(DigestFormatError):
        DigestVerifier(size=0, digest="nope")
