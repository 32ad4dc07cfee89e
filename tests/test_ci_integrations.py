"""Where skill authors work: the pre-commit hook, the GitHub Action, and installing the tool from a
wheel or a git URL, each run for real from a snapshot of this checkout.

* The hook (``.pre-commit-hooks.yaml``) runs under the real ``pre-commit`` (pinned in the test
  extra) in a generated skills repository whose ``.pre-commit-config.yaml`` names a throwaway git
  clone of this working tree by path and commit: pre-commit clones it, builds its virtual
  environment and pip-installs the package, as it would from GitHub.
* The action (``action.yml``) is read and its steps run in order as a script on a sample
  repository: ``run`` steps with bash, expressions (``${{ inputs.x }}``, ``steps.y.outputs.z``,
  ``github.*``) and ``if`` conditions evaluated; ``actions/setup-python`` is this Python, and the
  code scanning upload is refused, as for a token without ``security-events: write``, so the
  annotations fallback runs. Its SARIF log goes through the structural check.
* A wheel built here (``python -m build``) and a ``git+file://`` URL install into fresh virtual
  environments and run.

pip fetches only the build backend (setuptools) from the package index; nothing else is
downloaded.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path
from typing import Any

import pytest
import yaml
from check_helpers import write_tree
from sarif_check import check, check_code_scanning

ROOT = Path(__file__).resolve().parents[1]
GOOD = (
    b"---\nname: pdf-tools\ndescription: Fill PDF forms. Use when a form is a PDF.\n---\n"
    b"See [the guide](references/guide.md).\n"
)
BROKEN = b"---\nname: pdf-tools\n---\nSee [the guide](references/guide.md).\n"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.org",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.org",
    "GIT_CONFIG_NOSYSTEM": "1",
}
#: A generous bound on one step that builds a virtual environment or a package.
SLOW = 600


def git(cwd: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        text=True,
        check=True,
        timeout=SLOW,
    )
    return result.stdout.strip()


def snapshot(target: Path) -> str:
    """A git repository at ``target`` holding this working tree's package files (committed or
    not), committed; returns the commit."""
    files = ["pyproject.toml", "README.md", ".pre-commit-hooks.yaml", "action.yml"]
    files += [str(p.relative_to(ROOT)) for p in (ROOT / "scripts").iterdir() if p.is_file()]
    files += [
        str(p.relative_to(ROOT))
        for p in sorted((ROOT / "skills_core").rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts and p.suffix in {".py", ".typed"}
    ]
    for name in files:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target / name)
    git(target, "init", "-q", "-b", "main")
    git(target, "add", "-A")
    git(target, "commit", "-q", "-m", "snapshot")
    return git(target, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A throwaway clone of this working tree: (its path, its commit)."""
    path = tmp_path_factory.mktemp("skills-core-source")
    return path, snapshot(path)


def fresh_venv(path: Path) -> Path:
    """A new virtual environment with pip; returns its python."""
    venv.create(path, with_pip=True, clear=True)
    return path / "bin" / "python"


def sample_repository(path: Path) -> Path:
    write_tree(
        path,
        {
            "skills/pdf-tools/SKILL.md": GOOD,
            "skills/pdf-tools/references/guide.md": b"# Guide\n",
            "README.md": b"# Skills\n",
        },
    )
    git(path, "init", "-q", "-b", "main")
    return path


# --- pre-commit -------------------------------------------------------------------------------


