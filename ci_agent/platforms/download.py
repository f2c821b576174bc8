"""Forge-neutral handling of downloaded bytes: bounded streaming and safe zip extraction.

Artifacts are written by whatever ran in CI, so a zip is hostile input: members may try to
escape the destination (`../x`, `/etc/x`, `C:\\x`), be symlinks, or be bombs. An archive with any
such member is refused whole (nothing of it is extracted), and sizes are counted as bytes are
actually written, never trusted from the zip's own header.
"""

from __future__ import annotations

import re
import shutil
import stat
import tempfile
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path, PurePosixPath

from ci_agent.engine.forge import Artifact, Limits

_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
_CHUNK = 1024 * 1024


class UnsafeArchive(ValueError):
    """The archive was refused; the message names the member and the reason."""


def safe_name(name: str, fallback: str = "unnamed") -> str:
    """A single path component for a job or artifact name chosen by someone else."""
    cleaned = _UNSAFE_NAME.sub("_", name).strip("._")[:100]
    return cleaned or fallback


def stream_to_file(chunks: Iterable[bytes], path: Path, max_bytes: int) -> bool:
    """Write chunks to `path`, keeping at most `max_bytes`; True when the input was longer."""
    written = 0
    with path.open("wb") as out:
        for chunk in chunks:
            if not chunk:
                continue
            room = max_bytes - written
            if len(chunk) > room:
                out.write(chunk[:room])
                return True
            out.write(chunk)
            written += len(chunk)
    return False


def too_big(limits: Limits, what: str = "archive") -> str:
    """Why an artifact was not downloaded: its archive is over `Limits.max_archive_bytes`."""
    return f"the {what} is larger than {limits.max_archive_bytes} bytes"


def unpack(name: str, zip_path: Path, target: Path, limits: Limits) -> Artifact:
    """Artifact `name` extracted from `zip_path` under `target`, or refused whole, saying why."""
    try:
        extract_zip(zip_path, target, limits)
    except UnsafeArchive as error:
        return Artifact(name, None, f"refused: {error}")
    return Artifact(name, target)


def download_and_unpack(name: str, fetch: Callable[[Path], bool], target: Path, limits: Limits,
                        what: str = "archive") -> Artifact:
    """Artifact `name`: `fetch(zip_path)` writes its zip into a temporary folder (True when the
    zip was cut at the size cap: then refused), which is extracted under `target`."""
    with tempfile.TemporaryDirectory(prefix="ci-agent-artifact-") as tmp:
        zip_path = Path(tmp) / "artifact.zip"
        if fetch(zip_path):
            return Artifact(name, None, too_big(limits, what))
        return unpack(name, zip_path, target, limits)


def _member_path(info: zipfile.ZipInfo) -> PurePosixPath:
    name = info.filename
    if "\\" in name or "\x00" in name:
        raise UnsafeArchive(f"member {name!r} has a backslash or NUL in its name")
    path = PurePosixPath(name)
    if path.is_absolute() or re.match(r"^[A-Za-z]:", name):
        raise UnsafeArchive(f"member {name!r} is an absolute path")
    if any(part == ".." for part in path.parts):
        raise UnsafeArchive(f"member {name!r} escapes the destination (..)")
    mode = info.external_attr >> 16
    if stat.S_ISLNK(mode):
        raise UnsafeArchive(f"member {name!r} is a symbolic link")
    # Zips written without Unix type bits (Python's writestr, Windows tools) carry 0 here.
    if stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR):
        raise UnsafeArchive(f"member {name!r} is not a regular file")
    return path


def check_zip(archive: zipfile.ZipFile, limits: Limits) -> list[tuple[zipfile.ZipInfo, PurePosixPath]]:
    """Every member with its checked path, or UnsafeArchive for the first bad one."""
    members = archive.infolist()
    if len(members) > limits.max_members:
        raise UnsafeArchive(f"{len(members)} members; at most {limits.max_members}")
    checked = [(info, _member_path(info)) for info in members]
    declared = sum(info.file_size for info in members)
    if declared > limits.max_extracted_bytes:
        raise UnsafeArchive(f"{declared} bytes uncompressed; at most {limits.max_extracted_bytes}")
    return checked


def extract_zip(zip_path: Path, dest: Path, limits: Limits) -> None:
    """Extract into `dest` (created) or raise UnsafeArchive, leaving nothing of it behind."""
    try:
        with zipfile.ZipFile(zip_path) as archive:
            checked = check_zip(archive, limits)
            dest.mkdir(parents=True, exist_ok=True)
            try:
                _extract_checked(archive, checked, dest, limits)
            except BaseException:
                shutil.rmtree(dest, ignore_errors=True)
                raise
    except zipfile.BadZipFile as error:
        raise UnsafeArchive(f"not a valid zip file ({error})") from error


def _extract_checked(archive: zipfile.ZipFile, checked: list[tuple[zipfile.ZipInfo, PurePosixPath]],
                     dest: Path, limits: Limits) -> None:
    total = 0
    root = dest.resolve()
    for info, rel in checked:
        target = (root / rel).resolve()
        if not target.is_relative_to(root):  # belt and braces after the name checks
            raise UnsafeArchive(f"member {info.filename!r} escapes the destination")
        if info.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        written = 0
        with archive.open(info) as src, target.open("wb") as out:
            while chunk := src.read(_CHUNK):
                written += len(chunk)
                total += len(chunk)
                if written > limits.max_member_bytes:
                    raise UnsafeArchive(f"member {info.filename!r} is larger than "
                                        f"{limits.max_member_bytes} bytes")
                if total > limits.max_extracted_bytes:
                    raise UnsafeArchive(f"more than {limits.max_extracted_bytes} bytes uncompressed")
                out.write(chunk)
