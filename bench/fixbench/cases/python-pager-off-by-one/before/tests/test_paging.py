import pytest

from catalog.paging import page_count, paginate


@pytest.mark.parametrize(("total", "per_page", "pages"), [(0, 20, 1), (1, 20, 1), (20, 20, 1), (21, 20, 2), (45, 10, 5)])
def test_page_count(total, per_page, pages):
    assert page_count(total, per_page) == pages


def test_last_page_holds_the_rest():
    page = paginate(list(range(45)), 5, per_page=10)
    assert list(page.items) == [40, 41, 42, 43, 44]
    assert not page.has_next


def test_page_out_of_range():
    with pytest.raises(IndexError):
        paginate(list(range(5)), 2, per_page=5)
