"""The image, built once per session (buildah's cache makes a rebuild seconds), and a fresh
working container per test, as every CI job gets one."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.image import buildah


@pytest.fixture(scope="session")
def image() -> buildah.Image:
    try:
        return buildah.build_image()
    except buildah.Unavailable as exc:
        pytest.skip(f"cannot build images on this machine: {exc}")
    except buildah.BuildFailed as exc:
        pytest.fail(f"the Dockerfile does not build: {exc}")


@pytest.fixture
def container(image: buildah.Image) -> Iterator[str]:
    with buildah.working_container(image) as name:
        yield name
