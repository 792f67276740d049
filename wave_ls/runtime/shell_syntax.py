"""Shell text as simple commands, read from tree-sitter-bash's syntax tree.

``simple_commands`` parses a command line with tree-sitter-bash and flattens it into the
simple commands that would run: those of pipelines and lists, subshells, groups, ``if`` and
``while`` bodies, and those inside ``$(...)``, backquotes and ``<(...)`` (each becomes a
command of its own, listed before the command that uses its output). Each word says what
the shell leaves of it (quotes removed, expansions kept as written) and whether it can
expand at run time. Whatever the tree does not show with certainty raises ``Unreadable``:
a syntax error, text the tree does not cover, here-documents, arithmetic, ``case``,
function definitions, and the places where tree-sitter reads on and bash does not (a
newline inside a command, ``}2``, ``[ ... ]`` read as an expression: see each check). The
read-only check (``bash_safety``) and the network rule (``bash_network``) decide on these
commands; tests/test_bash_safety_tree.py holds them to the hand-written lexer's verdicts.

tree-sitter is imported on first use (~20-40 ms of imports; a parse costs ~20 us).
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from tree_sitter import Node, Parser


class Word(NamedTuple):
    """One word of a simple command, as the shell would pass it."""

    text: str  # quotes removed; expansions kept as written ("$HOME", "$(...)")
    literal: bool  # nothing in it expands: the shell passes exactly ``text``
    # It may expand to something starting with "-" or to several words, so a program could
    # read it as an option ("$X", "*", "{-i,a}", unquoted "a$X"); "src/*.py" and "a$X" in
    # quotes are not risky: their expansion keeps the literal start.
    risky: bool
    quoted: bool  # some part was quoted or escaped
    # It may become several words: an unquoted expansion, glob or brace expansion.
    splits: bool = False


@dataclass
class Simple:
    """A simple command: its words (assignments first) and its redirections."""

    words: list[Word] = field(default_factory=list)
    redirects: list[tuple[str, Word]] = field(default_factory=list)  # ("2>", target)


class Unreadable(Exception):
    """The command cannot be read with certainty; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


MAX_BYTES = 16 * 1024


def simple_commands(command: str) -> list[Simple]:
    """The simple commands of ``command``; raises ``Unreadable`` (or RecursionError)."""
    if len(command) > MAX_BYTES or len(command.encode(errors="replace")) > MAX_BYTES:
        raise Unreadable(f"the command is too long to check (over {MAX_BYTES // 1024} KB)")
    return _Reader(command).commands


_parser: Parser | None = None
_parser_lock = threading.Lock()  # a Parser is not safe to share between threads


def _parse(source: bytes) -> Node:
    global _parser
    with _parser_lock:
        if _parser is None:
            import tree_sitter
            import tree_sitter_bash

            _parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
        return _parser.parse(source).root_node


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


