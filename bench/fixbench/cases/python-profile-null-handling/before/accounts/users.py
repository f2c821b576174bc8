from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class User:
    id: int
    email: str
    full_name: str
    nickname: str | None = None  # set by the user in their profile; None until then


def parse_user(row: dict[str, object]) -> User:
    nickname = row.get("nickname")
    return User(
        id=int(str(row["id"])),
        email=str(row["email"]).lower(),
        full_name=str(row["full_name"]),
        nickname=str(nickname) if nickname is not None else None,
    )
