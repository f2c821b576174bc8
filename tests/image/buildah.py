"""Build the project's Dockerfile and run the image for real, without a Docker engine.

buildah builds and runs as root with chroot isolation (no daemon, no setrlimit, which `podman run`
needs and these machines refuse). There is no registry for images here, so the published base
(`python:3.12-slim`, the Dockerfile's default BASE_IMAGE) is replaced by a Debian bookworm base made
with debootstrap plus Debian's python3-venv, cached between runs.

Environment problems (not root, tools not installable, Debian mirror unreachable) raise
`Unavailable` naming the failing command and its stderr, which the tests turn into a skip; a
failing image build is our bug and raises `BuildFailed`.

By hand: `python -m tests.image.buildah` builds and prints the image id.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
CACHE_DIR = Path(os.environ.get("CI_AGENT_IMAGE_CACHE", "/var/tmp/ci-agent-image-cache"))
DEBIAN_MIRROR = os.environ.get("CI_AGENT_DEBIAN_MIRROR", "http://deb.debian.org/debian")
# minbase keeps the base small; python3-venv brings python3 and ensurepip, as python:*-slim has.
DEBOOTSTRAP_ARGS = ("--variant=minbase", "--include=python3-venv", "bookworm")
BASE_REPO = "localhost/ci-agent-test-base"
IMAGE_TAG = "localhost/ci-agent:test"
# What official Debian-based images set; a debootstrap tarball carries no image config at all.
BASE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# Where the build's pip finds the host's CA bundle (a TLS-intercepting proxy signs PyPI here).
BUILD_CA_PATH = "/etc/ssl/certs/host-ca.crt"
APT_PACKAGES = ("buildah", "debootstrap")
PROXY_ARGS = ("http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY")


class Unavailable(Exception):
    """This machine cannot build images; the message says which command failed and why."""


class BuildFailed(Exception):
    """`buildah bud` failed on the project's Dockerfile."""


@dataclass(frozen=True)
class Image:
    id: str
    entrypoint: tuple[str, ...]
    cmd: tuple[str, ...]
    working_dir: str
    env: tuple[str, ...]
    labels: Mapping[str, str]


def _run(argv: Sequence[str], timeout: float,
         env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, check=False,
                          env=None if env is None else dict(env))


def _describe(argv: Sequence[str], result: subprocess.CompletedProcess[str]) -> str:
    tail = (result.stderr or result.stdout).strip()[-2000:]
    return f"`{' '.join(argv)}` exited {result.returncode}: {tail}"


