"""SHA-256 digests and size-then-digest verification of raw bytes.

Theory of operation
-------------------
A digest is the SHA-256 of a file's raw bytes written ``sha256:`` + 64 lowercase hex characters
(spec, "Integrity and Verification"; VER-05, ENTRY-12). Verification compares bytes with a
resource's ``size`` first and its ``digest`` second: a length mismatch is already a verification
failure "whether or not the host goes on to compute the digest" (VER-07), so the hash is never
computed for bytes of the wrong length. :class:`DigestVerifier` does the same for content that
arrives in pieces and refuses the first byte past the expected size, so a hostile peer cannot make
the host hash (or buffer) more than ``size`` bytes.

A digest match shows only that the bytes and the entry agree; both come from the same server, so it
is never a trust signal (VER-15, SEC-09).
"""

from __future__ import annotations

import hashlib
import re
from typing import Final, final

from .errors import (
    DigestFormatError,
    VerificationError,
    VerificationKind,
    quote_for_message,
)
from .spec import DIGEST_PREFIX

__all__ = [
    "EMPTY_DIGEST",
    "compute_digest",
    "is_valid_digest",
    "check_digest",
    "verify_bytes",
    "DigestVerifier",
]

_DIGEST_RE: Final = re.compile(r"sha256:[0-9a-f]{64}")
_sha256: Final = hashlib.sha256

#: The digest of zero bytes (SIL-18).
EMPTY_DIGEST: Final = DIGEST_PREFIX + hashlib.sha256(b"").hexdigest()


def compute_digest(data: bytes | bytearray | memoryview) -> str:
    """Return ``"sha256:<64 lowercase hex>"`` for ``data`` (VER-05)."""
    return DIGEST_PREFIX + hashlib.sha256(data).hexdigest()


def is_valid_digest(value: object) -> bool:
    """Return True when ``value`` is a string in the exact digest format (ENTRY-12).

    Uppercase hex, a ``SHA256:`` prefix, other algorithms, 63 or 65 hex characters and surrounding
    whitespace are all refused.
    """
    return isinstance(value, str) and _DIGEST_RE.fullmatch(value) is not None


def check_digest(value: object) -> str:
    """Return ``value`` when it is a well-formed digest.

    Raises:
        DigestFormatError: ``value`` is not ``sha256:`` followed by 64 lowercase hex characters.
    """
    if is_valid_digest(value):
        assert isinstance(value, str)
        return value
    raise DigestFormatError(
        f"{quote_for_message(value)} is not a digest: expected 'sha256:' followed by 64 "
        "lowercase hexadecimal characters"
    )


def _size_error(
    uri: str | None, expected: int, actual: int, *, partial: bool = False
) -> VerificationError:
    subject = uri if uri is not None else "content"
    got = f"more than {expected}" if partial else str(actual)
    return VerificationError(
        f"{subject}: size mismatch: the entry lists {expected} bytes but the content has {got}",
        kind=VerificationKind.SIZE,
        uri=uri,
        expected=expected,
        actual=actual,
    )


def _digest_error(uri: str | None, expected: str, actual: str) -> VerificationError:
    subject = uri if uri is not None else "content"
    return VerificationError(
        f"{subject}: digest mismatch: the entry lists {expected} but the content hashes to {actual}",
        kind=VerificationKind.DIGEST,
        uri=uri,
        expected=expected,
        actual=actual,
    )


def verify_bytes(
    data: bytes | bytearray | memoryview,
    *,
    size: int,
    digest: str,
    uri: str | None = None,
) -> None:
    """Check ``data`` against an expected size and digest: size first, then digest (VER-06, VER-07).

    Args:
        data: The raw bytes that were read.
        size: The byte length the entry lists.
        digest: The digest the entry lists (must be well-formed).
        uri: The resource URI, used only in the error message.

    Raises:
        VerificationError: kind ``size`` when the length differs (the hash is not computed), kind
            ``digest`` when the SHA-256 differs.
        DigestFormatError: ``digest`` is malformed (a caller error: entries are validated first).
    """
    # A computed digest is always well-formed, so one equal to ``digest`` proves ``digest``
    # well-formed too: its format is checked (and a malformed one reported, as always first)
    # only on the way to a failure. The size is still checked before any byte is hashed.
    actual_size = len(data) if type(data) is bytes else _nbytes(data)
    if actual_size != size:
        check_digest(digest)
        raise _size_error(uri, size, actual_size)
    actual = DIGEST_PREFIX + _sha256(data).hexdigest()  # compute_digest, one call fewer
    if actual != digest:
        check_digest(digest)
        raise _digest_error(uri, digest, actual)


def _nbytes(data: bytes | bytearray | memoryview) -> int:
    return len(data) if not isinstance(data, memoryview) else data.nbytes


@final
class DigestVerifier:
    """Incremental size-then-digest verification for content that arrives in pieces.

    Feed chunks with :meth:`update`; it raises as soon as more bytes arrive than the expected size,
    so nothing past ``size`` is ever hashed. :meth:`finish` then checks the exact length and the
    digest. After any failure, or after :meth:`finish`, the verifier refuses further use.

    Example:
        >>> v = DigestVerifier(size=3, digest=compute_digest(b"abc"))
        >>> v.update(b"ab"); v.update(b"c"); v.finish()
    """

    __slots__ = ("_done", "_hash", "_received", "digest", "size", "uri")

    def __init__(self, *, size: int, digest: str, uri: str | None = None) -> None:
        """Start verifying content expected to be ``size`` bytes hashing to ``digest``.

        Raises:
            DigestFormatError: ``digest`` is malformed.
            ValueError: ``size`` is negative or not an int.
        """
        check_digest(digest)
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ValueError(f"size must be a non-negative int, not {size!r}")
        self.size = size
        self.digest = digest
        self.uri = uri
        self._hash = hashlib.sha256()
        self._received = 0
        self._done = False

    @property
    def received(self) -> int:
        """Bytes accepted so far."""
        return self._received

    def update(self, chunk: bytes | bytearray | memoryview) -> None:
        """Add the next piece of content.

        Raises:
            VerificationError: kind ``size`` when the content now exceeds the expected size.
            RuntimeError: the verifier already finished or failed.
        """
        if self._done:
            raise RuntimeError("this DigestVerifier has already finished or failed")
        length = len(chunk) if not isinstance(chunk, memoryview) else chunk.nbytes
        if self._received + length > self.size:
            self._done = True
            raise _size_error(self.uri, self.size, self._received + length, partial=True)
        self._received += length
        self._hash.update(chunk)

    def finish(self) -> None:
        """Check the total length and the digest of everything fed.

        Raises:
            VerificationError: kind ``size`` when fewer bytes arrived than expected, kind ``digest``
                when the SHA-256 differs.
            RuntimeError: the verifier already finished or failed.
        """
        if self._done:
            raise RuntimeError("this DigestVerifier has already finished or failed")
        self._done = True
        if self._received != self.size:
            raise _size_error(self.uri, self.size, self._received)
        actual = DIGEST_PREFIX + self._hash.hexdigest()
        if actual != self.digest:
            raise _digest_error(self.uri, self.digest, actual)
