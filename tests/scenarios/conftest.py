"""Scenario fixtures."""

from __future__ import annotations

# Sample templates (`samples/**/*.tmpl`, and the shim) are data, never this project's tests.
collect_ignore_glob = ["samples/*"]
