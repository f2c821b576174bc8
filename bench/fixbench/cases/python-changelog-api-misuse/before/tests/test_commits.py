from changelog.commits import Commit, kind_of, ticket_of, title_of


def test_ticket_anywhere_in_the_subject():
    assert ticket_of(Commit("a1", "fix: crash on empty cart (SHOP-142)")) == "SHOP-142"


def test_ticket_first_of_two():
    assert ticket_of(Commit("a2", "OPS-7 and OPS-9: rotate keys")) == "OPS-7"


def test_no_ticket():
    assert ticket_of(Commit("a3", "docs: typo")) is None


def test_kind_and_title():
    c = Commit("a4", "feat(cart)!: coupons")
    assert (kind_of(c), title_of(c)) == ("feat", "coupons")
