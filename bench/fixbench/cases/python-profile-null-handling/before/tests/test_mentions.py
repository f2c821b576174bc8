from accounts.mentions import mention_list
from accounts.users import User


def test_three_people():
    users = [User(1, "a@x", "Cy Young", None), User(2, "b@x", "Al Green", "al"), User(3, "c@x", "Bea Arthur")]
    assert mention_list(users) == "Bea Arthur, Cy Young and al"
