"""A tiny shop: product ratings."""
