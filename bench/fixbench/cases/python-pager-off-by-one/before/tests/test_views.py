from catalog.views import render_listing

NAMES = [f"item-{n}" for n in range(1, 8)]


def test_first_page_links_the_next():
    assert render_listing(NAMES, 1, per_page=3).splitlines() == [
        "Page 1/3", "- item-1", "- item-2", "- item-3", "next: ?page=2"]


def test_last_page_is_partial():
    assert render_listing(NAMES, 3, per_page=3).splitlines() == ["Page 3/3", "- item-7"]
