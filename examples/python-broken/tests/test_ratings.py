from shop.ratings import average_rating, stars


def test_average_of_several_ratings() -> None:
    assert average_rating([4, 5]) == 4.5


def test_no_ratings_yet() -> None:
    assert average_rating([]) == 0.0


def test_stars_of_a_new_product() -> None:
    assert stars([]) == "0.0 of 5 stars"


def test_stars_round_to_halves() -> None:
    assert stars([4, 4, 5]) == "4.5 of 5 stars"