_REDIRECTS = _names("file_redirect herestring_redirect heredoc_redirect")
# Nodes that only hold statements (and punctuation, skipped).
_CONTAINERS = _names(
    "program list pipeline subshell compound_statement negated_command do_group if_statement "
    "elif_clause else_clause while_statement"
)
_SUBSTITUTION = re.compile(rb"[`(]")  # "(": "$(", "<(", or a "(" bash may read otherwise
_BARE_BACKQUOTE = re.compile(r"(?<!\\)(\\\\)*`")
_OUTSIDE_THE_BMP = re.compile("[\U00010000-\U0010ffff\ud800-\udfff]")  # and surrogates
_ANSI_C = re.compile(r"\$'(\\.|[^\\'])*'", re.S)
_SPECIAL_BARE = re.compile(r"[\\`\s*?\[$;&|<>()]")
_KEYWORDS = _names("if then else elif fi do done while until for in select case esac")
_BREAKS = frozenset(b" \t\n;&|()<>")
_BRACE_EXPANSION = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")
_EXPANDS_AFTER_DOLLAR = re.compile(r"[A-Za-z0-9_?#@*$!{('\"-]")
# Inside "${...}", what makes bash run code or set variables that the tree does not show:
# "${!x}" expands the value of x as a name ("a[$(touch f)]" runs touch), "${x@P}" expands
# x's value as a prompt (with its substitutions), and an array subscript or a substring
# offset is arithmetic ("${a[PATH=0]}" sets PATH; "${a[i]}" evaluates the value of i).
_NAME = r"(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[-@*#?$!])"
_EXPANSION_FORMS = (
    (re.compile(r"\$\{!"), "indirect expansion `${!...}`"),
    (re.compile(rf"\$\{{#?{_NAME}(?:\[[^\]]*\])?@"), "the transformation `${...@...}`"),
    (
        re.compile(r"\$\{#?[A-Za-z_][A-Za-z0-9_]*\[(?!(?:@|\*|-?[0-9]+)\])"),
        "an array subscript that is not a number",
    ),
    (
        re.compile(
            rf"\$\{{#?{_NAME}(?:\[[^\]]*\])?:(?![-=?+])"
            r"(?!\s*-?[0-9]+\s*(?::\s*-?[0-9]+\s*)?\})"
        ),
        "a substring offset that is not a number",
    ),
    # "${GIT_DIR:=x}" sets the variable for the commands after it, as "GIT_DIR=x" would.
    (re.compile(rf"\$\{{{_NAME}(?:\[[^\]]*\])?:?="), "the assignment `${...=...}`"),
)
_REFUSED_NODES = {
    "heredoc_redirect": "here-documents (`<<`) are not supported in read-only mode",
    "arithmetic_expansion": "arithmetic expansion `$((...))` is not supported in read-only mode",
    "function_definition": "function definitions are not supported in read-only mode",
    "c_style_for_statement": "this `for` loop form is not supported in read-only mode",
}


@dataclass
class _WordState:
    out: list[str] = field(default_factory=list)
    bare: list[str] = field(default_factory=list)  # unquoted characters (brace expansion)
    literal: bool = True
    risky: bool = False
    quoted: bool = False
    splits: bool = False
    started: bool = False  # some text is in ``out`` (a flag: joining it each time is O(n^2))
    end: int = 0  # where the word ends in the source (a glob's closing "]")

    def add(self, text: str) -> None:
        """Append what the shell leaves of the next part of the word."""
        self.out.append(text)
        self.started = self.started or bool(text)

    def expansion(self, in_quotes: bool) -> None:
        """Record an expansion at the current position of the word."""
        self.literal = False
        if not in_quotes:
            self.splits = True
        if not in_quotes or not self.started:
            self.risky = True


