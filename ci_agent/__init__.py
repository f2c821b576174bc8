"""ci-agent: turns a red pipeline into a reviewed fix."""

__version__ = "0.1.0"
