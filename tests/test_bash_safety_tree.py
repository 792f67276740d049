"""The read-only Bash check on tree-sitter-bash keeps the hand-written check's decisions
(issue 29, point 4): the same verdict for every bypass shape and every command of the
tests, or a stricter one written down here (and in docs/memory-and-permissions.md), and no
generated command that the old check refused is allowed."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import test_bash_network, test_permissions
from tests.support import bash_safety_reference as reference
from tests.support.bash_shapes import ARGS, HARM, REDIRECTS, WRAPPERS, bypass_shapes
from tests.support.python_probe import run_python
from wave_ls.runtime.bash_safety import is_read_only_command, network_reason

# Allowed by the hand-written check, and harmful in bash 5.2 (a reviewer ran each): what
# each is refused for now (a piece of the reason).
HARMFUL_FORMS = {
    # An array subscript in a variable name is arithmetic: "$(touch x)" in it runs.
    "printf -v 'a[$(touch x)]' 1": "`printf -v` sets a variable",
    "printf -vx 1": "`printf -v` sets a variable",
    "printf --v x 1": "not a known read-only option",
    "for f in -v; do printf \"$f\" 'a[$(touch x)]' 1; done": "could be `-v`",
    "test -v 'a[$(touch x)]'": "`test -v` evaluates a variable name",
    "[ -v 'a[$(touch x)]' ]": "`test -v` evaluates a variable name",
    "test -R 'a[$(touch x)]'": "`test -R` evaluates a variable name",
    "for f in -v; do test \"$f\" 'a[$(touch x)]'; done": "could be `-v`",
    'for f in -v; do for n in \'a[$(touch x)]\'; do test "$f" "$n"; done; done': "could be",
    "test $(ls)": "may become several words",  # files named "-v" and "a[$(touch x)]"
    "[ $(ls) ]": "may become several words",
    # The value of x read again as a name, or as a prompt with its substitutions.
    "for x in 'a[$(touch x)]'; do echo ${!x}; done": "indirect expansion",
    "echo ${!x}": "indirect expansion",
    'echo "a${!x}"': "indirect expansion",
    "for x in '$(touch x)'; do echo ${x@P}; done": "the transformation",
    "echo ${x@P}": "the transformation",
    "echo ${x:-${y@P}}": "the transformation",
    # Subscripts and substring offsets are arithmetic: they assign, and evaluate values.
    "echo ${a[PATH=0]}; ls": "an array subscript",
    "echo ${a[i++]}": "an array subscript",
    'echo "${a[i]}"': "an array subscript",
    "echo ${x:-${a[j]}}": "an array subscript",
    "echo ${x:i}": "a substring offset",
    "echo ${x:0:n}": "a substring offset",
    # An assignment, as "GIT_DIR=x git status" is (git then reads that repository's config).
    "echo ${GIT_DIR:=/tmp/x}; git status": "the assignment",
    "echo ${x=a}": "the assignment",
    # Options that run a program or write files.
    "sort --compress-program=sh f": "`sort --compress-program=sh`",
    "sort --compress-prog=sh f": "`sort --compress-prog=sh`",
    "sort --compress-program sh f": "`sort --compress-program`",
    "/usr/bin/time -ox ls": "`time -o`",
    "/usr/bin/time --out=x ls": "`time --out=x`",
    "/usr/bin/time -ao x ls": "`time -a`",
    "time --app=x ls": "`time --app=x`",
    "rg --hostname-bin=sh --hyperlink-format=default x": "`rg --hostname-bin=sh`",
    "rg --hostname-b sh --hyperlink-format=default x": "`rg --hostname-b`",
    "tree -R -H . .": "`tree -R`",
    "tree -RH . .": "`tree -R`",
    "gawk 'BEGIN { getline < \"/inet/tcp/0/example.com/80\" }'": "network connection",
    'gawk \'BEGIN { getline < ("/in" "et/tcp/0/example.com/80") }\'': "named at run time",
    'gawk \'BEGIN { f = "/in" "et/tcp/0/h/80"; getline line < f }\'': "named at run time",
    "gawk '{ print }' /inet/tcp/0/example.com/80": "network connection",
    "yq -s '.a' f.yml": "`yq -s`",
    "yq --split-exp '.a' f.yml": "`yq --split-exp`",
    # A brace expansion is split into words whatever quotes it holds: "-delete x".
    "find . {-delete,'x'}": "expands at run time",
}

# Still read-only next to the forms above.
STILL_READ_ONLY = [
    "printf '%s\\n' \"$x\" a[1]",
    "printf -- -v",
    "ls | xargs printf '%s\\n'",
    "test -f 'a[1]'",
    '[ -n "$x" ]',
    '[ "$x" = yes ]',
    '[ "$a" = "$b" ] || [ "$a" -gt "$b" ]',
    'test ! "$a" = "$b" -a -n "$c"',
    '[ -f "$f" ] && cat "$f"',
    'echo ${a[0]} ${a[-1]} ${#a[@]} "${a[*]}" ${@:2} "${x:1:2}" ${x: -1}',
    "echo ${x:-user@example.com} ${x%%.*} ${x/a/b} ${x:-a=b}",
    "echo \"\\${x}\" '${!x}' \\${a[i]}",
    "sort -k2 f",
    "time -p ls",
    "/usr/bin/time -f %e ls",
    "/usr/bin/time --format=%e ls",
    "rg --hyperlink-format=default x",
    "tree -H . .",
    "awk '{ print $1 }' f",
    "awk 'BEGIN { while ((getline line < \"f\") > 0) n++; print n }'",
    "awk 'NR == 1 { getline; print $0 < \"b\" }' f",
    "yq '.a' f.yml",
]


@pytest.mark.parametrize("command", list(HARMFUL_FORMS))
def test_harmful_forms_are_refused(command: str) -> None:
    ok, reason = is_read_only_command(command)
    assert not ok
    assert HARMFUL_FORMS[command] in reason


@pytest.mark.parametrize("command", STILL_READ_ONLY)
def test_forms_next_to_them_stay_read_only(command: str) -> None:
    assert is_read_only_command(command) == (True, "")


def test_time_format_value_is_not_the_command() -> None:
    # GNU time runs "rm x" here; "%e" is -f's value.
    assert not is_read_only_command("/usr/bin/time -f %e rm x")[0]


# Read-only for the hand-written check, refused now; why each refusal is right.
STRICTER = {
    # All but "time -ao x ls": the old check took "x" for the command.
    **dict.fromkeys(
        (c for c in HARMFUL_FORMS if reference.is_read_only_command(c)[0]),
        "it runs code or writes files in bash 5.2 (HARMFUL_FORMS above)",
    ),
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


SHAPES = list(dict.fromkeys(bypass_shapes() + _test_commands() + list(HARMFUL_FORMS)))


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
    done = run_python(code)
    assert (done.returncode, done.stdout.split()) == (0, ["False", "True"]), done.stderr


def test_a_command_over_16_kb_is_refused_unread() -> None:
    # Bash runs it; we do not read it (the check's cost grows with it: 10.9 s for
    # "echo" and 40,000 "*" before the word state stopped joining its text per glob).
    ok, reason = is_read_only_command("echo " + "*" * 40_000)
    assert (ok, reason) == (False, "the command is too long to check (over 16 KB)")
    assert network_reason("curl " + "a" * 17_000) is None  # unread: refused above anyway
    assert not is_read_only_command("echo " + "\u00e9" * 8_200)[0]  # 16,400 bytes


@pytest.mark.parametrize("word", ["*", "?", "[a]", "${x:-$(ls)}"])
def test_a_long_word_is_read_in_linear_time(word: str) -> None:
    # Just under the limit, a word of many globs: ~20 ms; the quadratic reader took 2.0 s
    # for the "*" one and 0.8 s for "[a]" (and ~0.5 s for 3,000 "$(ls)" in one "${x:-}").
    # A generous bound, it guards against a freeze.
    if word.startswith("${"):
        command = "echo ${x:-" + "$(ls)" * 3200 + "}"
    else:
        command = "echo " + word * ((16 * 1024 - 10) // len(word))
    start = time.perf_counter()
    ok, reason = is_read_only_command(command)
    assert time.perf_counter() - start < 0.5
    assert ok, reason


def test_characters_that_crash_tree_sitter_bash_are_not_parsed() -> None:
    # tree-sitter-bash 0.25.1 reads out of bounds after "a{" and some characters outside the
    # BMP (a segfault in most runs): such a command would kill the server.
    code = (
        "from wave_ls.runtime.bash_safety import is_read_only_command as f\n"
        "for _ in range(20): assert not f('a{\\U000d65d9')[0]\n"
        "print(f('echo \\U0001f600')[1])"
    )
    done = run_python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "the character U+1F600 is not read"
