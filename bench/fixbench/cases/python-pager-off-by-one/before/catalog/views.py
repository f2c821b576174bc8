from __future__ import annotations

from collections.abc import Sequence

from catalog.paging import paginate


def render_listing(names: Sequence[str], number: int, per_page: int = 20) -> str:
    page = paginate(names, number, per_page)
    lines = [f"Page {page.number}/{page.total_pages}"]
    lines += [f"- {name}" for name in page.items]
    if page.has_next:
        lines.append(f"next: ?page={page.number + 1}")
    return "\n".join(lines)
