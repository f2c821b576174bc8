# The image every containerized ci-agent step runs: Python slim + git.
FROM python:3.11-slim-bookworm

# git is the only system tool ci-agent needs (worktrees, apply --check, commit, push).
# Debian's security updates replace old package versions, so an exact pin would break the build.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/* \
    && git config --system --add safe.directory '*'

WORKDIR /opt/ci-agent
COPY pyproject.toml README.md ./
COPY ci_agent ./ci_agent
RUN pip install --no-cache-dir --disable-pip-version-check .

# CI runners mount the checkout owned by another uid; safe.directory above allows git to work there.
WORKDIR /github/workspace
ENTRYPOINT ["ci-agent"]
CMD ["--help"]
