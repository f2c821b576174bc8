from __future__ import annotations

from collections.abc import Iterable

from accounts.profile import display_name
from accounts.users import User


def mention_list(users: Iterable[User]) -> str:
    names = sorted(display_name(user) for user in users)
    if len(names) <= 2:
        return " and ".join(names)
    return ", ".join(names[:-1]) + f" and {names[-1]}"
