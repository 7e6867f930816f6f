"""A small POSIX-shell subset for the Linux-based devices (GPU hosts, SONiC, Cumulus).

Collectors send single commands or short scripts on exec channels (``cmd1; echo MARK; cmd2``,
``cmd 2>&1``, ``sh -c '...'``). This runs exactly that subset: sequences (``;``, newline,
``&&``, ``||``), pipelines into ``cat``/``head``/``tail``/``grep``, the redirections
``2>&1``, ``2>/dev/null``, ``>/dev/null``, ``>&2``, ``</dev/null``, ``VAR=value`` prefixes,
``sudo``/``timeout N``/``env``/``command`` prefixes (``sudo -n`` is kept: the device answers it as its
sudoers would), ``sh -c``/``bash -c``, and the builtins
``echo``, ``printf``, ``true``, ``false``, ``exit``, ``:``, ``export``. Anything else is a
simple command handed to the platform renderer.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field

from fabline.sim.render.common import Answer

Simple = Callable[[str], Answer]

_REDIRECT = frozenset((">", ">&", ">>", "<"))
_SAFE = re.compile(r"^[\w@%+=:,./*?\[\]{}|-]+$")
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# Characters that need shlex's state machine: escapes and comments.
_SPECIAL = re.compile(r"[\\#]")
# Otherwise a token is a run of operator characters, or a word: a run of anything but blanks,
# operators and quotes, and quoted strings; a quote without its closing one is an error (group 3).
_TOKEN = re.compile(r"""([;&|<>\n]+)|((?:[^ \t\r;&|<>\n'"]+|'[^']*'|"[^"]*")+)|(['"])""")
_UNQUOTED = re.compile(r"[;&|<>\n]+|[^ \t\r;&|<>\n]+")
_QUOTED = re.compile(r"'([^']*)'|\"([^\"]*)\"")


class SessionDrop(Exception):
    """The device drops the connection; ``partial`` is what it had sent before.

    With ``stream`` set (``fast`` or ``slow``) the device does not drop the connection: after
    ``partial`` it prints output without end (a runaway command), at full speed or a line at a time.
    """

    def __init__(self, partial: str, stream: str | None = None) -> None:
        super().__init__("session dropped" if stream is None else "endless output")
        self.partial = partial
        self.stream = stream


@dataclass
class _Result:
    # Output pieces, joined once at the end (a script of a hundred commands appends a hundred).
    out: list[str] = field(default_factory=list)
    err: list[str] = field(default_factory=list)
    code: int = 0
    exited: bool = False


def command_line(argv: list[str]) -> str:
    """Join words back into a command line, quoting only words that need it.

    Example:
        >>> command_line(["grep", "-H", ".", "/sys/class/net/eth0/ecn/roce_*/enable/*"])
        'grep -H . /sys/class/net/eth0/ecn/roce_*/enable/*'
    """
    return " ".join(w if _SAFE.match(w) else shlex.quote(w) for w in argv)


def _tokens(script: str) -> list[str]:
    """Split a script into words and operators the way ``shlex`` (POSIX, punctuation) does.

    A script without backslashes or comments (what collectors send) is split by regular
    expressions; anything else goes through :mod:`shlex`.

    Example:
        >>> _tokens("ethtool -i eth0 2>&1; echo M\"\"_END $? >&2")
        ['ethtool', '-i', 'eth0', '2', '>&', '1', ';', 'echo', 'M_END', '$?', '>&', '2']
    """
    if "'" not in script and '"' not in script and _SPECIAL.search(script) is None:
        return _UNQUOTED.findall(script)
    if _SPECIAL.search(script) is None:
        tokens = []
        for op, word, stray in _TOKEN.findall(script):
            if stray:
                raise ValueError("No closing quotation")
            if op:
                tokens.append(op)
            elif "'" in word or '"' in word:
                tokens.append(
                    _QUOTED.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(2), word)
                )
            else:
                tokens.append(word)
        return tokens
    lex = shlex.shlex(script, posix=True, punctuation_chars=";&|<>\n")
    lex.whitespace = " \t\r"
    lex.whitespace_split = True
    lex.commenters = "#"
    return list(lex)


def _printf(args: list[str]) -> str:
    if not args:
        return ""
    fmt = args[0].replace("\\n", "\n").replace("\\t", "\t")
    values = iter(args[1:])
    return re.sub(r"%[sd]", lambda _m: next(values, ""), fmt).replace("%%", "%")


def _filter(name: str, args: list[str], text: str) -> tuple[str, int] | None:
    lines = text.splitlines(keepends=True)
    if name == "cat" and not args:
        return text, 0
    if name in ("head", "tail"):
        n = 10
        for i, a in enumerate(args):
            if a == "-n" and i + 1 < len(args) and args[i + 1].isdigit():
                n = int(args[i + 1])
            elif re.fullmatch(r"-n?\d+", a):
                n = int(a.lstrip("-n"))
        return "".join(lines[:n] if name == "head" else lines[-n:] if n else []), 0
    if name == "grep" and args:
        invert = "-v" in args
        pattern = (
            next(a for a in args if not a.startswith("-")) if any(not a.startswith("-") for a in args) else ""
        )
        kept = [ln for ln in lines if (re.search(pattern, ln) is None) == invert]
        return "".join(kept), 0 if kept else 1
    if name == "wc" and args == ["-l"]:
        return f"{len(lines)}\n", 0
    return None


class Shell:
    """Runs scripts against a platform's simple-command renderer."""

    def __init__(self, simple: Simple, not_found: Callable[[str], Answer]) -> None:
        self.simple = simple
        self.not_found = not_found
        self.last = 0

    def run(self, script: str) -> Answer:
        """Run a script; stdout, stderr and the exit status of the last command.

        Raises:
            SessionDrop: A command's answer was cut by a dropped connection.
        """
        try:
            tokens = _tokens(script)
        except ValueError:
            return Answer("", 2, "bash: syntax error: unexpected end of file\n")
        res = _Result()
        try:
            self._sequence(tokens, res)
        except SessionDrop as drop:
            raise SessionDrop("".join(res.out) + drop.partial, drop.stream) from None
        return Answer("".join(res.out), res.code, "".join(res.err))

    def _sequence(self, tokens: list[str], res: _Result) -> None:
        # Split into (operator, pipeline) pairs; the operator decides whether the pipeline runs.
        op = ";"
        current: list[str] = []
        items: list[tuple[str, list[str]]] = []
        for t in [*tokens, ";"]:
            if t in (";", "\n", "&&", "||", "&"):
                if current:
                    items.append((op, current))
                op = ";" if t in ("\n", "&") else t
                current = []
            else:
                current.append(t)
        for op, words in items:
            if op == "&&" and self.last != 0:
                continue
            if op == "||" and self.last == 0:
                continue
            self._pipeline(words, res)
            if res.exited:
                return

    def _pipeline(self, words: list[str], res: _Result) -> None:
        stages: list[list[str]] = [[]]
        if "|" in words:
            for w in words:
                if w == "|":
                    stages.append([])
                else:
                    stages[-1].append(w)
        else:
            stages[0] = words
        out, err, code = self._simple(stages[0], res)
        for stage in stages[1:]:
            argv, _redir = self._redirections(stage)
            while argv[:1] == ["sudo"]:
                argv = argv[1:]
            if not argv:
                continue
            if argv[0] == "tee" and len(argv) == 2:
                # tee writes the piped text (a writable device's configuration: sysfs, configfs,
                # /etc); the device decides what the file is, through the simple command.
                from fabline.sim.config.stdin import STDIN

                token = STDIN.set(out)
                try:
                    answer = self.simple(command_line(argv))
                finally:
                    STDIN.reset(token)
                out, code, err = answer.out, answer.code, err + answer.err
                continue
            filtered = _filter(argv[0], argv[1:], out)
            if filtered is None:
                err += f"bash: {argv[0]}: not supported after a pipe by the simulator\n"
                out, code = "", 2
            else:
                out, code = filtered
        if out:
            res.out.append(out)
        if err:
            res.err.append(err)
        res.code = self.last = code

    @staticmethod
    def _redirections(words: list[str]) -> tuple[list[str], list[str]]:
        if _REDIRECT.isdisjoint(words):
            return list(words), []
        argv: list[str] = []
        redir: list[str] = []
        i = 0
        while i < len(words):
            w = words[i]
            nxt = words[i + 1] if i + 1 < len(words) else ""
            if w.isdigit() and nxt in (">", ">&", ">>") and i + 2 < len(words):
                redir.append(f"{w}{nxt}{words[i + 2]}")
                i += 3
                continue
            if w in (">", ">&", ">>", "<") and nxt:
                redir.append(f"{'1' if w != '<' else ''}{w}{nxt}")
                i += 2
                continue
            argv.append(w)
            i += 1
        return argv, redir

    def _simple(self, words: list[str], res: _Result) -> tuple[str, str, int]:
        argv, redir = self._redirections(words)
        while argv and _ASSIGN.match(argv[0]):
            argv = argv[1:]
        while argv and argv[0] in ("sudo", "command", "env", "exec", "timeout", "nice"):
            if argv[:2] == ["sudo", "-n"]:
                break  # non-interactive sudo: the device's sudoers decide (a host renderer answers it)
            head = argv.pop(0)
            if head == "timeout" and argv:
                argv.pop(0)
            while argv and (argv[0].startswith("-") or _ASSIGN.match(argv[0])):
                argv.pop(0)
        if "$?" in argv:
            argv = [str(self.last) if a == "$?" else a for a in argv]
        out, err, code = "", "", 0
        if not argv:
            pass
        elif argv[0] in ("sh", "bash") and len(argv) >= 3 and argv[1] == "-c":
            inner = Shell(self.simple, self.not_found).run(argv[2])
            out, err, code = inner.out, inner.err, inner.code
        elif argv[0] == "echo":
            args = argv[1:]
            newline = "\n"
            if args[:1] == ["-n"]:
                args, newline = args[1:], ""
            out = " ".join(args) + newline
        elif argv[0] == "printf":
            out = _printf(argv[1:])
        elif argv[0] in ("true", ":", "export", "set", "unset", "cd"):
            pass
        elif argv[0] == "false":
            code = 1
        elif argv[0] == "exit":
            code = int(argv[1]) if len(argv) > 1 and argv[1].isdigit() else self.last
            res.exited = True
        else:
            answer = self.simple(command_line(argv))
            out, err, code = answer.out, answer.err, answer.code
        for r in redir:
            if r in ("2>&1",):
                out, err = out + err, ""
            elif r in ("2>/dev/null", "2>>/dev/null"):
                err = ""
            elif r in ("1>/dev/null", "1>>/dev/null"):
                out = ""
            elif r in ("1>&2",):
                out, err = "", err + out
        return out, err, code
