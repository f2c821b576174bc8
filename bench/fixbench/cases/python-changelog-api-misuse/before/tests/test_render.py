from changelog.commits import Commit
from changelog.render import render


def test_render_groups_and_tags():
    commits = [Commit("1", "feat: gift cards (SHOP-200)"), Commit("2", "chore: bump deps"),
               Commit("3", "fix: rounding in totals (SHOP-198)")]
    assert render(commits) == ("## Features\n- gift cards (SHOP-200) [SHOP-200]\n\n"
                               "## Fixes\n- rounding in totals (SHOP-198) [SHOP-198]\n")
