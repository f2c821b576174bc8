from __future__ import annotations

from accounts.users import User


def display_name(user: User) -> str:
    """What other users see: the nickname if the user chose one, else the full name."""
    return user.nickname or user.full_name


def greeting(user: User) -> str:
    return f"Hello, {display_name(user)}!"
