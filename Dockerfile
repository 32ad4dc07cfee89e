# skills-core serve --http in a container. How to run it, and why each line is here:
# docs/operations.md, "Container image".
#
#   docker build -t skills-core .
#   docker run --read-only --tmpfs /tmp -p 8080:8080 -v "$PWD/skills:/skills:ro" \
#     -e SKILLS_CORE_CURSOR_KEY="$(openssl rand -hex 32)" skills-core \
#     --allowed-host skills.example.com /skills

# -- build: the package with its http extra (uvicorn), in a virtual environment -------------------
FROM python:3.12-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY skills_core ./skills_core
# httptools: uvicorn's faster HTTP parser, which serve --http uses when it is installed.
# Bytecode is compiled now: the image runs with a read-only root filesystem.
RUN python -m venv /opt/skills-core \
    && /opt/skills-core/bin/pip install ".[http]" httptools \
    && /opt/skills-core/bin/python -m compileall -q /opt/skills-core

# -- run: no compiler, no pip cache, not root ---------------------------------------------------
FROM python:3.12-slim
COPY --from=build /opt/skills-core /opt/skills-core
RUN groupadd --system --gid 10001 skills \
    && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin skills
ENV PATH=/opt/skills-core/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
# The skills: mount them here (read-only is enough), or name other roots after the options.
VOLUME ["/skills"]
USER 10001:10001
EXPOSE 8080
# Healthy once the catalog is loaded: /readyz is 503 before (a loopback Host is accepted for probes).
HEALTHCHECK --interval=15s --timeout=3s --start-period=60s \
    CMD ["python", "-c", "import sys, urllib.request as u; sys.exit(u.urlopen('http://127.0.0.1:8080/readyz', timeout=2).status != 200)"]
# SIGTERM stops uvicorn gracefully; SIGHUP re-scans the skills (docs/operations.md).
STOPSIGNAL SIGTERM
ENTRYPOINT ["skills-core", "serve", "--http", "0.0.0.0:8080"]
CMD ["/skills"]
