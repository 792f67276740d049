"""Is a Bash command read-only? (PLAN-RO-3)

``is_read_only_command`` answers for plan mode and the read-only subagents (Explore, Plan).
It is an allowlist: a command is read-only only when every simple command in it (including
those inside ``$(...)``, backticks, ``<(...)``, subshells, pipelines and lists) is a known
read-only program used without a writing option, and no output is redirected to a file.
Anything it cannot read with certainty is refused: a false refusal costs the model one
retry, a false acceptance costs the user their files. A command that can reach the network
is not read-only either (``runtime/bash_network.py``: it could send what it read), and
``network_reason`` tells such commands apart for the policy (they ask first even where the
session's sandbox lets other commands run unasked).

The command line is read with tree-sitter-bash (``shell_syntax``): the decisions here are
made on its simple commands, their words and their redirections.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence

from wave_ls.runtime.bash_network import network_problem
from wave_ls.runtime.shell_syntax import Simple, Unreadable, Word, simple_commands


def is_read_only_command(command: str) -> tuple[bool, str]:
    """``(True, "")`` when ``command`` cannot change anything, else ``(False, reason)``.

    The reason names what was refused, e.g. "`rm` deletes files" or "output redirection
    `> out.txt` writes a file".
    """
    if not command.strip():
        return False, "empty command"
    try:
        commands = simple_commands(command)
    except Unreadable as refused:
        return False, refused.reason
    except RecursionError:
        return False, "the command is nested too deeply to check"
    if not commands:
        return False, "empty command"
    if network := network_problem(commands):
        return False, network
    for simple in commands:
        reason = _redirect_problem(simple) or _words_problem(simple.words)
        if reason:
            return False, reason
    return True, ""


def network_reason(command: str) -> str | None:
    """Why ``command`` is known to reach the network (``bash_network.py``), or None; a
    command that cannot be read is not known to (``is_read_only_command`` refuses it)."""
    try:
        return network_problem(simple_commands(command))
    except (Unreadable, RecursionError):
        return None


# --------------------------------------------------------------------------- redirections

_SAFE_SINKS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})


def _redirect_problem(simple: Simple) -> str | None:
    for op, target in simple.redirects:
        bare = op.lstrip("0123456789")
        if bare == "<" and not target.literal and target.text != "/dev/fd/63":
            # "< $f" could open "/dev/tcp/host/port": bash connects for such a path.
            return f"the input redirection `{op} {target.text}` is only known at run time"
        if bare in ("<", "<<<"):
            continue
        if bare in (">&", "<&") and (target.text.isdigit() or target.text == "-"):
            continue  # 2>&1, >&2, 3<&-: duplicates or closes a descriptor
        if bare == "<>":
            return f"redirection `{op} {target.text}` opens a file for writing"
        if bare == "<&" or (target.text in _SAFE_SINKS and target.literal):
            continue
        return f"output redirection `{op} {target.text}` writes a file"
    return None


# --------------------------------------------------------------------------- commands


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Read-only whatever their arguments.
_PLAIN = _names(
    "ls cat head tail wc grep egrep fgrep pwd echo which whereis type stat du df cut "
    "comm cmp diff basename dirname realpath readlink uname whoami id groups nproc uptime tty "
    "printenv locale true false : sleep seq tac rev nl fold column tr expand unexpand "
    "paste join fmt od hexdump strings md5sum sha1sum sha224sum sha256sum sha384sum "
    "sha512sum b2sum shasum cksum base64 base32 yes jq numfmt expr getconf arch cd zcat "
    "free ps"
)

# Known to change something; the reason completes "`<name>` ...".
_MUTATING: dict[str, str] = {
    **dict.fromkeys(["rm", "unlink", "shred"], "deletes files"),
    **dict.fromkeys(["rmdir"], "deletes directories"),
    **dict.fromkeys(["mkdir"], "creates directories"),
    **dict.fromkeys(["touch"], "creates or changes files"),
    **dict.fromkeys(["mv"], "moves files"),
    **dict.fromkeys(["cp", "install", "rsync", "scp"], "copies files"),
    **dict.fromkeys(["ln"], "creates links"),
    **dict.fromkeys(["chmod"], "changes file permissions"),
    **dict.fromkeys(["chown", "chgrp"], "changes file ownership"),
    **dict.fromkeys(["dd", "tee", "split", "csplit"], "writes files"),
    **dict.fromkeys(["truncate"], "changes file sizes"),
    **dict.fromkeys(["mkfifo", "mknod", "mktemp"], "creates files"),
    **dict.fromkeys(["patch"], "edits files"),
    **dict.fromkeys(["wget"], "downloads files"),
    **dict.fromkeys(["tar", "zip", "unzip", "gzip", "gunzip", "xz", "bzip2"], "writes files"),
    **dict.fromkeys(
        ["vi", "vim", "nvim", "nano", "emacs", "ed", "code", "less", "more"],
        "is interactive (an editor or pager)",
    ),
    **dict.fromkeys(
        ["python", "python3", "node", "ruby", "perl", "php", "deno", "bun", "lua", "osascript"],
        "runs code whose effects are unknown",
    ),
    **dict.fromkeys(
        ["eval", "exec", "source", ".", "export", "unset", "alias", "set", "trap", "read"],
        "changes the shell or runs arbitrary code",
    ),
    **dict.fromkeys(["sudo", "su", "doas"], "runs as another user"),
    **dict.fromkeys(["kill", "pkill", "killall"], "stops processes"),
    **dict.fromkeys(["make", "cmake", "ninja", "gradle", "mvn"], "runs a build"),
    **dict.fromkeys(
        ["apt", "apt-get", "brew", "dnf", "yum", "pacman", "snap", "gem", "uv", "poetry", "conda"],
        "installs or changes software",
    ),
    **dict.fromkeys(["docker", "podman", "kubectl"], "changes containers"),
    **dict.fromkeys(
        ["systemctl", "service", "crontab", "shutdown", "reboot"], "changes the system"
    ),
}


Checker = Callable[[list[Word]], "str | None"]


def _words_problem(words: Sequence[Word], from_stdin: bool = False) -> str | None:
    """Why this simple command is not read-only, or None. ``from_stdin``: xargs adds args."""
    words = list(words)
    while words:
        first = words[0]
        if _ASSIGNMENT.match(first.text):
            if problem := _assignment_problem(first):
                return problem
            words.pop(0)
        else:
            break
    if not words:
        return None
    name_word, args = words[0], words[1:]
    name = name_word.text
    if not name_word.quoted and name == "for":
        return _for_problem(args)
    if not name_word.literal:
        return f"the command name `{name}` is only known at run time"
    if "/" in name:
        directory, _, base = name.rpartition("/")
        if directory not in ("/bin", "/usr/bin", "/usr/local/bin", "/opt/homebrew/bin"):
            return f"`{name}` runs a program whose effects are unknown"
        name = base
    if name in _WRAPPERS:
        return _WRAPPERS[name](args, from_stdin)
    if name in _PLAIN:
        return None
    if name in _BUILTINS:
        return _BUILTINS[name](args, from_stdin)
    checker = _CHECKERS.get(name)
    if checker is not None:
        if from_stdin:
            return f"`xargs` would pass arguments that cannot be checked to `{name}`"
        risky = next((a.text for a in args if a.risky), None)
        if risky is not None:
            return f"`{name}` argument `{risky}` expands at run time and cannot be checked"
        return checker(args)
    if name in _MUTATING:
        return f"`{name}` {_MUTATING[name]}"
    return f"`{name}` is not a known read-only command"


_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\+?)=")
_HARMLESS_VARS = _names(
    "LANG LANGUAGE TZ NO_COLOR FORCE_COLOR CLICOLOR CLICOLOR_FORCE COLUMNS LINES TERM "
    "GREP_COLOR GREP_COLORS"
)
_PAGER_VARS = frozenset({"PAGER", "GIT_PAGER", "MANPAGER"})


def _assignment_problem(word: Word) -> str | None:
    name, _, value = word.text.partition("=")
    name = name.rstrip("+")
    if name in _HARMLESS_VARS or name.startswith("LC_"):
        return None
    if name in _PAGER_VARS and value in ("", "cat") and word.literal:
        return None
    return f"setting `{name}` may change what commands do"


def _for_problem(args: list[Word]) -> str | None:
    # "for NAME [in WORDS]" only binds a variable, and checked commands refuse "$NAME"
    # arguments. An upper-case name could be PATH, IFS, GIT_DIR...: refused.
    if args and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", args[0].text):
        if args[0].text.upper() == args[0].text:
            return f"a loop over `{args[0].text}` may change an environment variable"
        if len(args) == 1 or args[1].text == "in":
            return None
    return "this `for` loop form is not supported in read-only mode"


# --------------------------------------------------------------------------- option scanning


def _option_problem(
    name: str,
    args: list[Word],
    *,
    bad_short: str = "",
    bad_long: Sequence[str] = (),
    short_values: str = "",
    long_values: Sequence[str] = (),
) -> str | None:
    """The first forbidden option in ``args`` (GNU style: options anywhere before ``--``).

    Long options are matched by prefix, as getopt accepts unambiguous abbreviations.
    """
    i = 0
    while i < len(args):
        arg = args[i].text
        i += 1
        if arg == "--":
            break
        if arg.startswith("--"):
            long_name, has_value, _ = arg[2:].partition("=")
            if long_name and any(bad.startswith(long_name) for bad in bad_long):
                return f"`{name} {arg}` writes files or has side effects"
            if long_name in long_values and not has_value:
                i += 1
        elif arg.startswith("-") and len(arg) > 1:
            for pos, ch in enumerate(arg[1:], start=1):
                if ch in bad_short:
                    return f"`{name} -{ch}` writes files or has side effects"
                if ch in short_values:
                    if pos == len(arg) - 1:
                        i += 1  # the value is the next word
                    break
    return None


def _operands(
    args: list[Word], short_values: str = "", long_values: Sequence[str] = ()
) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i].text
        i += 1
        if arg == "--":
            out.extend(a.text for a in args[i:])
            break
        if arg.startswith("--"):
            if arg[2:] in long_values:
                i += 1
        elif arg.startswith("-") and len(arg) > 1:
            if arg[-1] in short_values and not any(c in short_values for c in arg[1:-1]):
                i += 1
        else:
            out.append(arg)
    return out


# --------------------------------------------------------------------------- per-command checks


def _check_find(args: list[Word]) -> str | None:
    i = 0
    while i < len(args):
        arg = args[i].text
        if arg in ("-delete", "-fprint", "-fprint0", "-fprintf", "-fls"):
            return f"`find {arg}` changes files"
        if arg in ("-ok", "-okdir"):
            return f"`find {arg}` is interactive"
        if arg in ("-exec", "-execdir"):
            end = next((j for j in range(i + 1, len(args)) if args[j].text in (";", "+")), None)
            if end is None:
                return f"`find {arg}` without `;` or `+`"
            if problem := _words_problem(args[i + 1 : end]):
                return f"`find {arg}`: {problem}"
            i = end
        i += 1
    return None


def _check_sed(args: list[Word]) -> str | None:
    scripts: list[Word] = []
    operands: list[Word] = []
    i = 0
    while i < len(args):
        word = args[i]
        arg = word.text
        i += 1
        if arg == "--":
            operands.extend(args[i:])
            break
        if arg.startswith("--"):
            long_name, _, value = arg[2:].partition("=")
            if long_name and "in-place".startswith(long_name):
                return "`sed --in-place` edits files"
            if long_name and "expression".startswith(long_name) and len(long_name) > 1:
                if not value and i < len(args):
                    word, value = args[i], args[i].text
                    i += 1
                scripts.append(word._replace(text=value))
            elif long_name and "file".startswith(long_name):
                return "`sed --file` runs a script that cannot be checked"
        elif arg.startswith("-") and len(arg) > 1:
            for pos, ch in enumerate(arg[1:], start=1):
                if ch == "i":
                    return "`sed -i` edits files in place"
                if ch == "f":
                    return "`sed -f` runs a script that cannot be checked"
                if ch in "el":
                    rest = arg[pos + 1 :]
                    if not rest and i < len(args):
                        word, rest = args[i], args[i].text
                        i += 1
                    if ch == "e":
                        scripts.append(word._replace(text=rest))
                    break
                if ch not in "nEsuzr":
                    return f"`sed -{ch}` is not a known read-only option"
        else:
            operands.append(word)
    if not scripts and operands:
        scripts.append(operands.pop(0))
    for script in scripts:
        if not script.literal:
            return f"the sed script `{script.text}` expands at run time and cannot be checked"
        if problem := _sed_script_problem(script.text):
            return problem
    return None


_SED_ADDRESS = re.compile(r"(\d+(~\d+)?|\$|/(\\.|[^/\\])*/[IM]*|\\(.)(\\.|(?!\4).)*\4[IM]*)")


def _sed_script_problem(script: str) -> str | None:
    """Refuse the sed commands that write or execute (``w``, ``W``, ``e``, ``s///w``, ``s///e``)."""
    i, n = 0, len(script)
    while i < n:
        if script[i] in " \t\n;}":
            i += 1
            continue
        for _ in range(2):  # up to two addresses: "1,5", "/a/,/b/", "0,/x/", "3,+2"
            match = _SED_ADDRESS.match(script, i)
            if match:
                i = match.end()
            if i < n and script[i] == ",":
                i += 1
                plus = re.match(r"[+~]\d+", script[i:])
                if plus:
                    i += plus.end()
                    break
                continue
            break
        while i < n and script[i] in " \t!":
            i += 1
        if i >= n:
            break
        cmd = script[i]
        if cmd == "{":
            i += 1
        elif cmd in "wWe":
            return f"sed command `{cmd}` writes files or runs commands"
        elif cmd in "sy":
            if i + 1 >= n or script[i + 1] in "\n\\":
                return "sed script cannot be checked"
            delim = script[i + 1]
            i += 2
            for _ in range(2):
                while i < n and script[i] != delim:
                    i += 2 if script[i] == "\\" else 1
                if i >= n:
                    return "sed script cannot be checked"
                i += 1
            flags = re.match(r"[^;}\n]*", script[i:])
            assert flags is not None
            if cmd == "s" and re.search(r"[we]", flags.group()):
                return "sed `s///w` or `s///e` writes files or runs commands"
            i += flags.end()
        elif cmd in "aic":
            while i < n and script[i] != "\n":
                i += 2 if script[i] == "\\" else 1
        elif cmd in "rR":
            end = script.find("\n", i)
            i = n if end < 0 else end
        elif cmd in "btT:":
            match = re.match(r".[^;\n]*", script[i:])
            assert match is not None
            i += match.end()
        elif cmd in "=dDgGhHlLnNpPqQxzF":
            i += 1
            while i < n and script[i].isdigit():
                i += 1
        else:
            return f"sed command `{cmd}` cannot be checked"
    return None


def _check_awk(args: list[Word]) -> str | None:
    program: Word | None = None
    i = 0
    while i < len(args) and program is None:
        arg = args[i].text
        i += 1
        if arg == "--":
            break
        if arg in ("-F", "-v"):
            i += 1
        elif arg.startswith(("-F", "-v")):
            continue
        elif arg in ("-e", "--source"):
            program = args[i] if i < len(args) else None
            i += 1
        elif arg.startswith("-") and len(arg) > 1:
            return f"`awk {arg}` cannot be checked (program files, extensions, in-place edits)"
        else:
            program = args[i - 1]
    if program is None and i < len(args):
        program = args[i]
    if program is None:
        return None
    if not program.literal:
        return f"the awk program `{program.text}` expands at run time and cannot be checked"
    code = re.sub(r'"(\\.|[^"\\])*"', '""', program.text)  # string contents cannot act
    if re.search(r"\bsystem\s*\(", code):
        return "`awk` program calls system()"
    if "|" in code.replace("||", ""):
        return "`awk` program pipes to a command"
    if re.search(r"\bprintf?\b[^;{}\n]*>", code):
        return "`awk` program redirects output to a file"
    if "@" in code:
        return "`awk` program loads an extension"
    # gawk connects for "/inet/..." files: only a literal file name can be told apart.
    if "/inet" in program.text or any("/inet" in a.text for a in args):
        return "`awk` program opens a network connection (gawk's `/inet/...` files)"
    for read in _AWK_GETLINE_FROM.finditer(code):
        if not code.startswith('"', read.end()):
            return "`awk` program reads with getline from a file named at run time"
    return None


_AWK_GETLINE_FROM = re.compile(r"\bgetline\b\s*(?:[A-Za-z_]\w*\s*(?:\[[^\]]*\])?)?\s*<(?!=)\s*")


def _check_sort(args: list[Word]) -> str | None:
    return _option_problem(
        "sort",
        args,
        bad_short="o",
        bad_long=("output", "compress-program"),
        short_values="kStT",
        long_values=("key", "buffer-size", "field-separator", "temporary-directory", "parallel"),
    )


def _check_uniq(args: list[Word]) -> str | None:
    if (
        len(
            _operands(
                args, short_values="fsw", long_values=("skip-fields", "skip-chars", "check-chars")
            )
        )
        > 1
    ):
        return "`uniq` with two file names writes the second"
    return None


def _check_tree(args: list[Word]) -> str | None:
    # -R with -H writes 00Tree.html into each directory.
    return _option_problem("tree", args, bad_short="oR", bad_long=("output",), short_values="LPIHT")


def _check_file(args: list[Word]) -> str | None:
    return _option_problem("file", args, bad_short="C", bad_long=("compile",), short_values="efFmP")


def _check_rg(args: list[Word]) -> str | None:
    # --hostname-bin runs a program (for --hyperlink-format).
    return _option_problem(
        "rg", args, bad_long=("pre", "hostname-bin"), short_values="efgmtTABCjMEd"
    )


def _check_yq(args: list[Word]) -> str | None:
    # -s/--split-exp writes one file per document.
    return _option_problem("yq", args, bad_short="is", bad_long=("inplace", "split-exp"))


def _check_date(args: list[Word]) -> str | None:
    if problem := _option_problem(
        "date", args, bad_short="s", bad_long=("set",), short_values="dfr"
    ):
        return problem
    if any(not op.startswith("+") for op in _operands(args, short_values="dfr")):
        return "`date` with a date operand sets the clock"
    return None


def _check_hostname(args: list[Word]) -> str | None:
    if any(not a.text.startswith("-") for a in args):
        return "`hostname <name>` sets the host name"
    return _option_problem("hostname", args, bad_short="Fb", bad_long=("file", "boot"))


def _subcommand_check(allowed: frozenset[str], verb: str) -> Checker:
    def check(args: list[Word], _name: str = verb) -> str | None:
        first = next((a.text for a in args if not a.text.startswith("-")), None)
        if first is None:
            if all(a.text in ("--version", "-v", "-V", "--help", "-h") for a in args):
                return None
            return f"`{_name}` with these options is not known to be read-only"
        if first in allowed:
            return None
        return f"`{_name} {first}` changes installed packages or runs code"

    return check


def _version_only(name: str) -> Checker:
    def check(args: list[Word]) -> str | None:
        if args and all(a.text in ("--version", "-V", "-v") for a in args):
            return None
        return f"`{name}` {_MUTATING.get(name, 'runs code whose effects are unknown')}"

    return check


def _check_go(args: list[Word]) -> str | None:
    sub = args[0].text if args else ""
    if sub == "version" or (sub == "env" and not any(a.text in ("-w", "-u") for a in args)):
        return None
    return f"`go {sub}` builds, downloads or changes files"


# -- git

_GIT_READ = _names(
    "status log show diff rev-parse rev-list ls-files ls-tree blame annotate grep describe "
    "shortlog cat-file show-ref for-each-ref merge-base name-rev count-objects var help "
    "version whatchanged diff-tree diff-files diff-index check-ignore check-attr "
    "cherry show-branch range-diff verify-commit verify-tag"
)
_GIT_MUTATING = _names(
    "commit push pull fetch add rm mv checkout switch restore reset revert merge rebase "
    "cherry-pick clean apply am init clone gc prune update-ref update-index filter-branch "
    "bisect format-patch stage replace repack maintenance sparse-checkout"
)
_GIT_GLOBAL_VALUE = ("-C", "--git-dir", "--work-tree", "--namespace")
_GIT_GLOBAL_FLAGS = _names(
    "--no-pager -P --no-replace-objects --bare --literal-pathspecs --glob-pathspecs "
    "--noglob-pathspecs --icase-pathspecs --no-optional-locks"
)


def _check_git(args: list[Word]) -> str | None:
    texts = [a.text for a in args]
    i = 0
    while i < len(texts) and texts[i].startswith("-"):
        opt = texts[i]
        if opt in _GIT_GLOBAL_VALUE:
            i += 2
        elif opt.split("=", 1)[0] in _GIT_GLOBAL_VALUE[1:] or opt in _GIT_GLOBAL_FLAGS:
            i += 1
        elif opt in ("--version", "--help", "-h", "--exec-path", "--html-path", "--man-path"):
            return None
        elif opt == "-c" or opt.startswith("--config-env"):
            return "`git -c` can make git run arbitrary commands"
        else:
            return f"`git {opt}` is not a known read-only option"
    if i >= len(texts):
        return None
    sub, rest = texts[i], texts[i + 1 :]
    if any(r == "--output" or r.startswith("--output=") for r in rest):
        return f"`git {sub} --output` writes a file"
    if sub in _GIT_READ:
        if sub == "grep" and any(r.startswith(("-O", "--open-files-in-pager")) for r in rest):
            return "`git grep -O` opens files in a pager"
        return None
    special = _GIT_SPECIAL.get(sub)
    if special is not None:
        return special(rest)
    if sub in _GIT_MUTATING:
        return f"`git {sub}` changes the repository"
    return f"`git {sub}` is not a known read-only git command"


def _git_listing(
    sub: str, rest: list[str], short: str, long: frozenset[str], long_values: frozenset[str]
) -> str | None:
    plural = {"branch": "branches", "tag": "tags"}[sub]
    """Branch/tag listing: only listing flags; names only as ``--list`` patterns."""
    listing = not rest or any(r in ("-l", "--list") for r in rest)
    i = 0
    while i < len(rest):
        arg = rest[i]
        i += 1
        if arg.startswith("--"):
            base = arg.split("=", 1)[0]
            if base not in long and base not in long_values:
                return f"`git {sub} {arg}` changes {plural}"
            if base in long_values and "=" not in arg:
                i += 1
        elif arg.startswith("-") and len(arg) > 1:
            flags = arg[1:]
            if sub == "tag" and re.fullmatch(r"n\d*", flags):
                continue
            if any(c not in short for c in flags):
                return f"`git {sub} {arg}` changes {plural}"
        elif not listing:
            return f"`git {sub} {arg}` creates a {sub}"
    return None


_LIST_LONG = _names(
    "--list --contains --no-contains --merged --no-merged --points-at --sort --format "
    "--color --no-color --column --no-column --ignore-case --omit-empty"
)
_LIST_VALUES = _names("--contains --no-contains --merged --no-merged --points-at")


def _git_branch(rest: list[str]) -> str | None:
    return _git_listing(
        "branch",
        rest,
        "arvli",
        _LIST_LONG
        | {"--all", "--remotes", "--verbose", "--show-current", "--abbrev", "--no-abbrev"},
        _LIST_VALUES,
    )


def _git_tag(rest: list[str]) -> str | None:
    return _git_listing("tag", rest, "li", _LIST_LONG | {"--verify"}, _LIST_VALUES)


def _git_remote(rest: list[str]) -> str | None:
    words = [r for r in rest if r not in ("-v", "--verbose")]
    if not words or words[0] in ("show", "get-url"):
        return None
    return f"`git remote {words[0]}` changes remotes"


def _git_config(rest: list[str]) -> str | None:
    reads = {
        "--get",
        "--get-all",
        "--get-regexp",
        "--get-urlmatch",
        "--list",
        "-l",
        "--get-color",
        "--get-colorbool",
        "get",
        "list",
    }
    writes = {
        "--unset",
        "--unset-all",
        "--add",
        "--replace-all",
        "--edit",
        "-e",
        "--rename-section",
        "--remove-section",
        "set",
        "unset",
        "edit",
    }
    if any(r in writes for r in rest) or not any(r in reads for r in rest):
        return "`git config` without --get/--list changes configuration"
    return None


GitCheck = Callable[[list[str]], "str | None"]


def _git_first_word(sub: str, allowed: frozenset[str], default_ok: bool) -> GitCheck:
    """``git <sub> <verb>``: read-only for the ``allowed`` verbs (or none, if ``default_ok``)."""

    def check(rest: list[str]) -> str | None:
        first = next((r for r in rest if not r.startswith("-")), None)
        if (first is None and default_ok) or first in allowed:
            return None
        return f"`{' '.join(['git', sub, *([first] if first else [])])}` changes the repository"

    return check


def _git_symbolic_ref(rest: list[str]) -> str | None:
    if any(r in ("-d", "--delete") for r in rest) or len([r for r in rest if r[:1] != "-"]) > 1:
        return "`git symbolic-ref` with a target changes a reference"
    return None


_GIT_SPECIAL: dict[str, GitCheck] = {
    "branch": _git_branch,
    "tag": _git_tag,
    "remote": _git_remote,
    "config": _git_config,
    "stash": _git_first_word("stash", frozenset({"list", "show"}), default_ok=False),
    "worktree": _git_first_word("worktree", frozenset({"list"}), default_ok=False),
    "reflog": _git_first_word("reflog", frozenset({"show", "exists"}), default_ok=True),
    "submodule": _git_first_word("submodule", frozenset({"status", "summary"}), default_ok=True),
    "notes": _git_first_word("notes", frozenset({"list", "show"}), default_ok=True),
    "symbolic-ref": _git_symbolic_ref,
}


_CHECKERS: dict[str, Checker] = {
    "git": _check_git,
    "find": _check_find,
    "sed": _check_sed,
    "gsed": _check_sed,
    "awk": _check_awk,
    "gawk": _check_awk,
    "mawk": _check_awk,
    "nawk": _check_awk,
    "sort": _check_sort,
    "uniq": _check_uniq,
    "tree": _check_tree,
    "file": _check_file,
    "rg": _check_rg,
    "yq": _check_yq,
    "date": _check_date,
    "hostname": _check_hostname,
    "curl": _version_only("curl"),
    "pip": _subcommand_check(frozenset({"list", "show", "freeze", "check", "help"}), "pip"),
    "pip3": _subcommand_check(frozenset({"list", "show", "freeze", "check", "help"}), "pip3"),
    "npm": _subcommand_check(
        frozenset(
            {
                "ls",
                "list",
                "ll",
                "la",
                "explain",
                "why",
                "root",
                "prefix",
                "help",
            }
        ),
        "npm",
    ),
    "pnpm": _subcommand_check(frozenset({"ls", "list", "why", "root"}), "pnpm"),
    "yarn": _subcommand_check(frozenset({"list", "why"}), "yarn"),
    "cargo": _version_only("cargo"),
    "go": _check_go,
    "python": _version_only("python"),
    "python3": _version_only("python3"),
    "node": _version_only("node"),
}


# --------------------------------------------------------------------------- wrappers


def _wrap_env(args: list[Word], from_stdin: bool) -> str | None:
    i = 0
    while i < len(args):
        text = args[i].text
        if text in ("-i", "-0", "--ignore-environment", "--null", "-"):
            i += 1
        elif text in ("-u", "--unset"):
            i += 2
        elif text.startswith("--unset="):
            i += 1
        elif text.startswith("-"):
            return f"`env {text}` is not a known read-only option"
        elif _ASSIGNMENT.match(text):
            if problem := _assignment_problem(args[i]):
                return problem
            i += 1
        else:
            break
    return _words_problem(args[i:], from_stdin) if i < len(args) else None


Wrapper = Callable[[list[Word], bool], "str | None"]


def _wrapper(
    name: str,
    skip_values: tuple[str, ...] = (),
    *,
    bad_short: str = "",
    bad_long: tuple[str, ...] = (),
    short_values: str = "",
) -> Wrapper:
    """``builtin``/``nice``/``time``: options, then the wrapped command, checked as such.

    Forbidden options are found as ``_option_problem`` finds them: long ones by prefix
    (``--out=x`` is ``--output``), short ones glued (``-ox``, ``-ao x``).
    """

    def wrap(args: list[Word], from_stdin: bool) -> str | None:
        i = 0
        while i < len(args) and args[i].text.startswith("-"):
            text = args[i].text
            if problem := _option_problem(
                name, [args[i]], bad_short=bad_short, bad_long=bad_long, short_values=""
            ):
                return problem
            i += 1
            if text in skip_values or (
                not text.startswith("--") and len(text) > 1 and text[-1] in short_values
            ):
                i += 1  # the option's value
            if text == "--":
                break
        return _words_problem(args[i:], from_stdin) if i < len(args) else None

    return wrap


def _wrap_command(args: list[Word], from_stdin: bool) -> str | None:
    if args and args[0].text in ("-v", "-V"):
        return None  # a lookup: "command -v git"
    return _wrapper("command")([a for a in args if a.text != "-p"], from_stdin)


def _wrap_timeout(args: list[Word], from_stdin: bool) -> str | None:
    i = 0
    while i < len(args) and args[i].text.startswith("-"):
        i += 2 if args[i].text in ("-s", "-k", "--signal", "--kill-after") else 1
    return _words_problem(args[i + 1 :], from_stdin) if i + 1 < len(args) else None


def _wrap_xargs(args: list[Word], from_stdin: bool) -> str | None:
    i = 0
    while i < len(args) and args[i].text.startswith("-"):
        text = args[i].text
        if text in ("-p", "--interactive", "-o", "--open-tty"):
            return f"`xargs {text}` is interactive"
        with_value = len(text) == 2 and text[1] in "IndPLsEa"
        i += 2 if with_value else 1
    if i >= len(args):
        return None  # xargs alone runs echo
    return _words_problem(args[i:], from_stdin=True)


def _wrap_shell(args: list[Word], from_stdin: bool) -> str | None:
    i = 0
    script: Word | None = None
    while i < len(args):
        text = args[i].text
        if text == "-o" and i + 1 < len(args) and args[i + 1].text == "pipefail":
            i += 2
        elif re.fullmatch(r"-[ceuxl]+", text):
            i += 1
            if "c" in text:
                script = args[i] if i < len(args) else None
                break
        else:
            break
    if script is None or from_stdin:
        return "running a shell script whose effects are unknown"
    if not script.literal:
        return "the shell script is only known at run time"
    ok, reason = is_read_only_command(script.text)
    return None if ok else reason


def _check_printf(args: list[Word], from_stdin: bool) -> str | None:
    # Only the first word can be an option; "-v 'a[$(touch x)]'" evaluates the subscript.
    # Under xargs it is /usr/bin/printf, which has no -v.
    first = args[0] if args else None
    if first is None or from_stdin:
        return None
    if first.text.startswith("-v"):
        return "`printf -v` sets a variable (a subscript in its name runs code)"
    if first.text.startswith("-") and first.text not in ("-", "--"):
        return f"`printf {first.text}` is not a known read-only option"
    if first.risky or first.splits:
        return f"the `printf` format `{first.text}` expands at run time and could be `-v`"
    return None


def _check_test(args: list[Word], from_stdin: bool) -> str | None:
    # "-v NAME" and "-R NAME" evaluate an array subscript in NAME ("a[$(touch x)]" runs
    # touch); a word that expands could be either, or the name. Under xargs it is
    # /usr/bin/test, which evaluates no variable.
    if from_stdin:
        return None
    for word in args:
        if word.literal and word.text in ("-v", "-R"):
            return f"`test {word.text}` evaluates a variable name (a subscript in it runs code)"
        if word.splits and not word.literal:
            return f"the `test` argument `{word.text}` may become several words"
    # A unary operator's operand is the word after it, in bash's every form of test.
    for word, after in itertools.pairwise(args):
        if word.risky and (not after.literal or "[" in after.text):
            return f"the `test` argument `{word.text}` could be `-v` (and `{after.text}` a name)"
    return None


_BUILTINS: dict[str, Wrapper] = {"printf": _check_printf, "test": _check_test, "[": _check_test}

_WRAPPERS: dict[str, Wrapper] = {
    "env": _wrap_env,
    "command": _wrap_command,
    "builtin": _wrapper("builtin"),
    "time": _wrapper(
        "time",
        skip_values=("--format",),
        bad_short="oa",
        bad_long=("output", "append"),
        short_values="f",
    ),
    "nice": _wrapper("nice", skip_values=("-n", "--adjustment")),
    "timeout": _wrap_timeout,
    "xargs": _wrap_xargs,
    "sh": _wrap_shell,
    "bash": _wrap_shell,
    "zsh": _wrap_shell,
    "dash": _wrap_shell,
}

READ_ONLY_EXAMPLES = (
    "ls, cat, head, tail, wc, grep, rg, find (without -delete/-exec rm), sed -n, "
    "git status/log/diff/show/blame"
)
"""A short list for messages that tell the model what it may run."""
