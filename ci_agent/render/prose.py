"""The prose the model reads, kept as Jinja2 templates in `ci_agent/templates/`.

Code chooses a template and fills it; the words live in the template. A whole text (the system
prompt, the user turn) is a template rendered as it stands; the short pieces of one subject (the
tool errors, the context's notes, the conversation's replies) are the macros of one template
file, called by name through `Prose`.

Markdown for a model, not HTML: no autoescape. A missing value is an error (StrictUndefined),
never an empty string in a prompt. Macros end with `{%- endmacro %}`, so a piece carries no
newline of the template file unless it writes one on purpose.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

import jinja2

PACKAGE = "ci_agent"
FOLDER = "templates"

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader(PACKAGE, FOLDER),
    autoescape=False,  # Markdown for a model, not HTML
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)
# Python's quoting of a value, as the model has always been shown names it gave: 'a b.py'.
_ENV.filters["repr"] = repr


def render_template(name: str, **values: Any) -> str:
    """The template `name` rendered with `values`."""
    return _ENV.get_template(name).render(**values)


@cache
def _module(name: str) -> Any:
    return _ENV.get_template(name).module


class Prose:
    """The macros of one template file: `Prose("tools.md.j2")("not_a_file", path=p)`."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, macro: str, **values: Any) -> str:
        return str(getattr(_module(self.name), macro)(**values))

    def macros(self) -> set[str]:
        """The names of the macros the file defines (for the tests that every one is used)."""
        return {n for n in dir(_module(self.name)) if not n.startswith("_")}


def template_json(name: str) -> Any:
    """A JSON data file that sits beside the templates (the tool schemas)."""
    return json.loads(resources.files(PACKAGE).joinpath(FOLDER, name).read_text(encoding="utf-8"))