def test_the_pre_commit_hook_validates_the_skills_of_the_changed_files(
    source: tuple[Path, str], tmp_path: Path
) -> None:
    hook_repo, commit = source
    repo = sample_repository(tmp_path / "repo")
    config = {
        "repos": [
            {"repo": str(hook_repo), "rev": commit, "hooks": [{"id": "skills-core-validate"}]}
        ]
    }
    (repo / ".pre-commit-config.yaml").write_text(json.dumps(config))  # JSON is YAML
    env = {**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(tmp_path / "cache")}
    env.pop("VIRTUAL_ENV", None)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            args, cwd=repo, env=env, capture_output=True, text=True, check=False, timeout=SLOW
        )

    installed = run(sys.executable, "-m", "pre_commit", "install")
    assert installed.returncode == 0, installed.stderr
    git(repo, "add", "-A")
    good = run("git", "commit", "-m", "a good skill")
    assert good.returncode == 0, good.stdout + good.stderr
    assert re.search(r"skills-core validate\.+Passed", good.stdout + good.stderr)
    # A broken SKILL.md: the commit is refused, the finding printed.
    (repo / "skills/pdf-tools/SKILL.md").write_bytes(BROKEN)
    git(repo, "add", "-A")
    broken = run("git", "commit", "-m", "no description")
    output = broken.stdout + broken.stderr
    assert broken.returncode != 0, output
    assert re.search(r"skills-core validate\.+Failed", output)
    assert "skills/pdf-tools/SKILL.md: error[description-missing]" in output
    # Changing only a file beside SKILL.md re-validates its skill.
    git(repo, "reset", "-q", "--hard")
    git(repo, "commit", "-q", "--no-verify", "--allow-empty", "-m", "x")
    (repo / "skills/pdf-tools/SKILL.md").write_bytes(BROKEN)
    git(repo, "commit", "-q", "--no-verify", "-am", "broken, unchecked")
    (repo / "skills/pdf-tools/references/guide.md").write_text("# Guide, again\n")
    git(repo, "add", "-A")
    beside = run("git", "commit", "-m", "guide only")
    assert beside.returncode != 0
    assert "error[description-missing]" in beside.stdout + beside.stderr
    # A file outside every skill: nothing to validate, the commit passes.
    git(repo, "reset", "-q", "HEAD")
    git(repo, "checkout", "-q", "--", "skills")
    (repo / "README.md").write_text("# Skills, again\n")
    git(repo, "add", "README.md")
    outside = run("git", "commit", "-m", "readme only")
    assert outside.returncode == 0, outside.stdout + outside.stderr
    # --all-files validates the whole tree.
    every = run(sys.executable, "-m", "pre_commit", "run", "--all-files")
    assert every.returncode != 0
    assert "1 skill checked: 0 valid, 1 invalid" in every.stdout


# --- the GitHub Action --------------------------------------------------------------------------

_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


