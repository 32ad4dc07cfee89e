"""The container image's ``Dockerfile`` is coherent (docker itself need not be installed).

What is checked, instruction by instruction: it builds from an official Python image the package
supports, copies only what exists (and what ``.dockerignore`` lets through), installs the package
with its ``http`` extra, runs as a user that is not root, keeps to a read-only root filesystem (no
bytecode written at run time, compiled at build time), exposes the port it serves on, and its
command is one the CLI accepts: ``skills-core serve --http 0.0.0.0:8080 /skills``. When a docker
daemon answers, the image is also built and run (see the last test).
"""

from __future__ import annotations

import fnmatch
import json
import re
import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from skills_core.cli import build_parser

REPO = Path(__file__).resolve().parents[1]
DOCKERFILE = REPO / "Dockerfile"


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    joined: list[str] = []
    pending = ""
    for raw in DOCKERFILE.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        joined.append(pending + line)
        pending = ""
    assert not pending, "a continuation line ends the file"
    out = []
    for line in joined:
        keyword, _, rest = line.partition(" ")
        out.append((keyword.upper(), rest.strip()))
    return out


def stages() -> list[list[tuple[str, str]]]:
    found: list[list[tuple[str, str]]] = []
    for keyword, rest in instructions():
        if keyword == "FROM":
            found.append([])
        assert found, "an instruction before FROM"
        found[-1].append((keyword, rest))
    return found


def exec_form(rest: str) -> list[str]:
    value = json.loads(rest)
    assert isinstance(value, list), f"not the exec form: {rest}"
    assert all(isinstance(item, str) for item in value)
    return value


def test_every_instruction_is_known() -> None:
    known = {
        "FROM",
        "ENV",
        "WORKDIR",
        "COPY",
        "RUN",
        "USER",
        "EXPOSE",
        "STOPSIGNAL",
        "ENTRYPOINT",
        "CMD",
        "VOLUME",
        "ARG",
        "LABEL",
        "HEALTHCHECK",
    }
    assert {keyword for keyword, _ in instructions()} <= known


def test_the_base_image_is_a_python_the_package_supports() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    minimum = tuple(map(int, re.findall(r"\d+", project["requires-python"])[:2]))
    for stage in stages():
        image = stage[0][1].split()[0]
        match = re.fullmatch(r"python:(\d+)\.(\d+)-slim", image)
        assert match is not None, image
        assert (int(match.group(1)), int(match.group(2))) >= minimum
        classifier = f"Programming Language :: Python :: {match.group(1)}.{match.group(2)}"
        assert classifier in project["classifiers"]


def test_it_copies_only_what_exists_and_what_the_context_holds() -> None:
    patterns = [
        line
        for line in (REPO / ".dockerignore").read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    ]

    def in_context(path: str) -> bool:
        kept = True
        for pattern in patterns:
            negated = pattern.startswith("!")
            bare = pattern.lstrip("!").rstrip("/")
            if fnmatch.fnmatch(path, bare) or path.startswith(bare + "/"):
                kept = negated
        return kept

    build, run = stages()
    for keyword, rest in build:
        if keyword == "COPY":
            *sources, _ = rest.split()
            for source in sources:
                assert (REPO / source).exists(), source
                assert in_context(source), f"{source} is left out by .dockerignore"
    assert not in_context(".git")
    assert not in_context(".venv")
    # the run stage takes the installed environment from the build stage, nothing else
    copies = [rest for keyword, rest in run if keyword == "COPY"]
    assert copies == ["--from=build /opt/skills-core /opt/skills-core"]
    names = re.findall(r"AS (\w+)", build[0][1])
    assert names == ["build"]


def test_it_installs_the_package_with_the_http_extra() -> None:
    build, _ = stages()
    (install,) = [rest for keyword, rest in build if keyword == "RUN" and "pip install" in rest]
    words = shlex.split(install)
    assert ".[http]" in words
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    assert any(requirement.startswith("uvicorn") for requirement in extras["http"])
    assert "compileall" in install  # bytecode made at build time: the root filesystem is read-only


def test_it_runs_as_a_user_that_is_not_root_on_a_read_only_filesystem() -> None:
    _, run = stages()
    keywords = [keyword for keyword, _ in run]
    users = [rest for keyword, rest in run if keyword == "USER"]
    assert users, "no USER: the server would run as root"
    user = users[-1].split(":")[0]
    assert user not in {"root", "0"}
    assert keywords.index("USER") < keywords.index("ENTRYPOINT")
    created = " ".join(rest for keyword, rest in run if keyword == "RUN")
    assert f"--uid {user}" in created
    env = " ".join(rest for keyword, rest in run if keyword == "ENV")
    assert "PYTHONDONTWRITEBYTECODE=1" in env
    assert "/opt/skills-core/bin" in env


def test_its_command_is_serve_http_on_the_port_it_exposes() -> None:
    _, run = stages()
    entrypoint = exec_form(next(rest for keyword, rest in run if keyword == "ENTRYPOINT"))
    command = exec_form(next(rest for keyword, rest in run if keyword == "CMD"))
    exposed = [rest for keyword, rest in run if keyword == "EXPOSE"]
    assert entrypoint[:4] == ["skills-core", "serve", "--http", "0.0.0.0:8080"]
    assert exposed == ["8080"]
    assert command == ["/skills"]
    volumes = [exec_form(rest) for keyword, rest in run if keyword == "VOLUME"]
    assert volumes == [["/skills"]]
    args = build_parser().parse_args(entrypoint[1:] + command)
    assert args.http == "0.0.0.0:8080"
    assert args.roots == ["/skills"]
    # and with the options docs/operations.md shows in front of the root
    args = build_parser().parse_args(
        [*entrypoint[1:], "--allowed-host", "skills.example.com", "/skills"]
    )
    assert args.allowed_host == ["skills.example.com"]


def docker_answers() -> bool:
    docker = shutil.which("docker")
    if docker is None:
        return False
    done = subprocess.run([docker, "info"], capture_output=True, check=False)
    return done.returncode == 0


@pytest.mark.skipif(not docker_answers(), reason="no docker daemon answers here")
def test_the_image_builds_and_serves_read_only(tmp_path: Path) -> None:  # pragma: no cover
    tag = "skills-core-test:latest"
    subprocess.run(["docker", "build", "-t", tag, str(REPO)], check=True)
    skills = tmp_path / "skills" / "hello"
    skills.mkdir(parents=True)
    (skills / "SKILL.md").write_text("---\nname: hello\ndescription: Says hello\n---\nHi\n")
    done = subprocess.run(
        [
            "docker",
            "run",
            "--rm",
            "--read-only",
            "--entrypoint",
            "skills-core",
            "-v",
            f"{tmp_path / 'skills'}:/skills:ro",
            tag,
            "manifest",
            "/skills",
        ],
        capture_output=True,
        check=True,
    )
    assert b"skill://hello/SKILL.md" in done.stdout


def test_its_health_check_asks_readyz_on_the_port_it_exposes() -> None:
    """The health check asks /readyz (503 until the catalog is loaded) over loopback, which the
    probe rules accept whatever --allowed-host says, on the port the entry point serves."""
    [(_, rest)] = [(k, r) for k, r in instructions() if k == "HEALTHCHECK"]
    options, _, command = rest.partition("CMD ")
    assert "--start-period=" in options
    argv = exec_form(command)
    assert argv[:2] == ["python", "-c"]
    assert "http://127.0.0.1:8080/readyz" in argv[2]
    compile(argv[2], "<healthcheck>", "exec")
