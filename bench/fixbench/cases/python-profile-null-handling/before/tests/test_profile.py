from accounts.profile import display_name, greeting
from accounts.users import User, parse_user


def test_nickname_wins():
    assert display_name(User(1, "a@x.org", "Ada Lovelace", "ada")) == "ada"


def test_full_name_without_nickname():
    assert greeting(parse_user({"id": "2", "email": "B@X.ORG", "full_name": "Bo Diddley"})) == "Hello, Bo Diddley!"
