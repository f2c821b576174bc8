"""What the model is shown besides the report: source excerpts and git facts, bounded and clean.

- Excerpts: ±`excerpt_lines` around each in-repo error and each project stack frame of a
  failed test (at most `_FRAMES_PER_FAILURE` per test), merged per file when they overlap or
  touch; around warnings only when they are the failure (no error, no failed test) or sit in an
  error's window. A diagnostic located only by its `[Project.csproj]` marker points at that
  project file. A file named by an error or a failing frame that is at most `whole_file_bytes`
  is shown whole (else its top, for a project file). Only regular files inside the repository
  (real paths checked, so a symlink out of it is refused), never `.git/`, never a file matching
  the exclude globs (`ContextSettings.exclude_globs`, which always include the secret-file globs).
  A path printed relative to a subdirectory the tool ran in is matched to the one tracked file it
  is the tail of (noted), or not shown when several.
- Git: a summary of `git status --porcelain=v2 --branch`, and the history section: the change
  under test (the failing commit against its parent, or a pull request against its merge base
  with `base_ref`): its commit messages, its changed files ranked by relation to the report, and
  their hunks, within `diff_bytes` (`history`, read by `history_read`). Lock, generated,
  vendored, build-output, log and binary files are named, not shown; an initial import is listed.
- Excerpt lines are the file's exact text, redacted, with special characters marked
  (`ci_agent.exact`, so a copied hunk applies); the rest that came from the repository or a log
  is sanitised (`sanitize_untrusted`) then redacted; all of it is rendered inside `fence` blocks.
  The whole rendering stays within `max_bytes`:
  errors and failing frames first, then the diff, then warnings; what does not fit is named in
  an "omitted" note so the model knows to ask for it with its read-only tools.

One job a module: `gather` reads the excerpts and git facts, `fit` keeps what fits in the byte
budget, `render` writes the Markdown (its words are `ci_agent/templates/context.md.j2`).
"""

from ci_agent.context.gather import gather_context
from ci_agent.context.render import render_context
from ci_agent.context.values import Context, Excerpt, GitContext

__all__ = ["Context", "Excerpt", "GitContext", "gather_context", "render_context"]