class ActionRun:
    """Runs action.yml's steps the way the runner would, for what can run here."""

    def __init__(self, action_path: Path, workspace: Path, inputs: dict[str, str], python: Path):
        self.action = yaml.safe_load((action_path / "action.yml").read_text())
        self.action_path = action_path
        self.workspace = workspace
        self.python = python
        defaults = {k: str(v.get("default", "")) for k, v in self.action["inputs"].items()}
        self.inputs = {**defaults, **inputs}
        self.steps: dict[str, dict[str, Any]] = {}
        self.log: list[str] = []
        self.failed: tuple[str, int] | None = None
        self.uploaded: Any = None
        self.github: dict[str, Any] = {
            "event_name": "push",
            "repository": "octo/skills",
            "server_url": "https://github.com",
            "event": {},
        }

    def value(self, expression: str) -> Any:
        """A context reference (``inputs.x``, ``steps.y.outputs.z``, ``github.a.b``) or a
        quoted string."""
        if expression.startswith("'"):
            return expression.strip("'")
        head, _, rest = expression.partition(".")
        if head == "inputs":
            return self.inputs[rest]
        if head == "steps":
            step, _, field = rest.partition(".")
            data = self.steps.get(step, {"outcome": "", "outputs": {}})
            return (
                data["outputs"].get(field.removeprefix("outputs."), "")
                if "." in field
                else (data.get(field, ""))
            )
        if head == "github":
            node: Any = self.github
            for part in rest.split("."):
                node = node.get(part, "") if isinstance(node, dict) else ""
            return node
        raise AssertionError(f"unknown expression {expression!r}")

    def condition(self, text: str) -> bool:
        """An ``if:`` of the forms action.yml uses: comparisons joined by && and ||."""
        python = re.sub(
            r"([a-z][\w.-]*|'[^']*')",
            lambda m: repr(self.value(m[1])) if m[1] not in ("and", "or") else m[1],
            text.replace("&&", " and ").replace("||", " or "),
        )
        return bool(eval(python, {"__builtins__": {}}))

    def substitute(self, text: str) -> str:
        return _EXPRESSION.sub(lambda m: str(self.value(m[1])), text)

    def run(self, *, upload_allowed: bool) -> None:
        for step in self.action["runs"]["steps"]:
            ident = step.get("id", step["name"])
            if "if" in step and not self.condition(step["if"]):
                self.steps[ident] = {"outcome": "skipped", "outputs": {}}
                continue
            if "uses" in step:
                assert step["uses"] in (
                    "actions/setup-python@v5",
                    "github/codeql-action/upload-sarif@v3",
                )
                if step["uses"].startswith("github/codeql-action"):
                    sarif = self.workspace / self.substitute(step["with"]["sarif_file"])
                    assert sarif.is_file()
                    self.uploaded = json.loads(sarif.read_text())
                    outcome = "success" if upload_allowed else "failure"
                    assert step.get("continue-on-error") is True
                    self.steps[ident] = {"outcome": outcome, "outputs": {}}
                continue
            output = self.workspace / f".output-{ident}"
            output.write_text("")
            env = {
                **os.environ,
                "PATH": f"{self.python.parent}{os.pathsep}{os.environ['PATH']}",
                "GITHUB_ACTION_PATH": str(self.action_path),
                "GITHUB_OUTPUT": str(output),
                "GITHUB_SERVER_URL": self.github["server_url"],
                **{k: self.substitute(str(v)) for k, v in step.get("env", {}).items()},
            }
            env.pop("PYTHONPATH", None)
            result = subprocess.run(
                ["bash", "-e", "-c", self.substitute(step["run"])],
                cwd=self.workspace,
                env=env,
                capture_output=True,
                text=True,
                check=False,
                timeout=SLOW,
            )
            self.log.append(result.stdout + result.stderr)
            outputs = dict(
                line.split("=", 1) for line in output.read_text().splitlines() if "=" in line
            )
            self.steps[ident] = {
                "outcome": "success" if result.returncode == 0 else "failure",
                "outputs": outputs,
            }
            if result.returncode != 0:
                self.failed = (step["name"], result.returncode)
                return
        self.failed = None


