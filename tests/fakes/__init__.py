"""Loopback HTTP fakes of external services (DESIGN.md §5)."""
