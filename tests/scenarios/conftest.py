"""Scenario fixtures: the loopback Anthropic fake (tests/fakes)."""

from __future__ import annotations

from tests.fakes.fixtures import anthropic_fake

# Sample templates (`samples/**/*.tmpl`, and the shim) are data, never this project's tests.
collect_ignore_glob = ["samples/*"]

__all__ = ["anthropic_fake"]
