"""The read-only Bash check on tree-sitter-bash keeps the hand-written check's decisions
(issue 29, point 4): the same verdict for every bypass shape and every command of the
tests, or a stricter one written down here (and in docs/memory-and-permissions.md), and no
generated command that the old check refused is allowed."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import test_bash_network, test_permissions
from tests.support import bash_safety_reference as reference
from tests.support.bash_shapes import ARGS, HARM, REDIRECTS, WRAPPERS, bypass_shapes
from wave_ls.runtime.bash_safety import is_read_only_command, network_reason

# Read-only for the hand-written check, refused now; why each refusal is right.
STRICTER = {
    "echo \\$(ls)": "bash refuses it too: `(` after the word `\\$` is a syntax error",
    "ls (": "a syntax error in bash",
    "| ls": "a syntax error in bash",
    "ls |": "incomplete: bash waits for the rest of the pipeline",
    "ls &&": "incomplete: bash waits for the rest of the list",
    "ls & ;": "a syntax error in bash",
    "echo \\": "a trailing backslash: incomplete for bash (it waits for the next line)",
    "echo a\\": "a trailing backslash, as above",
    "ls\\\n": "a line continuation with no next line",
    "{ ls; } <<< w": "tree-sitter-bash has no here-string on a compound command",
    "(ls) <<< w": "as above",
    "{ ls; } 0<&-": "tree-sitter-bash reads no closed descriptor after a compound command",
    "(ls) 0<&-": "as above",
    "echo $[1]": "`$[...]` is arithmetic (deprecated), refused like `$((...))`",
    # A line continuation inside a word ("-\\<newline>i" is "-i" to bash): tree-sitter
    # takes it for a blank, so where its two sides would be one word it is refused.
    **dict.fromkeys(
        [
            f"{command} -\\\ni{rest}"
            for command, rest in [
                *((name, "") for name in ("sort", "uniq", "tree", "date", "ls")),
                ("find .", ""),
                ("rg", " x"),
                ("grep", " x"),
                ("xargs", " ls"),
            ]
        ],
        "a line continuation that joins two parts of a word",
    ),
}


def _test_commands() -> list[str]:
    """Every command the other tests of the check decide on."""
    return [
        *test_permissions.READ_ONLY,
        *(command for command, _ in test_permissions.REFUSED),
        *(command for command, _ in test_bash_network.NETWORK),
        *test_bash_network.LOCAL_READ_ONLY,
        *(command for command, _ in test_bash_network.LOCAL_NOT_READ_ONLY),
    ]


SHAPES = list(dict.fromkeys(bypass_shapes() + _test_commands()))


def test_the_shapes_are_many_and_the_stricter_ones_are_among_them() -> None:
    assert len(SHAPES) > 1000
    assert set(STRICTER) <= set(SHAPES)


@pytest.mark.parametrize("command", SHAPES)
def test_same_verdict_as_the_hand_written_check(command: str) -> None:
    ok, reason = is_read_only_command(command)
    was_ok, was_reason = reference.is_read_only_command(command)
    if command in STRICTER:
        assert was_ok and not ok and reason
    else:
        assert ok == was_ok, (reason, was_reason)
        assert bool(reason) == bool(was_reason)


@pytest.mark.parametrize("command", SHAPES)
def test_same_network_verdict(command: str) -> None:
    # A command the new reader refuses may have had a network reason: it is refused anyway.
    new, old = network_reason(command), reference.network_reason(command)
    assert (new is None) == (old is None) or not is_read_only_command(command)[0]


# --------------------------------------------------------------------------- generated

_PROGRAMS = [
    "ls",
    "cat",
    "echo",
    "grep",
    "git",
    "sed",
    "awk",
    "find",
    "sort",
    "xargs",
    "rm",
    "curl",
    "bash",
    "sh",
    "env",
    "python3",
    "tee",
    "[",
    "test",
    "date",
    "uniq",
]
_PIECES = [
    *_PROGRAMS,
    *ARGS,
    *REDIRECTS,
    *WRAPPERS,
    *HARM,
    "-c",
    "-exec",
    "{}",
    "\\;",
    "+",
    "log",
    "push",
    "status",
    "s/a/b/",
    "p",
    "-n",
    "-i",
    "f",
    "x",
    "$X",
    "${X}",
    "$(",
    ")",
    "`",
    "<(",
    ">(",
    "(",
    "{",
    "}",
    "'",
    '"',
    "$'",
    "\\",
    "|",
    "||",
    "&&",
    "&",
    ";",
    ";;",
    "!",
    "if",
    "then",
    "else",
    "fi",
    "for",
    "in",
    "do",
    "done",
    "while",
    "case",
    "esac",
    "#",
    "=",
    "X=",
    "PATH=",
    "LANG=C",
    "*",
    "?",
    "[a]",
    "~",
    "/dev/tcp/h/1",
    "$((",
    "))",
    "<<",
    "<<<",
    ">",
    ">>",
    "2>",
    "&>",
    "<",
    ">&",
]
_GLUE = ["", " ", " ", " ", "\n", "\\\n", "\t", " ; ", " | "]

commands_from_pieces = st.lists(
    st.tuples(st.sampled_from(_PIECES), st.sampled_from(_GLUE)), min_size=1, max_size=10
).map(lambda parts: "".join(piece + glue for piece, glue in parts))
commands_from_characters = st.text(
    alphabet=st.sampled_from(list("lsrm ef-x$`'\"\\;&|()<>{}[]*?#=~!\n\t/c0123")), max_size=24
)


def _put_in(shape: str, at: int, piece: str) -> str:
    at %= len(shape) + 1
    return shape[:at] + piece + shape[at:]


shapes_with_a_piece_put_in = st.builds(
    _put_in,
    st.sampled_from(SHAPES),
    st.integers(min_value=0),
    st.sampled_from([*_PIECES, *"'\"\\`$ \n;&|(){}<>#=!*?[]-"]),
)


# Derandomized: CI sees the same 900 commands every run (a fresh draw that found an odd
# command the old check refused in error would fail a correct verdict); fuzzing by hand
# found nothing in 1.2 million.
@settings(
    max_examples=900, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(st.one_of(commands_from_pieces, commands_from_characters, shapes_with_a_piece_put_in))
def test_nothing_the_hand_written_check_refused_is_allowed(command: str) -> None:
    ok, reason = is_read_only_command(command)
    was_ok, was_reason = reference.is_read_only_command(command)
    assert ok or reason
    if not was_ok:
        assert not ok, f"allowed now, refused before ({was_reason})"


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.text(max_size=40))
def test_any_text_gets_a_verdict(command: str) -> None:
    # Surrogates, NULs, any script: a verdict, never an exception.
    ok, reason = is_read_only_command(command)
    assert ok or reason
    network_reason(command)


# --------------------------------------------------------------------------- cost


def test_tree_sitter_is_imported_on_first_use_only() -> None:
    # The server's start is measured (issue 30): the policy's import must not load it.
    code = (
        "import sys; import wave_ls.runtime.permissions as p; "
        "print('tree_sitter' in sys.modules); "
        "p.is_read_only_command('ls'); print('tree_sitter' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["False", "True"]


def test_characters_that_crash_tree_sitter_bash_are_not_parsed() -> None:
    # tree-sitter-bash 0.25.1 reads out of bounds after "a{" and some characters outside the
    # BMP (a segfault in most runs): such a command would kill the server.
    code = (
        "from wave_ls.runtime.bash_safety import is_read_only_command as f\n"
        "for _ in range(20): assert not f('a{\\U000d65d9')[0]\n"
        "print(f('echo \\U0001f600')[1])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "the character U+1F600 is not read"