@pytest.fixture(scope="module")
def action_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Python that actions/setup-python would give: a fresh one, without skills-core."""
    return fresh_venv(tmp_path_factory.mktemp("setup-python"))


@pytest.mark.parametrize("upload_allowed", [False, True])
def test_the_action_validates_uploads_sarif_or_annotates(
    source: tuple[Path, str], action_python: Path, tmp_path: Path, upload_allowed: bool
) -> None:
    action_path = tmp_path / "_actions" / "octo" / "skills-core" / "v1"
    shutil.copytree(source[0], action_path, ignore=shutil.ignore_patterns(".git"))
    workspace = sample_repository(tmp_path / "workspace")
    (workspace / "skills/pdf-tools/SKILL.md").write_bytes(BROKEN)
    (workspace / "skills/pdf-tools/.env").write_text("TOKEN=x\n")
    action = ActionRun(
        action_path,
        workspace,
        {"paths": "skills", "ignore": "hidden-file, portability-date"},
        action_python,
    )
    action.run(upload_allowed=upload_allowed)
    log = "\n".join(action.log)
    # The job fails, in its last step, with validate's exit code.
    assert action.failed == ("Result", 1), log
    assert action.steps["validate"]["outputs"] == {
        "exit-code": "1",
        "sarif-file": "skills-core.sarif",
    }
    assert "skills/pdf-tools/SKILL.md: error[description-missing]" in log
    # The SARIF log passes the structural check and links each rule to this action's docs.
    sarif = action.uploaded
    assert check(sarif) == []
    assert check_code_scanning(sarif) == []
    rules = {r["id"]: r for r in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["description-missing"]["helpUri"] == (
        "https://github.com/octo/skills-core/blob/v1/docs/rules.md#description-missing"
    )
    results = [r["ruleId"] for r in sarif["runs"][0]["results"]]
    assert results == ["secret-file", "description-missing"]  # in file order: .env, SKILL.md
    annotations = [line for line in log.splitlines() if line.startswith("::")]
    if upload_allowed:
        assert action.steps["Annotate (no code scanning upload)"]["outcome"] == "skipped"
        assert annotations == []
    else:
        assert annotations[0].startswith("::warning file=skills/pdf-tools/.env,")
        assert annotations[1].startswith("::error file=skills/pdf-tools/SKILL.md,")
        assert "description-missing" in annotations[1]


def test_the_action_from_a_fork_annotates_and_a_good_tree_passes(
    source: tuple[Path, str], action_python: Path, tmp_path: Path
) -> None:
    action_path = tmp_path / "_actions" / "octo" / "skills-core" / "main"
    shutil.copytree(source[0], action_path, ignore=shutil.ignore_patterns(".git"))
    workspace = sample_repository(tmp_path / "workspace")
    action = ActionRun(action_path, workspace, {"strict": "true"}, action_python)
    action.github["event_name"] = "pull_request"
    action.github["event"] = {"pull_request": {"head": {"repo": {"full_name": "fork/skills"}}}}
    action.run(upload_allowed=True)
    assert action.failed is None, "\n".join(action.log)
    assert action.steps["upload"]["outcome"] == "skipped"  # a fork's token may not upload
    assert action.steps["Annotate (no code scanning upload)"]["outcome"] == "success"
    assert action.steps["validate"]["outputs"]["exit-code"] == "0"
    sarif = json.loads((workspace / "skills-core.sarif").read_text())
    assert check(sarif) == []


# --- installing from a wheel or a git URL ------------------------------------------------------


@pytest.fixture(scope="module")
def wheel(source: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    build = tmp_path_factory.mktemp("build-copy")
    shutil.copytree(source[0], build, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".git"))
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(build)],
        check=True,
        capture_output=True,
        timeout=SLOW,
    )
    (found,) = out.glob("skills_core-*.whl")
    return found


def installed_run(python: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(
        [str(python.parent / "skills-core"), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=SLOW,
    )


def check_installed(python: Path, tmp_path: Path) -> None:
    """The installed command validates a sample, explains a code, and is that package."""
    workspace = sample_repository(tmp_path / "sample")
    ok = installed_run(python, workspace, "validate", "skills/pdf-tools/references/guide.md")
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith("ok       skills/pdf-tools")
    explained = installed_run(python, workspace, "validate", "--explain", "secret-file")
    assert explained.returncode == 0
    assert explained.stdout.startswith("secret-file (warning): ")
    where = subprocess.run(
        [str(python), "-c", "import skills_core, sys; print(skills_core.__file__)"],
        cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert not where.stdout.startswith(str(ROOT)), where.stdout


def test_a_wheel_built_here_installs_and_runs(wheel: Path, tmp_path: Path) -> None:
    import zipfile

    names = zipfile.ZipFile(wheel).namelist()
    for module in ("skills_core/rules.py", "skills_core/cli/validate.py", "skills_core/py.typed"):
        assert module in names
    assert any(n.startswith("skills_core/server/") for n in names)
    assert not any(n.startswith(("tests/", "docs/", "scripts/")) for n in names)
    python = fresh_venv(tmp_path / "venv")
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-index", str(wheel)],
        check=True,
        timeout=SLOW,
    )
    check_installed(python, tmp_path)


def test_pip_installs_a_git_url(source: tuple[Path, str], tmp_path: Path) -> None:
    repo, commit = source
    python = fresh_venv(tmp_path / "venv")
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", f"git+file://{repo}@{commit}"],
        check=True,
        timeout=SLOW,
        env={**os.environ, **GIT_ENV},
    )
    check_installed(python, tmp_path)


def test_the_snapshot_holds_what_the_hook_and_the_action_need(source: tuple[Path, str]) -> None:
    repo, _ = source
    hooks = yaml.safe_load((repo / ".pre-commit-hooks.yaml").read_text())
    assert [h["id"] for h in hooks] == ["skills-core-validate"]
    assert hooks[0]["entry"] == "skills-core validate --changed"
    assert (repo / "scripts" / "action-validate").is_file()
