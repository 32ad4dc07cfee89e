"""FMT-06: skills valid under the pinned Agent Skills rules keep validating as the format grows.

The extension delegates the skill format to the Agent Skills specification and asks clients to honour
its backward-compatibility mechanisms. The mechanism that specification relies on is additive
evolution: new frontmatter fields appear, old ones keep their meaning. So a validator must pass
unknown fields through untouched (never reject or strip them), and the extension must render them
verbatim in the entry, so that a skill written for a newer revision still loads here and a skill
written for this revision still loads there.
"""

from __future__ import annotations

from skills_core import (
    Severity,
    SkillEntry,
    compare_frontmatter,
    parse_frontmatter,
    validate_skill_md,
)
from skills_core.server import Catalog

FUTURE = (
    b"---\n"
    b"name: future-skill\n"
    b"description: Uses fields a later Agent Skills revision may define\n"
    b"x-invocation: {mode: manual, triggers: [on-save]}\n"
    b"agent-skills-version: '2.0'\n"
    b"---\n"
    b"body\n"
)


def test_unknown_future_fields_do_not_invalidate_a_skill_FMT_06() -> None:
    findings = validate_skill_md(FUTURE, directory_name="future-skill")
    assert not [f for f in findings if f.severity is Severity.ERROR]


def test_unknown_fields_pass_through_the_catalog_and_the_entry_verbatim_FMT_06() -> None:
    catalog = Catalog.from_files({"future-skill/SKILL.md": FUTURE})
    (skill,) = catalog.skills
    frontmatter = skill.entry.to_json()["frontmatter"]
    assert frontmatter == parse_frontmatter(FUTURE).data
    assert frontmatter["x-invocation"] == {"mode": "manual", "triggers": ["on-save"]}
    # and a host that parses the file agrees with the entry field by field (VER-10)
    entry = SkillEntry.from_json(skill.entry.to_json())
    assert compare_frontmatter(parse_frontmatter(FUTURE).data, entry.frontmatter) == ()
