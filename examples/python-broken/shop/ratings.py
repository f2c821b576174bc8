"""Customer ratings of a product, one to five stars."""

from __future__ import annotations

MAX_STARS = 5


def average_rating(ratings: list[int]) -> float:
    """Mean star rating; 0.0 while a product has no ratings yet."""
    return sum(ratings) / len(ratings)


def stars(ratings: list[int]) -> str:
    """The rating rounded to half stars, as the product page shows it."""
    return f"{round(average_rating(ratings) * 2) / 2:.1f} of {MAX_STARS} stars"