class _Reader:
    """Walks one parsed command line; ``commands`` is the flat list of simple commands."""

    def __init__(self, text: str) -> None:
        if outside := _OUTSIDE_THE_BMP.search(text):
            # tree-sitter-bash 0.25.1 reads out of bounds on some of them ("a{" then
            # U+D65D9 crashes the process): they are not parsed at all.
            raise Unreadable(f"the character U+{ord(outside.group()):04X} is not read")
        self.source = text.encode()
        self.commands: list[Simple] = []
        root = _parse(self.source)
        if root.has_error:
            raise Unreadable(_syntax_error(text))
        self._statement(root)
        self._check_covered(root)

    def _text(self, node: Node) -> str:
        return self.source[node.start_byte : node.end_byte].decode()

    def _check_covered(self, root: Node) -> None:
        """Refuse text the tree holds in no token (it would run, unread by us)."""
        at = 0
        for leaf in _leaves(root):
            raw = self.source[at : leaf.start_byte]
            gap = raw.replace(b"\\\n", b"")
            if gap.strip(b" \t\n"):  # "\r" is a blank to tree-sitter, a letter to bash
                raise Unreadable(f"{gap.strip(b' ')!r} cannot be read")
            if (
                raw
                and not gap
                and at > 0
                and not _BREAKS.intersection(
                    self.source[at - 1 : at] + self.source[leaf.start_byte : leaf.start_byte + 1]
                )
            ):
                # bash joins the two sides into one word ("-dele\\<newline>te" is -delete)
                raise Unreadable("a line continuation inside a word cannot be read")
            if (
                leaf.type == "comment"
                and leaf.start_byte
                and not _BREAKS.intersection(self.source[leaf.start_byte - 1 : leaf.start_byte])
            ):
                raise Unreadable("a `#` inside a word cannot be read")  # "]#x" is one word
            if not leaf.is_named and leaf.type in _KEYWORDS:
                around = (
                    self.source[leaf.start_byte - 1 : leaf.start_byte] if leaf.start_byte else b""
                )
                around += self.source[leaf.end_byte : leaf.end_byte + 1]
                if len(around.strip(b" \t\n;&|()<>")) > 0:
                    # "for f ins/a/b/": tree-sitter reads "in"; for bash it is one word
                    raise Unreadable(f"the keyword `{leaf.type}` inside a word cannot be read")
            at = max(at, leaf.end_byte)
        if self.source[at:].replace(b"\\\n", b"").strip():
            raise Unreadable("the end of the command cannot be read")

    # ----------------------------------------------------------------- statements

    def _statement(self, node: Node) -> None:
        kind = node.type
        if not node.is_named or kind == "comment":
            return
        if kind in _REFUSED_NODES:
            raise Unreadable(_REFUSED_NODES[kind])
        if kind in _CONTAINERS:
            first = node.children[0] if node.children else None
            if first is not None and first.type == "((":
                raise Unreadable("arithmetic `((...))` is not supported in read-only mode")
            if first is not None and first.type in ("!", "{") and not self._spaced(first.end_byte):
                # "!x" and "{}" are words to bash (a command name), not "!" or a group.
                raise Unreadable(f"the command `{self._text(node).split()[0]}` cannot be read")
            last = node.children[-1] if node.children else None
            if last is not None and last.type in ("}", ")") and not self._ends_word(last.end_byte):
                # "{ ls; }2>&1": "}2" is one word to bash, the group is not closed.
                raise Unreadable(f"`{last.type}` glued to a word cannot be read")
            for child in node.children:
                self._statement(child)
        elif kind == "command":
            self._command(node.children, [])
        elif kind == "redirected_statement":
            self._redirected(node)
        elif kind in ("variable_assignment", "variable_assignments"):
            pieces = node.children if kind == "variable_assignments" else [node]
            self.commands.append(Simple([self._word([p]) for p in pieces if p.is_named]))
        elif kind in ("declaration_command", "unset_command", "case_statement"):
            self.commands.append(Simple([_literal(node.children[0].type)]))
        elif kind == "test_command":
            self._test(node)
        elif kind == "for_statement":
            self._for(node)
        else:
            raise Unreadable(f"`{kind.replace('_', ' ')}` is not supported in read-only mode")

    def _one_line(self, nodes: list[Node]) -> None:
        """Refuse a newline between the parts of one command: bash ends the command there
        ("<" then a newline is a syntax error), tree-sitter reads on."""
        for left, right in itertools.pairwise(nodes):
            if b"\n" in self.source[left.end_byte : right.start_byte].replace(b"\\\n", b""):
                raise Unreadable("a newline inside one command cannot be read")

    def _redirected(self, node: Node) -> None:
        self._one_line(node.children)
        body = [c for c in node.children if c.is_named and c.type not in _REDIRECTS]
        redirects = [c for c in node.children if c.type in _REDIRECTS]
        if len(body) == 1 and body[0].type == "command":
            self._command(body[0].children, redirects)
            return
        for statement in body:
            self._statement(statement)
        simple = Simple()
        self._redirects(redirects, simple)
        if simple.words:  # "{ ls; } < f ls": a syntax error to bash
            raise Unreadable(f"`{simple.words[0].text}` after a redirection cannot be read")
        self.commands.append(simple)

    def _command(self, children: list[Node], redirects: list[Node]) -> None:
        self._one_line(children)
        simple = Simple()
        pieces = [c for c in children if c.type not in _REDIRECTS]
        simple.words = [self._word(group) for group in self._words(pieces)]
        self._redirects([c for c in children if c.type in _REDIRECTS] + redirects, simple)
        self.commands.append(simple)

    def _redirects(self, nodes: list[Node], simple: Simple) -> None:
        for node in nodes:
            if node.type == "heredoc_redirect":
                raise Unreadable(_REFUSED_NODES["heredoc_redirect"])
            self._one_line(node.children)
            fd = ""
            op = ""
            op_end = 0
            targets: list[Node] = []
            for child in node.children:
                if child.type == "file_descriptor":
                    fd = self._text(child)
                    op_start = child.next_sibling.start_byte if child.next_sibling else -1
                    if not fd.isdigit() or child.end_byte != op_start:
                        raise Unreadable(f"the redirection `{self._text(node)}` cannot be read")
                elif not child.is_named:
                    op, op_end = child.type, child.end_byte
                else:
                    targets.append(child)
            groups = self._words(targets)
            if op in (">&-", "<&-"):  # closes a descriptor
                after = self.source[op_end : op_end + 1]
                if after and after not in b" \t\n;&|)":  # "2>&-x": bash reads on
                    raise Unreadable(f"the redirection `{self._text(node)}` cannot be read")
                op, target = op[:-1], _literal("-")
            elif not groups:
                raise Unreadable(f"redirection `{fd}{op}` without a target")
            else:
                target = self._word(groups.pop(0))
            simple.redirects.append((fd + op, target))
            # "ls > f b": tree-sitter gives "b" to the redirection; it is ls's argument.
            simple.words.extend(self._word(group) for group in groups)

    def _test(self, node: Node) -> None:
        first, last = node.children[0], node.children[-1]
        if first.type != "[":  # "[[": not a program, its own syntax
            self.commands.append(Simple([_literal(first.type)]))
            return
        if not (self._spaced(first.end_byte) and self._spaced(last.start_byte - 1)):
            # "[a]" is a glob bash runs as a command name, not a test.
            raise Unreadable(f"the command name `{self._text(node)}` is only known at run time")
        # "[" is a program like any other: tree-sitter reads its operands as an expression
        # ("$X /dev/tcp/h" a division, "a > b" a comparison), bash as words and
        # redirections. Read again as the same command named "test", which tree-sitter
        # reads as bash does.
        inner = self.source[first.end_byte : node.end_byte].decode()
        self.commands.extend(_Reader("test" + inner).commands)

    def _ends_word(self, at: int) -> bool:
        return at >= len(self.source) or self.source[at] in _BREAKS

    def _spaced(self, at: int) -> bool:
        return self.source[at : at + 1] in (b" ", b"\t", b"\n")

    def _for(self, node: Node) -> None:
        keyword = node.children[0].type
        words = [_literal(keyword)]
        head = [c for c in node.children if c.type not in (";", "do_group", "comment")]
        self._one_line(head)  # "for" and its name on one line (and here its words too)
        for child in node.children[1:]:
            if child.type == "do_group":
                self.commands.append(Simple(words))
                self._statement(child)
                return
            if child.type == "in":
                words.append(_literal("in"))
            elif child.is_named:
                words.append(self._word([child]))
        raise Unreadable(f"this `{keyword}` loop has no body")

    # ----------------------------------------------------------------- words

    def _words(self, pieces: list[Node]) -> list[list[Node]]:
        """Group the pieces the shell reads as one word: tree-sitter may split one word
        into adjacent siblings (``$"x"`` is a ``$`` and a string)."""
        groups: list[list[Node]] = []
        for piece in pieces:
            if piece.type == "comment":
                continue
            if groups and groups[-1][-1].end_byte == piece.start_byte:
                groups[-1].append(piece)
            else:
                groups.append([piece])
        return groups

    def _word(self, pieces: list[Node]) -> Word:
        st = _WordState(end=pieces[-1].end_byte)
        self._sequence(pieces, pieces[0].start_byte, st, in_double=False)
        text = "".join(st.out)
        brace = _BRACE_EXPANSION.search("".join(st.bare))
        if brace:
            st.literal = False
            st.splits = True
            # "{-delete,'x'}" is "-delete x": quotes elsewhere in the word do not matter.
            st.risky |= brace.start() == 0 and text.startswith("{")
        if not st.literal and text.startswith("-"):
            st.risky = True  # "-$X" can become any option
        return Word(text, st.literal, st.risky, st.quoted, st.splits)

    def _piece(self, node: Node, st: _WordState, in_double: bool) -> None:
        kind = node.type
        if kind in _REFUSED_NODES:
            raise Unreadable(_REFUSED_NODES[kind])
        if kind in ("word", "number") or not node.is_named:
            if in_double:
                self._double_quoted_text(self._text(node), node.start_byte, st)
            else:
                self._bare_text(self._text(node), node.start_byte, st)
        elif kind in ("command_name", "concatenation", "variable_assignment"):
            self._children(node, st, in_double)
        elif kind == "variable_name":
            st.add(self._text(node))
        elif kind in ("string", "translated_string"):
            st.quoted = True
            self._children(node, st, in_double=True)
        elif kind == "string_content":
            self._double_quoted_text(self._text(node), node.start_byte, st)
        elif kind == "raw_string":
            st.quoted = True
            st.add(self._text(node)[1:-1])
        elif kind == "ansi_c_string":
            # $'...': escapes are not decoded, so "\x72m" never reads as "rm", and the
            # word is not literal, so no checker trusts its text.
            text = self._text(node)
            if not _ANSI_C.fullmatch(text):  # "$'\'" is unterminated to bash
                raise Unreadable(f"the quote `{text}` cannot be read")
            st.expansion(in_quotes=True)
            st.quoted = True
            st.add(text)
        elif kind in ("simple_expansion", "expansion"):
            st.expansion(in_double)
            self._expansion(node)
            st.add(self._text(node))
        elif kind == "command_substitution":
            st.expansion(in_double)
            st.add(self._substitution(node))
        elif kind == "process_substitution":
            st.expansion(in_quotes=True)  # a /dev/fd path
            self._substitution(node)
            st.add("/dev/fd/63")
        elif kind == "brace_expression":
            text = self._text(node)
            st.add(text)
            st.bare.append(text)
        else:
            raise Unreadable(f"`{self._text(node)}` cannot be checked")

    def _children(self, node: Node, st: _WordState, in_double: bool) -> None:
        self._sequence(node.children, node.start_byte, st, in_double)

    def _sequence(self, nodes: list[Node], at: int, st: _WordState, in_double: bool) -> None:
        """The parts of one word, in order, from ``at``; text between them is read too."""
        for index, child in enumerate(nodes):
            if in_double and child.type in ('"', '$"'):
                at = child.end_byte
                continue
            after = nodes[index + 1] if index + 1 < len(nodes) else None
            if child.type == "$" and after is not None and after.type == "string":
                at = child.end_byte
                continue  # $"..." is a translated string: read as "..."
            before = nodes[index - 1] if index else None
            if (
                before is not None
                and before.type == "simple_expansion"
                and self.source[child.start_byte : child.start_byte + 1] in (b"(", b"{")
            ):
                glued = self._text(before) + self._text(child)[:1]
                raise Unreadable(f"`{glued}` cannot be read")  # "$$((...": not "$(("
            if child.start_byte > at:  # text the tree gives to no child
                gap = self.source[at : child.start_byte].decode()
                if in_double:
                    self._double_quoted_text(gap, at, st)
                else:
                    self._bare_text(gap, at, st)
            self._piece(child, st, in_double)
            at = child.end_byte

    def _expansion(self, node: Node) -> None:
        """The substitutions inside ``${...}``; one the tree does not show is refused, and
        so are the forms that evaluate text at run time (``_EXPANSION_FORMS``)."""
        text = self._text(node)
        for form, what in _EXPANSION_FORMS:
            if form.search(text):
                raise Unreadable(f"{what} is not supported in read-only mode")
        seen: list[Node] = []
        stack = list(node.children)
        while stack:
            inner = stack.pop()
            if inner.type in _REFUSED_NODES:
                raise Unreadable(_REFUSED_NODES[inner.type])
            if inner.type in ("command_substitution", "process_substitution"):
                seen.append(inner)
            else:
                stack.extend(inner.children)
        # The substitutions do not overlap: one pass over both, in order (any() over all
        # of them for each opener was O(n^2)).
        spans = sorted((sub.start_byte, sub.end_byte) for sub in seen)
        k = 0
        for opener in _SUBSTITUTION.finditer(self.source, node.start_byte, node.end_byte):
            at = opener.start()
            while k < len(spans) and spans[k][1] <= at:
                k += 1
            if k == len(spans) or not spans[k][0] <= at:
                raise Unreadable(f"a substitution inside `{self._text(node)}` cannot be read")
        for sub in seen:
            self._substitution(sub)

    def _substitution(self, node: Node) -> str:
        """Read the commands of ``$(...)``, backquotes or ``<(...)``; its text in a word."""
        if self._text(node).startswith("$(("):
            # bash reads "$((" as arithmetic first; which one it is cannot be told here.
            raise Unreadable(_REFUSED_NODES["arithmetic_expansion"])
        if node.children[0].type == "`":
            # Inside backquotes, \` \$ \\ are unescaped and the result is read again
            # ("`echo \`rm x\``" runs rm): tree-sitter does not see the inner ones.
            inner = self._text(node)[1:-1]
            if _BARE_BACKQUOTE.search(inner):  # bash's substitution would end there
                raise Unreadable("nested backquotes that cannot be read")
            unescaped = re.sub(r"\\([$`\\])", r"\1", inner)
            self.commands.extend(_Reader(unescaped).commands)
            return "`...`"
        for child in node.children:
            self._statement(child)
        return "$(...)"

    def _and_next(self, text: str, start: int) -> str:
        """``text`` (the source from ``start``) and the character after it: decoding the
        rest of the word for each part was O(n^2) in its parts."""
        end = start + len(text.encode())
        return text + self.source[end : end + 4].decode(errors="ignore")[:1]

    def _bare_text(self, text: str, start: int, st: _WordState) -> None:
        """An unquoted part of a word (at byte ``start``): backslashes, globs and a ``$``
        that expands."""
        if not _SPECIAL_BARE.search(text):  # most words: nothing to read in them
            st.add(text)
            st.bare.append(text)
            return
        rest = self._and_next(text, start)
        closed = text.rfind("]")  # a "[" before a "]" of the word is a glob
        if self.source.find(b"]", start + len(text.encode()), st.end) >= 0:
            closed = len(text)
        i = 0
        while i < len(text):
            c = text[i]
            if c == "\\":
                if text.startswith("\\\n", i):
                    i += 2
                    continue
                st.add(text[i + 1 : i + 2])
                st.quoted = True
                i += 2
                continue
            if c == "`":
                raise Unreadable("a backquote that cannot be read")
            if c in " \t\n;&|<>()":  # tree-sitter can take "\n" into a word; bash ends it
                raise Unreadable(f"a word that holds `{c}` unquoted cannot be read")
            if c in "*?" or (c == "[" and i < closed):
                st.expansion(in_quotes=st.started)
                st.splits = True
            elif c == "$" and rest[i + 1 : i + 2] == "{":
                # "${" that the tree did not read as an expansion: its forms go unchecked
                raise Unreadable(f"`{text}` cannot be read")
            elif c == "$" and _EXPANDS_AFTER_DOLLAR.match(rest, i + 1):
                # an expansion the tree left in a word, or split off ("$" then "p/h")
                st.expansion(in_quotes=False)
            st.add(c)
            st.bare.append(c)
            i += 1

    def _double_quoted_text(self, text: str, start: int, st: _WordState) -> None:
        """Text inside double quotes (at byte ``start``): escapes and a ``$`` that expands."""
        rest = self._and_next(text, start)
        i = 0
        while i < len(text):
            c = text[i]
            if c == "\\" and text[i + 1 : i + 2] in ("$", "`", '"', "\\", "\n"):
                st.add(text[i + 1].replace("\n", ""))
                i += 2
                continue
            if c == "`":
                raise Unreadable("a backquote that cannot be read")
            if c == "$" and rest[i + 1 : i + 2] == "{":
                raise Unreadable(f"`{text}` cannot be read")  # as in _bare_text
            if c == "$" and _EXPANDS_AFTER_DOLLAR.match(rest, i + 1) and rest[i + 1] not in "'\"":
                st.expansion(in_quotes=True)
            st.add(c)
            i += 1


def _literal(text: str) -> Word:
    return Word(text, literal=True, risky=False, quoted=False)


def _leaves(root: Node) -> Iterator[Node]:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.child_count == 0 or node.type in ("string_content", "raw_string", "comment"):
            yield node
        else:
            stack.extend(reversed(node.children))


def _syntax_error(text: str) -> str:
    quotes = {"'": "single quote", '"': "double quote", "`": "backquote"}
    for quote, name in quotes.items():
        if text.count(quote) % 2:
            return f"unterminated {name}, or a syntax error bash would refuse"
    return "a syntax error: the command cannot be read"
