"""Writing subagent files in an editor: the library behind wave-ls's standard LSP features
for ``.wave/agents/*.md`` (it knows nothing of LSP; ``wave_ls/server/authoring_feature.py``
adapts it).

- ``place``: whether a path is an agent file the server loads, and from which directory.
- ``check``: every problem of a file's text (the loader's own, plus the editor's lints).
- ``fixes``: where a problem is, and its quick fixes.
- ``outline``: the frontmatter's keys and the prompt's headings, read tolerantly.
- ``completion``, ``hover``, ``symbols``: the other features, from the outline.
- ``template``: the file ``Wave: New Subagent`` writes.

Positions are 0-based lines and Python-index columns; the server converts them to the
position encoding negotiated with the client. See docs/agents.md, "In the editor".
"""

from wave_ls.agents.authoring.check import CheckResult, Codes, check_agent_text
from wave_ls.agents.authoring.completion import CompletionFacts, Suggestion, complete
from wave_ls.agents.authoring.fixes import Fix, TextEdit, problem_range, quick_fixes
from wave_ls.agents.authoring.hover import HoverText, hover
from wave_ls.agents.authoring.outline import Outline, TextRange, split_lines
from wave_ls.agents.authoring.place import AgentPlace, agent_place
from wave_ls.agents.authoring.symbols import Fold, Symbol, document_symbols, folding_ranges
from wave_ls.agents.authoring.template import TemplateError, write_new_subagent

__all__ = [
    "AgentPlace",
    "CheckResult",
    "Codes",
    "CompletionFacts",
    "Fix",
    "Fold",
    "HoverText",
    "Outline",
    "Suggestion",
    "Symbol",
    "TemplateError",
    "TextEdit",
    "TextRange",
    "agent_place",
    "check_agent_text",
    "complete",
    "document_symbols",
    "folding_ranges",
    "hover",
    "problem_range",
    "quick_fixes",
    "split_lines",
    "write_new_subagent",
]