def _require(argv: Sequence[str], timeout: float,
             env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run an environment-preparing command; its failure means this machine cannot do images."""
    try:
        result = _run(argv, timeout, env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Unavailable(f"`{' '.join(argv)}` could not run: {exc}") from exc
    if result.returncode != 0:
        raise Unavailable(_describe(argv, result))
    return result


def ensure_tools() -> None:
    """Install buildah and debootstrap with apt when missing (root only: CI runs as root)."""
    missing = [name for name in APT_PACKAGES if shutil.which(name) is None]
    if not missing:
        return
    if os.geteuid() != 0:
        raise Unavailable(f"{', '.join(missing)} not installed and not root, so apt-get cannot install it")
    if shutil.which("apt-get") is None:
        raise Unavailable(f"{', '.join(missing)} not installed and there is no apt-get")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    _require(["apt-get", "update", "-qq"], timeout=600, env=env)
    _require(["apt-get", "install", "-y", "-qq", *APT_PACKAGES], timeout=900, env=env)


@contextmanager
def _cache_lock() -> Iterator[None]:
    """Several test sessions may share the machine: one makes the base, the others wait for it."""
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    with (CACHE_DIR / "lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def base_tag() -> str:
    """The base's tag names its recipe, so changing the recipe makes a new base, never a stale one."""
    recipe = " ".join((*DEBOOTSTRAP_ARGS, DEBIAN_MIRROR, BASE_PATH))
    return f"{BASE_REPO}:bookworm-{hashlib.sha256(recipe.encode()).hexdigest()[:12]}"


def _image_exists(ref: str) -> bool:
    return _run(["buildah", "inspect", "--type", "image", ref], timeout=60).returncode == 0


def _debootstrap_tarball(tarball: Path) -> None:
    rootfs = CACHE_DIR / "rootfs.tmp"
    shutil.rmtree(rootfs, ignore_errors=True)
    try:
        _require(["debootstrap", *DEBOOTSTRAP_ARGS, str(rootfs), DEBIAN_MIRROR], timeout=1200)
        # The downloaded .deb files are half the tree and no image needs them.
        for deb in (rootfs / "var/cache/apt/archives").glob("*.deb"):
            deb.unlink()
        partial = tarball.with_suffix(".partial")
        _require(["tar", "-C", str(rootfs), "-cf", str(partial), "."], timeout=600)
        partial.rename(tarball)
    finally:
        shutil.rmtree(rootfs, ignore_errors=True)


def _import_tarball(tarball: Path, tag: str) -> None:
    """`podman import` without podman: `buildah add` unpacks a local tar archive into the rootfs."""
    container = _require(["buildah", "from", "scratch"], timeout=120).stdout.strip()
    try:
        _require(["buildah", "add", container, str(tarball), "/"], timeout=600)
        _require(["buildah", "config", "--env", f"PATH={BASE_PATH}", "--cmd", "/bin/bash", container], 60)
        _require(["buildah", "commit", "--quiet", container, tag], timeout=600)
    finally:
        _run(["buildah", "rm", container], timeout=120)


def ensure_base() -> str:
    """The local stand-in for python:3.12-slim: bookworm minbase + python3-venv, made once."""
    tag = base_tag()
    with _cache_lock():
        if _image_exists(tag):
            return tag
        tarball = CACHE_DIR / f"{tag.rsplit(':', 1)[1]}.tar"
        if not tarball.exists():
            _debootstrap_tarball(tarball)
        _import_tarball(tarball, tag)
    return tag


def _host_ca_bundle() -> Path | None:
    for candidate in (os.environ.get("PIP_CERT"), os.environ.get("SSL_CERT_FILE"),
                      "/etc/ssl/certs/ca-certificates.crt"):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def build_argv(base: str, iidfile: Path, context: Path = REPO_ROOT) -> list[str]:
    argv = ["buildah", "bud", "--isolation", "chroot", "--layers", "--iidfile", str(iidfile),
            "--build-arg", f"BASE_IMAGE={base}", "-t", IMAGE_TAG]
    bundle = _host_ca_bundle()
    if bundle is not None:
        argv += ["-v", f"{bundle}:{BUILD_CA_PATH}:ro", "--build-arg", f"PIP_CERT={BUILD_CA_PATH}"]
    for name in PROXY_ARGS:
        if name in os.environ:
            argv += ["--build-arg", f"{name}={os.environ[name]}"]
    return [*argv, "-f", str(context / "Dockerfile"), str(context)]


def inspect_image(image_id: str) -> Image:
    result = _run(["buildah", "inspect", "--type", "image", image_id], timeout=60)
    if result.returncode != 0:
        raise BuildFailed(_describe(["buildah", "inspect", image_id], result))
    config = json.loads(result.stdout)["OCIv1"]["config"]
    return Image(
        id=image_id,
        entrypoint=tuple(config.get("Entrypoint") or ()),
        cmd=tuple(config.get("Cmd") or ()),
        working_dir=config.get("WorkingDir", ""),
        env=tuple(config.get("Env") or ()),
        labels=dict(config.get("Labels") or {}),
    )


def build_image() -> Image:
    """Build the repository's Dockerfile on the local base. The id (not the shared tag) is
    returned, so a concurrent session retagging IMAGE_TAG cannot swap the image under a test."""
    ensure_tools()
    base = ensure_base()
    with tempfile.TemporaryDirectory() as scratch:
        iidfile = Path(scratch) / "iid"
        argv = build_argv(base, iidfile)
        result = _run(argv, timeout=1200)
        if result.returncode != 0:
            raise BuildFailed(_describe(argv, result))
        image_id = iidfile.read_text().strip()
    return inspect_image(image_id.removeprefix("sha256:"))


@contextmanager
def working_container(image: Image) -> Iterator[str]:
    """A fresh container per use, as each workflow step gets one."""
    result = _run(["buildah", "from", "--pull-never", image.id], timeout=120)
    if result.returncode != 0:
        raise BuildFailed(_describe(["buildah", "from", image.id], result))
    container = result.stdout.strip()
    try:
        yield container
    finally:
        _run(["buildah", "rm", container], timeout=120)


def run_in(container: str, command: Sequence[str], *, env: Mapping[str, str] | None = None,
           volumes: Mapping[Path, str] | None = None, workdir: str | None = None,
           timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run one command in the container. `buildah run` ignores ENTRYPOINT: callers that mean
    the entrypoint prepend `Image.entrypoint` themselves, as `docker run` would."""
    argv = ["buildah", "run", "--isolation", "chroot"]
    for host, guest in (volumes or {}).items():
        argv += ["-v", f"{host}:{guest}"]
    for name, value in (env or {}).items():
        argv += ["-e", f"{name}={value}"]
    if workdir is not None:
        argv += ["--workingdir", workdir]
    return _run([*argv, container, "--", *command], timeout)


def main() -> int:
    try:
        image = build_image()
    except (Unavailable, BuildFailed) as exc:
        print(exc, file=sys.stderr)
        return 1
    print(image.id)
    return 0


if __name__ == "__main__":
    sys.exit(main())
