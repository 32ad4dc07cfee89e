"""The specification's worked example, byte for byte: files, entries, and the listing.

Theory of operation: the spec's "Example Message Flow" serves one skill, ``pdf-processing``, with
three files, then adds a fourth (``templates/credit-note.md``). The texts below are exactly the bytes
the spec gives (each ends with one newline), so their sizes and SHA-256 digests equal the ones the
spec publishes (docs/requirements.md#spec-test-vectors, vectors V1-V4). They are Python constants
rather than files so that no checkout, archive or line-ending conversion can alter a byte.
``skills-core demo`` and the tests build real folders from them.
"""

from __future__ import annotations

from typing import Final

from .jsonvalue import JSONValue

__all__ = [
    "SKILL_MD_URI",
    "SKILL_MD",
    "INVOICE",
    "PURCHASE_ORDER",
    "CREDIT_NOTE",
    "FILES",
    "FILES_WITH_CREDIT_NOTE",
    "EXPECTED",
    "entry_json",
    "ORIGIN_LABEL",
]

#: The label the spec's host gives the server.
ORIGIN_LABEL: Final = "docs-server"

#: ``skill://pdf-processing/SKILL.md`` (V1: 151 bytes).
SKILL_MD_URI: Final = "skill://pdf-processing/SKILL.md"
SKILL_MD: Final = (
    b"---\n"
    b"name: pdf-processing\n"
    b"description: Extract, fill, and assemble PDF documents\n"
    b"---\n"
    b"\n"
    b"# PDF processing\n"
    b"\n"
    b"Choose the matching template from `templates/`.\n"
)
#: ``templates/invoice.md`` (V2: 29 bytes).
INVOICE: Final = b"# Invoice\n\nCustomer:\nAmount:\n"
#: ``templates/purchase-order.md`` (V3: 35 bytes).
PURCHASE_ORDER: Final = b"# Purchase order\n\nSupplier:\nItems:\n"
#: ``templates/credit-note.md``, added by the server during the flow (V4: 39 bytes).
CREDIT_NOTE: Final = b"# Credit note\n\nInvoice:\nCredit amount:\n"

#: The skill folder before the change, as paths relative to the skill root.
FILES: Final = {
    "SKILL.md": SKILL_MD,
    "templates/invoice.md": INVOICE,
    "templates/purchase-order.md": PURCHASE_ORDER,
}
#: The skill folder after ``credit-note.md`` is added.
FILES_WITH_CREDIT_NOTE: Final = {**FILES, "templates/credit-note.md": CREDIT_NOTE}

#: ``path -> (size, digest)`` exactly as printed in the spec.
EXPECTED: Final = {
    "SKILL.md": (
        151,
        "sha256:99b737495721155ece826d57521e2d66141ebdc1344a400487481ea2642ab19e",
    ),
    "templates/invoice.md": (
        29,
        "sha256:61f4ea6d2c75fde1b4977219e7e3107d491c3c26aefb6686e84d6281c088d9ee",
    ),
    "templates/purchase-order.md": (
        35,
        "sha256:f2ff774b1737ff3dec81c47946f9976f18a1a9f69dda0a81f22eabd95173c158",
    ),
    "templates/credit-note.md": (
        39,
        "sha256:766bffa8d4908ce897e1727ca22e4bf0fa796620b35218ce2132a124545626f1",
    ),
}


def entry_json(*, with_credit_note: bool = False) -> dict[str, JSONValue]:
    """Return the spec's entry for ``pdf-processing`` (P), or after the change (P'), as JSON."""
    paths = list(FILES_WITH_CREDIT_NOTE if with_credit_note else FILES)
    resources: list[JSONValue] = [
        {
            "uri": f"skill://pdf-processing/{path}",
            "digest": EXPECTED[path][1],
            "size": EXPECTED[path][0],
        }
        for path in paths
    ]
    return {
        "uri": SKILL_MD_URI,
        "frontmatter": {
            "name": "pdf-processing",
            "description": "Extract, fill, and assemble PDF documents",
        },
        "resources": resources,
    }
