"""Artifact archives as the forges serve them, built from a folder on disk."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path


def zip_folder(root: Path) -> bytes:
    """A zip of every file below `root`, named by its path relative to `root` (as GitHub and
    GitLab store a job's artifacts: relative to the workspace / project directory)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(root).as_posix())
    return buf.getvalue()
