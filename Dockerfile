# The image every containerized ci-agent step runs: Python + git, ci-agent in a venv.
#
# BASE_IMAGE is the published base. The tests build this same file on a Debian bookworm base
# with Debian's python3 + python3-venv (tests/image/buildah.py), so this file assumes only
# `python3 -m venv` and apt-get, which both bases provide. The base is pinned by digest (the
# multi-arch index of python:3.12-slim), so a rebuild of the same commit gets the same base; bump
# it on purpose (`docker buildx imagetools inspect python:3.12-slim`).
ARG BASE_IMAGE=python:3.12-slim@sha256:78387bc3881b8273120a12ebe6c1ab22b018ccc2c9adf565ae1ac9b536e184ea
FROM ${BASE_IMAGE}

# git is the only system tool ci-agent needs (worktrees, apply --check, commit, push).
# Debian's security updates replace old package versions, so an exact pin would break the build.
# Runners mount the checkout owned by another uid: safe.directory lets git work there.
# ci-agent-sandbox: the unprivileged user a verify command (code a model patched) runs as
# (ci_agent/sandbox.py creates it at run time when an image lacks it).
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/* \
    && git config --system --add safe.directory '*' \
    && useradd --system --user-group --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin ci-agent-sandbox

# Set only where a TLS-intercepting proxy needs its CA (the tests mount the host's bundle).
ARG PIP_CERT
WORKDIR /tmp/ci-agent-src
# Dependencies first, read from pyproject.toml alone, so a source change reuses this layer
# (and the build-system requirements, so the package itself installs without the network).
COPY pyproject.toml ./
RUN python3 -m venv /opt/ci-agent \
    && python3 -c 'import tomllib; p = tomllib.load(open("pyproject.toml", "rb")); \
print("\n".join(p["build-system"]["requires"] + p["project"]["dependencies"]))' > requirements.txt \
    && /opt/ci-agent/bin/pip install --no-cache-dir --disable-pip-version-check -r requirements.txt
COPY README.md ./
COPY ci_agent ./ci_agent
RUN /opt/ci-agent/bin/pip install --no-cache-dir --disable-pip-version-check \
        --no-deps --no-build-isolation . \
    && rm -rf /tmp/ci-agent-src/build /tmp/ci-agent-src/*.egg-info

# Kept equal to pyproject.toml's version by tests/test_packaging.py and tests/image/.
ARG CI_AGENT_VERSION=0.1.0
LABEL org.opencontainers.image.title="ci-agent" \
      org.opencontainers.image.description="Turns a red CI pipeline into a reviewed fix." \
      org.opencontainers.image.version="${CI_AGENT_VERSION}" \
      org.opencontainers.image.licenses="MIT"

ENV PATH="/opt/ci-agent/bin:${PATH}" \
    PYTHONUNBUFFERED=1

# GitHub mounts the workspace here and makes it the working directory; the same for `docker run`.
WORKDIR /github/workspace
ENTRYPOINT ["ci-agent"]
CMD ["--help"]
