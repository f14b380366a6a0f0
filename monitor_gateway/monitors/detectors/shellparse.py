"""Shell commands as a shell reads them, parsed with ``shlex`` rather than pattern-matched:
logical lines, simple commands with what each pipes into, the wrappers and keywords before
the real program dropped (``sudo``, ``env``, ``timeout``, a loop's ``do``), the variables a
script sets (``D=/srv/x``, ``for d in a b``) read into the words that use them, a path moved
then used read as the path it was (``mv data /tmp/old && rm -rf /tmp/old``), a directory
emptied by ``rsync --delete`` from one the script made as ``rm -rf``, and the
commands run inside another (``ssh host '...'``, ``bash -c``, ``python -c`` through
``subprocess``, ``node -e``, ``perl -e``, ``xargs`` with what ``echo`` feeds it, ``kubectl
exec``, ``docker exec``, ``find -delete``) or by a Python script (``shutil.rmtree``, a
storage SDK's deletions, the files it reads, an HTTP call that verifies no certificate,
the SQL it executes). The shell family's checks read
these; so do the offline monitor's acts (a nested command is an act of its own).
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import posixpath
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from itertools import islice, pairwise, product, takewhile

from .cues import cued
from .parts import Part, parse_python

_SEPARATORS = {"|", "||", "&&", ";", "&", "|&"}
_PYTHON = re.compile(r"python(?:\d(?:\.\d{1,2})?)?")
# what runs a shell command from Python: subprocess's calls, os.system and os.popen
_RUNS = {"run", "call", "check_call", "check_output", "Popen", "system", "popen", "getoutput",
         "getstatusoutput"}
_WRAPPERS = {"sudo", "nohup", "time", "timeout", "env", "nice", "exec", "command", "doas", "npx"}
_NESTED = {"ssh", "bash", "sh", "zsh"}
# the database clients, which run the SQL they are given (``-c``, ``-e``, ``-f``, ``<``)
SQL_CLIENTS = frozenset(("psql", "mysql", "mariadb", "sqlite3", "sqlcmd", "clickhouse-client",
                         "snowsql", "cqlsh", "bq"))
# interpreters that run a script given on the command line, by the option that gives it
_EVALUATORS = {"node": {"-e", "--eval", "-p", "--print"}, "perl": {"-e", "-E"},
               "ruby": {"-e"}}
# what such a script runs or deletes: a shell command, a tree
_SCRIPT_RUNS = re.compile(r"\b(?:execSync|exec|spawnSync|system|qx|`)\(?\s{0,3}(['\"`])"
                          r"(?P<command>[^'\"`]{1,500})\1")
_SCRIPT_DELETES = re.compile(r"\b(?P<call>rmSync|rmdirSync|rm|rmdir|removeSync|remove|"
                             r"emptyDirSync|rmtree|remove_tree|rm_rf|rm_r)\(?\s{0,3}(['\"`])"
                             r"(?P<path>[^'\"`]{1,300})\2")
# an HTTP client's calls and clients, which take ``verify=False`` (requests, httpx)
_HTTP_CALLS = {"get", "post", "put", "patch", "delete", "head", "options", "request", "stream",
               "Client", "AsyncClient"}
# what names the path it is given: ``~`` or a link expanded, made absolute
_SAME_PATH = {"expanduser", "expandvars", "abspath", "realpath", "resolve", "absolute"}
# what runs SQL from Python: DB-API cursors, SQLAlchemy's connections and ``text``
_QUERIES = {"execute", "executemany", "executescript", "exec_driver_sql", "text", "read_sql",
            "read_sql_query"}
# the words of the shell's grammar before a command (``for d in a; do rm -rf $d; done``)
_KEYWORDS = {"do", "then", "else", "elif", "if", "while", "until", "!", "{"}
_ASSIGNMENT = re.compile(r"[A-Za-z_]\w{0,60}=")
# a brace group: no whitespace nor a double quote in it (a word holding either was quoted,
# ``-d '{"text": "a, b"}'``, and bash expands no quoted brace)
_BRACES = re.compile(r"(?<!\$)\{([^{}$\s\"]*,[^{}$\s\"]*)\}")
# an assignment of a literal value (``T=sessions``, ``Q="DELETE FROM users"``), and what
# makes a value not one (a command's output, another variable)
_LITERAL_ASSIGNMENT = re.compile(r"(?<![^\s;&|])(?:export\s{1,3})?([A-Za-z_]\w{0,60})="
                                 r"(\"[^\"$`\\]{0,1000}\"|'[^']{0,1000}'|[^\s;&|$`'\"\\()]{1,1000})"
                                 r"(?=[\s;&|]|$)")
_NOT_LITERAL = re.compile(r"[$`]")
# a ``sed`` substitution, ``s/old/new/g`` with any delimiter, and a regular expression's
# escape (``\.``, ``\/``)
_SUBSTITUTION = re.compile(r"s(?P<d>[/|#,:@!%])(?P<old>(?:\\.|(?!(?P=d)).){1,500})(?P=d)"
                           r"(?P<new>(?:\\.|(?!(?P=d)).){0,500})(?P=d)[gIip0-9]{0,4}$", re.S)
_UNESCAPED = re.compile(r"\\([^\w])")
# what runs a command written whole in Python: a call ``python_commands`` reads
_RUNS_SHELL = re.compile(r"\b(?:subprocess|system|popen|getoutput|getstatusoutput)\b")
# what reads or checks a file a script downloaded before it runs it
_CHECKERS = frozenset(("sha256sum", "sha512sum", "shasum", "md5sum", "b2sum", "gpg", "cosign",
                       "minisign", "cat", "less", "more", "head", "bat", "diff", "grep"))
_WORDS_APART = re.compile(r"\s")  # a value the shell splits into words
_REFERENCE = re.compile(r"\$(?:\{([A-Za-z_]\w{0,60})\}|([A-Za-z_]\w{0,60}))")
_EXPANSIONS = 64  # the most words one word expands to (a loop over a loop's values)
_GROUPS, _PATH = 4, 1024  # the most brace groups expanded in a word, and its longest
_DEPTH = 40  # the most nested parts a Python path is read through
_GLOB_CHARS = re.compile(r"[*?\[]")  # a word that is a pattern, not a name spelled whole
# what a ``find`` selects by beyond where it looks: with none, it deletes all it finds
_FIND_SELECTS = {"-name", "-iname", "-path", "-ipath", "-wholename", "-regex", "-iregex",
                 "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-newer", "-size",
                 "-user", "-group", "-empty", "-perm", "-links", "-inum", "-samefile",
                 "-uid", "-gid", "-nouser", "-nogroup", "-prune", "-not", "!", "-o", "-or"}


@dataclass(frozen=True, slots=True)
class Command:
    argv: list[str]
    piped_to: list[str]
    written: list[str]  # as written, with its variable assignments and wrappers
    cwd: str = ""  # the absolute directory the script ``cd``-ed to, where it says
    # the copies the script made (``cp .env /tmp/env.bak``): each copy to what it copies
    copied: dict[str, str] = field(default_factory=dict)
    # the files it downloaded before, each with the words that fetched it
    downloaded: dict[str, str] = field(default_factory=dict)
    fed: list[str] = field(default_factory=list)  # the words of the command piping into it

    def path(self, word: str) -> str:
        """A path the command names, absolute where the script says where it is."""
        if not self.cwd or word.startswith(("/", "~", "$", "-")):
            return word
        return posixpath.normpath(posixpath.join(self.cwd, word))

    def original(self, word: str) -> str:
        """The file a word names, read through the copies the script made: ``/tmp/k``
        after ``cp ~/.ssh/id_rsa /tmp/k`` is the key (``f=@/tmp/k`` too, as curl sends it)."""
        if not self.copied:
            return word
        path = word.rpartition("@")[2]
        return self.copied.get(posixpath.normpath(path), word) if path else word


def logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """Logical lines, offsets of their first character: backslash continuations joined,
    and a quote left open at a line's end read on to where it closes, as a shell reads it
    (``python3 -c "`` then the program's lines then ``"``). A quote that never closes, or
    only after ``_QUOTE_LENGTH`` characters, leaves its line alone; a heredoc's lines (``<<EOF``
    to ``EOF``) are read one by one, whatever quotes they hold."""
    start, body = 0, ""  # where the line starts; the closer of the heredoc it is in
    lines = [(m.start(), m.end()) for m in _NEWLINE.finditer(text)] + [(len(text), len(text))]
    index = 0
    while index < len(lines):
        end = lines[index][0]
        line = text[start:end]
        if body:
            body = "" if line.strip() == body or line.lstrip("\t") == body else body
        elif ("'" in line or '"' in line) and (closed := _closed(text, start, end)) > end:
            while index + 1 < len(lines) and lines[index][0] < closed:
                index += 1  # the line goes on to the newline after its last quote closes
            end = lines[index][0]
            line = text[start:end]
        if not body and (heredoc := _HEREDOC_START.search(line)):
            body = heredoc.group(2)
        yield start, line
        start = lines[index][1]
        index += 1


_NEWLINE = re.compile(r"(?<!\\)\n")
# a line's words up to a quote it leaves open: plain characters, escapes, closed quotes, a
# ``#`` inside a word (a comment starts at one outside a word: its apostrophes are words)
_CLOSED = re.compile(r"""(?:[^'"\\#\n]|\\.|'[^']*'|"(?:[^"\\]|\\.)*"|(?<=\S)#)*""", re.S)
_QUOTED = {"'": re.compile(r"'[^']*'"), '"': re.compile(r'"(?:[^"\\]|\\.)*"', re.S)}
_QUOTE_LENGTH = 20_000  # the most characters a quote open at a line's end is read on for
_HEREDOC_START = cued(r"(?<!<)<<-?[ \t]{0,3}([\"']?)([A-Za-z_][\w.-]{0,30})\1")


def _closed(text: str, start: int, end: int) -> int:
    """Where the last quote a line from ``start`` to ``end`` leaves open closes (past
    ``end``); ``end`` where it leaves none open, or where one does not close within
    ``_QUOTE_LENGTH`` characters."""
    at = start
    while (found := _CLOSED.match(text, at, end)) and (at := found.end()) < end:
        if text[at] not in _QUOTED:  # a comment, or a backslash at the end
            return end
        quoted = _QUOTED[text[at]].match(text, at, min(len(text), at + _QUOTE_LENGTH))
        if quoted is None:
            return end
        at = quoted.end()
        if at > end:  # closes on a later line: read that line's rest as this one's
            newline = _NEWLINE.search(text, at)
            end = newline.start() if newline else len(text)
    return end


@dataclass
class Shell:
    """What a script has set so far, for the commands after: its variables (each with
    the values a loop gives it, or the one it was assigned), the paths it moved (where
    each is now, to where it was) and the files it copied (each copy, to its original:
    the copy holds what the original does, while the original stays where it was)."""

    variables: dict[str, list[str]] = field(default_factory=dict)
    moved: dict[str, str] = field(default_factory=dict)
    copied: dict[str, str] = field(default_factory=dict)
    cwd: str = ""  # where the script ``cd``-ed to, where it says an absolute directory
    made: set[str] = field(default_factory=set)  # the directories it made, empty
    # the files curl or wget saved, each with the command's words that fetched it
    downloaded: dict[str, str] = field(default_factory=dict)

    def snapshot(self) -> Shell:
        """A copy of what the script has set so far, for a line read again apart."""
        return Shell({name: list(values) for name, values in self.variables.items()},
                     dict(self.moved), dict(self.copied), self.cwd, set(self.made),
                     dict(self.downloaded))

    def emptied(self, argv: list[str]) -> str:
        """What an ``rsync --delete`` from a directory the script made (so empty) into
        another amounts to: ``rm -rf`` of all the other holds. Empty where none."""
        paths = [w.rstrip("/") for w in argv[1:] if not w.startswith("-")]
        if argv[:1] != ["rsync"] or not any(w.startswith("--delete") for w in argv) or \
                len(paths) != 2 or paths[0] not in self.made or not paths[1]:
            return ""
        return shlex.join(["rm", "-rf", paths[1] + "/*"])

    def expand(self, word: str) -> list[str]:
        """The words ``word`` stands for: each variable it uses read as its values (an
        unknown one left as written), a brace expansion as its words, a path it was moved
        to read as where it was."""
        if "$" not in word and "{" not in word:  # most words: nothing to expand
            return [self.moved.get(word.rstrip("/"), word)] if self.moved else [word]
        found = [m for m in _REFERENCE.finditer(word)
                 if (m.group(1) or m.group(2)) in self.variables]
        pieces: list[list[str]] = []
        at = 0
        for m in found:
            pieces.append([word[at:m.start()]])
            pieces.append(self.variables[m.group(1) or m.group(2)])
            at = m.end()
        pieces.append([word[at:]])
        words = ["".join(chosen) for chosen in islice(product(*pieces), _EXPANSIONS)]
        if found and any(len(w) > _PATH for w in words):
            words = [word]  # a value that grows with each use (``D=$D$D``) is not read
        return [self.moved.get(w.rstrip("/"), w) for word in words for w in _braces(word)]

    def expanded(self, line: str) -> tuple[str, list[int]]:
        """The line with each variable it uses that holds one literal value written as
        that value: one the script assigned before, or this line did before the use
        (``T=sessions; psql -c "TRUNCATE $T"``); and, for each character of that text,
        where it stands in the line (-1 inside a value written in). A value that runs
        something (``$(...)``, a backquote) or uses another variable is not read, nor is
        a line longer than ``_CACHED_LINE``, which is returned as it is."""
        values = {name: words[0] for name, words in self.variables.items()
                  if len(words) == 1 and not _NOT_LITERAL.search(words[0])}
        assigned = [(m.end(), m.group(1), m.group(2).strip("'\"")) for m in
                    _LITERAL_ASSIGNMENT.finditer(line)] if "=" in line else []
        if len(line) > _CACHED_LINE or not (values or assigned):
            return line, list(range(len(line)))
        text, where, at = [], [], 0
        for found in _REFERENCE.finditer(line):
            name = found.group(1) or found.group(2)
            value = next((v for end, n, v in reversed(assigned)
                          if n == name and end <= found.start()), values.get(name))
            if value is None:
                continue
            text += [line[at:found.start()], value]
            where += [*range(at, found.start()), *[-1] * len(value)]
            at = found.end()
        text.append(line[at:])
        where += range(at, len(line))
        return "".join(text), where

    def read(self, segment: list[str], fed: list[str] | None = None) -> list[str]:
        """A simple command's words expanded; an assignment or a loop's ``for`` remembered
        (an assignment's value is read as a single word, the way a quoted one is used);
        a file copied remembered, however it was: ``cp``, ``mv`` (the file moved holds what
        it held), ``cat a > b``, and a ``tee b`` that ``fed``, the words of the command
        piping into it, shows to be fed by ``cat a``."""
        words = [w for word in segment for w in self.expand(word)]
        argv = words
        while argv[:1] and argv[0] in _KEYWORDS:
            argv = argv[1:]
        assigning = argv[1:] if argv[:1] in (["export"], ["local"], ["readonly"]) else argv
        if assigning and all(_ASSIGNMENT.match(w) for w in assigning):
            for w in assigning:
                name, value = w.split("=", 1)
                self.variables[name] = [value]
        elif argv[:1] == ["for"] and argv[2:3] == ["in"] and not any(
                w.startswith("$") or "(" in w or "`" in w for w in argv[3:]):
            self.variables[argv[1]] = argv[3:][:_EXPANSIONS]
        elif argv[:1] == ["mv"]:
            paths = [w.rstrip("/") for w in argv[1:] if not w.startswith("-")]
            if len(paths) == 2 and all(paths):
                self.moved[paths[1]] = paths[0]
                self._copy(*paths)
        elif argv[:1] == ["cp"]:
            paths = [w.rstrip("/") for w in argv[1:] if not w.startswith("-")]
            if len(paths) == 2 and all(paths):
                self._copy(*paths)
        elif argv[:1] == ["cat"] and len(argv) == 4 and argv[2] in (">", ">>"):
            self._copy(argv[1], argv[3])
        elif argv[:1] == ["tee"] and fed and fed[0] == "cat" and len(fed) == 2:
            for copy in argv[1:argv.index(">") if ">" in argv else len(argv)]:
                if not copy.startswith("-"):
                    self._copy(fed[1], copy)
        elif argv[:1] in (["curl"], ["wget"]):
            options = option_values(argv[1:])
            saved = options.get("-o") or options.get("--output") or options.get("-O") or \
                options.get("--output-document")
            if saved and saved != "-":
                self.downloaded[posixpath.normpath(saved)] = " ".join(argv)
        elif self.downloaded and argv[:1] and argv[0] in _CHECKERS:
            # a download read or checked before it runs is run read
            for word in argv[1:]:
                self.downloaded.pop(posixpath.normpath(word), None)
        elif argv[:1] == ["mkdir"]:
            self.made.update(w.rstrip("/") for w in argv[1:] if not w.startswith("-"))
        elif argv[:1] in (["cd"], ["pushd"]) and len(argv) == 2:
            where = argv[1]
            self.cwd = posixpath.normpath(where) if where.startswith("/") else \
                posixpath.normpath(posixpath.join(self.cwd, where)) \
                if self.cwd and not where.startswith(("~", "$", "-")) else ""
        return words


    def _copy(self, source: str, copy: str) -> None:
        """Remembers ``copy`` (a file, or the directory it went into) as holding what
        ``source`` holds: the file it was copied from, through any copies before."""
        source, copy = posixpath.normpath(source), posixpath.normpath(copy)
        original = self.copied.get(source, source)
        self.copied[copy] = original
        self.copied[posixpath.join(copy, posixpath.basename(source))] = original


def _braces(word: str) -> list[str]:
    """A word's brace expansion (``/srv/{a,b}`` is ``/srv/a`` and ``/srv/b``), group by
    group: at most ``_GROUPS`` groups of a word of at most ``_PATH`` characters, and
    ``_EXPANSIONS`` words (a path has no more; a hostile word costs no more than a long
    one, and the rest is left as written). ``{}`` and ``${...}`` are no group."""
    words = [word]
    for _ in range(_GROUPS if len(word) <= _PATH else 0):
        searched = [(w, _BRACES.search(w)) for w in words]
        if not any(found for _, found in searched):
            break
        words = [w[:found.start()] + alternative + w[found.end():] if found else w
                 for w, found in searched
                 for alternative in (found.group(1).split(",") if found else [""])
                 ][:_EXPANSIONS]
    return words


def _lexed(line: str) -> tuple[str, ...]:
    """A line's words and separators, as a shell splits them."""
    try:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        return tuple(lexer)
    except ValueError:  # an unbalanced quote: read it as plain words
        return tuple(line.split())


# every family reads the same commands: a line of ordinary length is split once
_CACHED_LINE = 4096
_tokens = functools.lru_cache(maxsize=1024)(_lexed)


def commands(line: str, shell: Shell | None = None) -> Iterator[Command]:
    """Each simple command of a shell line, with what it pipes into; nested command strings
    (``ssh host '...'``, ``bash -c '...'``, ``sudo``, ``xargs``) are unwrapped. ``shell``
    holds what the lines before set (a script's lines share one); a line alone starts
    afresh."""
    shell = shell if shell is not None else Shell()
    before = shell.snapshot() if "$" in line and (shell.variables or "=" in line) else None
    tokens = _tokens(line) if len(line) <= _CACHED_LINE else _lexed(line)
    segments: list[list[str]] = [[]]
    pipes: list[bool] = []
    for token in tokens:
        if token in _SEPARATORS:
            pipes.append(token in ("|", "|&"))
            segments.append([])
        else:
            segments[-1].append(token)
    read: list[list[str]] = []
    cwds: list[str] = []  # each segment's words, and where it runs
    for index, segment in enumerate(segments):
        cwds.append(shell.cwd)
        read.append(shell.read(segment, read[-1] if index and pipes[index - 1] else None))
    for index, segment in enumerate(read):
        argv = _unwrap(segment)
        if not argv:
            continue
        piped = pipes[index] if index < len(pipes) else False
        after = _unwrap(read[index + 1]) if piped else []
        feeding = _unwrap(read[index - 1]) if index and pipes[index - 1] else []
        yield Command(argv, after, segments[index], cwds[index], shell.copied, shell.downloaded,
                      feeding)
        for nested in _nested(argv, _echoed(feeding)):
            yield from commands(nested, shell)
        if fed := _fed_script(argv, feeding):
            for _, fed_line in logical_lines(fed):
                yield from commands(fed_line, shell)
        if emptied := shell.emptied(argv):
            yield from commands(emptied, shell)
    if before is not None and (split := _split(line, before)):
        yield from commands(split, before)


def _split(line: str, shell: Shell) -> str:
    """The line as the shell runs it where a variable it uses holds more than one word
    (``ARGS='-rf dist'; rm $ARGS``; a one-word value, ``T=rm; $T``, is read as that word
    already): its values written in and the line read again, quotes kept; empty where none
    does. An operator in a value is read as one, where bash would pass it on as a word.
    ``shell`` holds what the lines before set."""
    text, _ = shell.expanded(line)
    if text == line:
        return ""
    used = {found.group(1) or found.group(2) for found in _REFERENCE.finditer(line)}
    values = [value for name in used for value in shell.variables.get(name, ())]
    values += [found.group(2) for found in _LITERAL_ASSIGNMENT.finditer(line)
               if found.group(1) in used]
    return text if any(_WORDS_APART.search(value.strip("'\"")) for value in values) else ""


def _fed_script(argv: list[str], feeding: list[str]) -> str:
    """The script a shell reads from what is piped into it (``echo 'rm -rf dist' | sh``,
    ``printf '%s\\n' '...' | bash``); empty where it runs a file or ``-c`` instead, or what
    feeds it is not printed text."""
    program = argv[0].rsplit("/", 1)[-1]
    if program not in _NESTED - {"ssh"} or any(not w.startswith("-") or w == "-c"
                                               for w in argv[1:]):
        return ""
    printer = feeding[0].rsplit("/", 1)[-1] if feeding else ""
    if printer == "echo":
        printed = " ".join(w for w in feeding[1:] if w not in ("-n", "-e", "-E"))
    elif printer == "printf" and len(feeding) > 1:
        printed = " ".join(feeding[2:]) if "%" in feeding[1] else feeding[1]
    else:
        return ""
    return printed.replace("\\n", "\n")


def script(text: str) -> Iterator[tuple[int, str, Command]]:
    """Each command of a script, with its logical line and where that starts: the lines
    share what the ones before set (``D=/srv/x`` on one, ``rm -rf "$D"`` on the next)."""
    shell = Shell()
    for line_at, line in logical_lines(text):
        for command in commands(line, shell):
            yield line_at, line, command


def nested(text: str) -> Iterator[str]:
    """The command strings the text's commands run inside another (``ssh host '...'``,
    ``bash -c '...'``, ``python -c`` through ``subprocess``, ``kubectl exec --``)."""
    for _, line in logical_lines(text):
        for command in commands(line):
            yield from _nested(command.argv)


def python_programs(text: str) -> Iterator[str]:
    """The programs the text's commands give Python to run (``python3 -c "..."``): code
    the code family reads as it reads a file written."""
    for _, line in logical_lines(text):
        for command in commands(line):
            argv = command.argv
            if _PYTHON.fullmatch(argv[0].rsplit("/", 1)[-1]) and "-c" in argv[1:-1]:
                yield argv[argv.index("-c") + 1]


def python_parts(done: list[Part]) -> Iterator[Part]:
    """The code each command gives ``python -c``, as a part of code of its own: the same
    code in another form than a file written and run."""
    for part in done:
        if part.kind == "command" and "-c" in part.text:
            for program in python_programs(part.text[part.lead:]):
                at = part.text.find(program)  # not found where the shell unquoted it:
                yield dataclasses.replace(  # then quoted without a place, as escaped text is
                    part, kind="code", text=program, path=".py", lead=0, tree=None,
                    base=part.base + max(at, 0), escaped=part.escaped or at < 0)


def python_commands(done: list[Part]) -> Iterator[Part]:
    """The shell commands that Python a tool runs writes whole (``subprocess.run("...",
    shell=True)`` in a ``python`` tool's ``code``), each as a command part of its own: the
    same act as the command run in a shell, read by every family that reads commands.
    Python an answer shows runs nothing; what else a tool's Python amounts to (``shutil
    .rmtree(p)``, a command given as a list) is judged as its script (``python_runs``)."""
    for part in done:
        if part.kind != "code" or ".tool_calls[" not in part.source or \
                not _RUNS_SHELL.search(part.text):
            continue
        for at, run in python_runs(part.text):
            if (found := ran_whole(part, run, at)) >= 0:
                yield dataclasses.replace(part, kind="command", text=run, path="", lead=0,
                                          tree=None, base=part.base + found)


# a line that may edit a file runs an in-place editor, or a printer redirected or teed;
# Python that may write text into one opens it to write, or writes a path's text
_EDITORS = re.compile(r"\b(?:sed|yq|jq)\b")
_PYTHON_WRITES = re.compile(r"\bopen\(|\.write_text\(")


def line_edits(part: Part) -> Iterator[Part]:
    """The edits a command's lines, or a tool's Python, make to files, each as the diff it
    amounts to: the same edit as an edit tool's. A ``sed -i`` substitution is its old text
    a line removed and its new a line added, in each file it edits (where the text holds
    regular expression syntax, it is read as written, without its escapes and anchors);
    what an ``echo`` or a ``printf`` writes or appends to a file (``echo CVE-2024-1234 >>
    .trivyignore``, ``| tee -a``), a here-string given to ``cat`` or ``tee`` (``tee -a f
    <<< CVE-2024-1234``), or Python writes (``open(p, "a").write(...)``, ``python_runs``)
    is lines added; what ``yq -i`` or ``jq`` (its output written to a file) sets
    (``.compilerOptions.strict = false``) is each setting added, ``method`` "set": what it
    was before is not read. Python an answer shows writes nothing."""
    if part.kind == "code":
        if ".tool_calls[" in part.source and _PYTHON_WRITES.search(part.text):
            for _, run in python_runs(part.text):
                for command in commands(run) if run.startswith("printf ") else ():
                    yield from _command_edits(command, part)
        return
    for _, line in logical_lines(part.text[part.lead:]):
        if not (_EDITORS.search(line) or _PYTHON_WRITES.search(line) or "<<<" in line or (
                ("echo" in line or "printf" in line) and (">" in line or "tee" in line))):
            continue  # no line is parsed that runs none of them
        for command in commands(line):
            yield from _command_edits(command, part)


def _command_edits(command: Command, part: Part) -> Iterator[Part]:
    """The edits one simple command makes to files (``line_edits``)."""
    argv = command.argv
    if (argv[0] in ("echo", "printf") or (argv[0] in ("cat", "tee") and "<<<" in argv[:-1])) \
            and (target := _written_to(command)):
        printed = argv[argv.index("<<<") + 1] if argv[0] in ("cat", "tee") else _printed(argv)
        yield Part("diff", part.source, "\n".join(
            "+" + text for text in printed.replace("\\n", "\n").split("\n")
            if text.strip()), escaped=part.escaped, path=command.path(target))
    elif argv[0] in ("yq", "jq") and (assigned := _assigned(command)):
        expression, path = assigned
        yield Part("diff", part.source, "\n".join(
            "+" + setting.strip() for setting in expression.split("|")
            if "=" in setting), escaped=part.escaped, path=command.path(path),
            method="set")
    if argv[0] != "sed" or not any(w.startswith(("-i", "--in-place")) for w in argv):
        return
    scripts, files = _sed_arguments(argv)
    for script in scripts:
        for expression in script.split(";"):
            if (found := _SUBSTITUTION.match(expression.strip())) is None:
                continue
            old, new = (_UNESCAPED.sub(r"\1", found.group(key)).strip("^$")
                        for key in ("old", "new"))
            for path in files or [""]:
                yield Part("diff", part.source, f"-{old}\n+{new}",
                           escaped=part.escaped, path=path)


def _written_to(command: Command) -> str:
    """The file a command's output is written or appended to (``> f``, ``>> f``, ``| tee
    [-a] f``), or ``tee`` itself writes its input to (``tee -a f <<< text``); empty where
    it is printed, piped elsewhere, or thrown away."""
    argv, piped = command.argv, command.piped_to
    at = max((i for i, word in enumerate(argv) if word in (">", ">>")), default=-1)
    if argv[0] == "tee":
        target = next((word for word in takewhile(lambda word: word != "<<<", argv[1:])
                       if not word.startswith("-")), "")
    elif at >= 0:
        target = argv[at + 1] if at + 1 < len(argv) else ""
    elif piped[:1] == ["tee"]:
        target = next((word for word in piped[1:] if not word.startswith("-")), "")
    else:
        return ""
    return "" if target.startswith("/dev/") else target


def _assigned(command: Command) -> tuple[str, str] | None:
    """A ``yq`` or ``jq`` command's expression and the file it reads, where it writes the
    result back (``yq -i``, ``yq e -i``) or to a file (``jq ... f > f.tmp``)."""
    argv = command.argv
    if not ({"-i", "--inplace"} & set(argv) if argv[0] == "yq" else _written_to(command)):
        return None
    words = [word for word in takewhile(lambda word: word not in (">", ">>"), argv[1:])
             if not word.startswith("-")]
    if argv[0] == "yq" and words[:1] in (["e"], ["eval"]):
        words = words[1:]
    return (words[0], words[1]) if len(words) >= 2 and "=" in words[0] else None


def _printed(argv: list[str]) -> str:
    """What an ``echo`` or a ``printf`` prints, up to a redirect: ``echo``'s words without
    its options; ``printf``'s values a line each where its format takes them (``'%s\\n'``),
    else its format."""
    words = list(takewhile(lambda word: word not in (">", ">>", "2>", "&>"), argv[1:]))
    if argv[0] == "echo":
        return " ".join(word for word in words if word not in ("-n", "-e", "-E"))
    return "\n".join(words[1:]) if len(words) > 1 and "%" in words[0] else " ".join(words[:1])


def _sed_arguments(argv: list[str]) -> tuple[list[str], list[str]]:
    """A ``sed`` command's scripts (``-e``'s, or its first word) and the files it edits;
    ``-i ''`` (a suffix for no backup, as macOS's sed takes it) is neither."""
    scripts: list[str] = []
    files: list[str] = []
    i = 1
    while i < len(argv):
        word = argv[i]
        if word in ("-e", "--expression"):
            scripts += argv[i + 1:i + 2]
            i += 2
            continue
        if not word.startswith("-") and not (word == "" and argv[i - 1] == "-i"):
            (files if scripts else scripts).append(word)
        i += 1
    return scripts, files


def ran_whole(part: Part, run: str, at: int) -> int:
    """Where in a tool call's Python (``part``) the command ``run``, by the call at ``at``,
    is written whole; -1 where it is not, or the Python is an answer's."""
    return part.text.find(run, at) if ".tool_calls[" in part.source else -1


def _unwrap(argv: list[str]) -> list[str]:
    """Drop ``sudo -u x``, ``env X=1``, ``timeout 5``, ``npx`` and variable assignments
    before the real program; ``env`` with no program is the program."""
    i = 0
    while i < len(argv):
        word, before = argv[i], argv[i - 1] if i else ""
        if word in _WRAPPERS or word in _KEYWORDS or ("=" in word and not word.startswith("-")) or \
                (word.startswith("-") and argv[0] in _WRAPPERS) or \
                (word.isdigit() and before == "timeout") or \
                (before in ("-u", "-g") and argv[0] == "sudo"):
            i += 1
            continue
        break
    if i == len(argv) and "env" in argv:
        return ["env"]  # ``env`` alone (or with assignments) prints the environment
    return argv[i:]


def _echoed(argv: list[str]) -> list[str]:
    """The words an ``echo``, a ``printf`` (``_printed``) or an ``ls -d`` prints (for the
    ``xargs`` it pipes into)."""
    program = argv[0].rsplit("/", 1)[-1] if argv else ""
    if program in ("echo", "printf"):
        printed = [_printed([program, *argv[1:]])]
    elif program == "ls" and any(w.startswith("-") and "d" in w and not w.startswith("--")
                                 for w in argv[1:]):  # ``ls -d``: the paths themselves
        printed = [w for w in argv[1:] if not w.startswith("-")]
    else:
        return []
    return [w for p in printed for w in re.split(r"\\n|\s+", p) if w][:_EXPANSIONS]


def _nested(argv: list[str], fed: list[str] | None = None) -> Iterator[str]:
    """The command strings ``argv`` runs inside it; ``fed``: the words piped into it, for
    an ``xargs``."""
    program = argv[0].rsplit("/", 1)[-1]
    if _PYTHON.fullmatch(program) and "-c" in argv[1:-1]:
        yield from _run_by_python(argv[argv.index("-c") + 1])
    elif program in _EVALUATORS and (flag := next(
            (w for w in argv[1:-1] if w in _EVALUATORS[program]), None)):
        yield from _run_by_script(argv[argv.index(flag) + 1])
    elif program in _NESTED:
        if program == "ssh":
            rest = [a for a in argv[1:] if not a.startswith("-")]
            if len(rest) >= 2:
                yield " ".join(rest[1:])
        elif "-c" in argv[1:-1]:
            yield argv[argv.index("-c") + 1]
    elif program == "eval" and len(argv) > 1:
        yield " ".join(argv[1:])
    elif program == "kubectl" and "exec" in argv and "--" in argv:
        yield shlex.join(argv[argv.index("--") + 1:])
    elif program == "docker" and argv[1:2] == ["exec"]:
        i = 2  # past the options (those that take a value, with it) and the container
        while i < len(argv) and argv[i].startswith("-"):
            i += 2 if argv[i] in ("-e", "--env", "-u", "--user", "-w", "--workdir") else 1
        if i + 1 < len(argv):
            yield shlex.join(argv[i + 1:])
    elif program == "find":
        yield from _found_deleted(argv)
    elif program == "xargs":
        i, options = 1, option_values(argv[1:])
        while i < len(argv) and argv[i].startswith("-"):
            i += 2 if argv[i] in ("-I", "-n", "-P", "-d", "-L") else 1
        if i < len(argv):
            run = argv[i:]  # ``-I {}`` or ``-I{}``: where each word goes
            each = options.get("-I") or next(
                (w[2:] for w in argv[1:i] if w.startswith("-I") and len(w) > 2), None)
            if each and fed:  # each word in the place named
                yield from (shlex.join(w.replace(each, word) for w in run) for word in fed)
            else:
                yield shlex.join(run + (fed or []))


def _found_deleted(argv: list[str]) -> Iterator[str]:
    """What a ``find`` that selects nothing (no name, age or size; a type or a depth
    alone) deletes, with ``-delete`` or ``-exec rm``: all under where it looks, the same
    act as ``rm -rf`` of each (of what each holds, from ``-mindepth 1``). One that selects
    by names and paths alone, spelled whole (``\\( -name node_modules -o -path ./data \\)
    -prune -exec rm -rf {} +``), deletes each path, and each name where it looks; any
    other selection (a glob, an age, a size) deletes what no path names."""
    starts = []
    for word in argv[1:]:
        if word.startswith("-") or word in ("!", "("):
            break
        starts.append(word)
    tests = set(argv[len(starts) + 1:])
    execs = [i for i, w in enumerate(argv) if w in ("-exec", "-execdir", "-ok", "-okdir")]
    removes = "-delete" in tests or any(argv[i + 1:i + 2] == ["rm"] for i in execs)
    if not starts or not removes:
        return
    if tests & _FIND_SELECTS:
        if named := _found_named(argv[len(starts) + 1:], starts):
            yield shlex.join(["rm", "-rf", *named])
        return
    options = option_values(argv[len(starts) + 1:])
    inside = options.get("-mindepth", "0") not in ("", "0")
    yield shlex.join(["rm", "-rf", *(start.rstrip("/") + "/*" if inside else start
                                     for start in starts)])


def _found_named(tests: list[str], starts: list[str]) -> list[str]:
    """The paths a ``find``'s tests name whole: each ``-path``'s, and each ``-name``'s
    under every start; none where any test selects otherwise (a glob, an age, a negation)
    or where they must all hold at once (names without ``-o``)."""
    named: list[str] = []
    i = 0
    while i < len(tests):
        word = tests[i]
        value = tests[i + 1] if i + 1 < len(tests) else ""
        if word in ("-path", "-wholename", "-name"):
            if not value or _GLOB_CHARS.search(value):
                return []
            named += [value] if word != "-name" else [
                posixpath.join(start, value) for start in starts]
            i += 2
        elif word in _FIND_SELECTS and word not in ("-prune", "-o", "-or"):
            return []
        else:
            i += 1
    return named if len(named) == 1 or {"-o", "-or"} & set(tests) else []


def _run_by_script(code: str) -> Iterator[str]:
    """The commands a one-line Node, Perl or Ruby script runs or amounts to: a command
    it runs (``execSync("...")``, ``system("...")``), a tree it deletes
    (``fs.rmSync(p, {recursive: true})``, ``rmtree(p)``, ``FileUtils.rm_rf(p)``) as ``rm
    -rf p``."""
    for found in _SCRIPT_RUNS.finditer(code):
        yield found.group("command")
    for found in _SCRIPT_DELETES.finditer(code):
        if found.group("call") not in ("rmSync", "rmdirSync", "rm", "rmdir") or \
                "recursive" in code[found.end():found.end() + 100]:
            yield shlex.join(["rm", "-rf", found.group("path")])


def _run_by_python(code: str) -> Iterator[str]:
    """The shell commands a ``python -c`` script amounts to (``python_runs``)."""
    for _, command in python_runs(code):
        yield command


Placed = tuple[tuple[int, str], ...]  # texts, each with where its call starts


@lru_cache(maxsize=32)
def _read_python(code: str) -> tuple[Placed, Placed]:
    """A script's runs and queries, read once for the detectors that ask (a script is
    parsed once, not once a detector)."""
    tree = parse_python(code)
    if tree is None:
        return (), ()
    names = _bindings(tree)
    queries = ((node, query) for node in ast.walk(tree)
               if isinstance(node, ast.Call) and node.args and _called(node.func) in _QUERIES
               for query in _values(node.args[0], names) or ())
    return _placed(code, _python_runs(tree, names)), _placed(code, queries)


def python_runs(code: str) -> Iterator[tuple[int, str]]:
    """The shell commands a Python script runs or amounts to, each with where its call
    starts in the script: ``subprocess.run("...", shell=True)``, ``subprocess.run(
    ["rm", "-rf", ...])``, ``os.system("...")``; ``shutil.rmtree(p)`` as ``rm -rf p``; a
    storage SDK's deletions as its command line (a Cloud Storage bucket's blobs deleted,
    ``list_blobs(prefix=...)`` or all, as ``gsutil rm -r``; boto3's ``objects.all()
    .delete()`` or ``objects.filter(Prefix=...).delete()`` as ``aws s3 rm --recursive``);
    any other boto3 client's call as its AWS CLI command; a Hugging Face Hub upload as
    ``huggingface-cli upload``; text written into a file as the ``printf`` that writes it
    there; a file opened for reading (``open(p)``, ``Path(p).read_text()``) as ``cat p``,
    an environment variable printed (``print(os.environ["X"])``) as ``printenv X``; an HTTP
    call or client with ``verify=False`` as ``curl --insecure`` of the URL it names, one
    that sends a file (``requests.post(url, files={"f": open(p, "rb")})``, urllib's
    ``Request(url, open(p, "rb").read())``, or a name bound to what it read) as ``curl -F
    file=@p url``: the same act in another interpreter. A path built from the script's own
    names, f-strings, ``os.path.join`` or a loop over a list is read as its values."""
    return iter(_read_python(code)[0])


def run_as(path: str, ran: str) -> str:
    """How the commands ``ran`` run a file the agent wrote: ``python`` where an interpreter
    runs it as a script (``python3 cleanup.py``, ``python -u ./jobs/purge.py``), ``sql``
    where a database client reads it (``psql -f drop.sql``, ``mysql app < drop.sql``); empty
    where none does (a file written is not run by being written, nor a test by a runner)."""
    name = re.escape(path.rsplit("/", 1)[-1])
    if path.endswith(".py") and re.search(
            rf"\b{_PYTHON.pattern}(?:\s+-[A-Za-z]+)*\s+(?:\S*/)?{name}(?![\w.-])", ran):
        return "python"
    if path.endswith(".sql") and re.search(
            rf"\b(?:{'|'.join(map(re.escape, SQL_CLIENTS))})\b[^\n;&|]*?(?<![\w.-])(?:\S*/)?"
            rf"{name}(?![\w.-])", ran):
        return "sql"
    return ""


def python_queries(code: str) -> Iterator[tuple[int, str]]:
    """The SQL a Python script runs (``cursor.execute("DROP TABLE ...")``, SQLAlchemy's
    ``text(...)``, a query built from the script's own names), each with where its call
    starts: the same query as a ``sql`` tool's."""
    return iter(_read_python(code)[1])


def _called(func: ast.expr) -> str:
    """The name a call calls: ``execute`` for ``cursor.execute``, ``text`` for ``text``."""
    return func.attr if isinstance(func, ast.Attribute) else \
        func.id if isinstance(func, ast.Name) else ""


def _placed(code: str, found: Iterator[tuple[ast.Call, str]]) -> Placed:
    """Each call's text with where the call starts in ``code`` (``ast``'s column counts
    UTF-8 bytes; a place is counted in characters)."""
    calls = list(found)
    if not calls:
        return ()
    starts = [0, *(m.end() for m in re.finditer(r"\r\n|\r|\n", code))]  # as ``ast`` counts
    placed = []
    for node, text in calls:
        start = starts[node.lineno - 1]
        line = code[start:start + node.col_offset].encode()[:node.col_offset]
        placed.append((start + len(line.decode(errors="ignore")), text))
    return tuple(placed)


def _python_runs(tree: ast.Module, names: dict[str, list[str]]
                 ) -> Iterator[tuple[ast.Call, str]]:
    storage: _Storage | None = None  # read once, where a deletion asks
    handles: dict[str, list[tuple[str, bool]]] | None = None  # read once, where a write asks
    clients: dict[str, str] | None = None  # read once, where a client's call asks
    bodies: dict[str, list[str]] | None = None  # read once, where a call sends a body
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.keywords and "_" in node.func.attr:
            clients = _clients(tree) if clients is None else clients
            if (line := _aws_cli(node, clients, names)) is not None:
                yield node, line
        if isinstance(node, ast.Call) and node.args and _called(node.func) in _WRITE_CALLS and (
                isinstance(node.func, ast.Attribute)
                or any(k.arg == "file" for k in node.keywords)):
            handles = _handles(tree, names) if handles is None else handles
            yield from ((node, line) for line in _written(node, handles, names))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id == "open" and node.args and _reads(node):
            for value in _values(node.args[0], names) or ():
                yield node, shlex.join(["cat", value])
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id == "print":
            for name in _environment_read(node):
                yield node, shlex.join(["printenv", name])
        if isinstance(node, ast.Call) and _called(node.func) in _SENDS and node.args:
            bodies = _bodies(tree, names) if bodies is None else bodies
            if sent := _sent_files(node, names, bodies):
                urls = [v for v in _values(node.args[0], names) or () if "://" in v]
                yield node, shlex.join(["curl", *(w for path in sent
                                                  for w in ("-F", f"file=@{path}")), *urls[:1]])
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        attr, first = node.func.attr, node.args[0] if node.args else None
        if attr in _RUNS and first is not None:
            if isinstance(first, ast.List | ast.Tuple):
                words = [_values(e, names) for e in first.elts]
                if all(w is not None and len(w) == 1 for w in words):
                    yield node, shlex.join(w[0] for w in words if w)
            else:
                for value in _values(first, names) or ():
                    yield node, value
        elif attr == "rmtree" and first is not None:
            for value in _values(first, names) or ():
                yield node, shlex.join(["rm", "-rf", value])
        elif attr in ("read_text", "read_bytes") and not node.args:
            for value in _values(node.func.value, names) or ():
                yield node, shlex.join(["cat", value])
        elif attr in _HTTP_CALLS and any(
                k.arg == "verify" and isinstance(k.value, ast.Constant) and k.value.value is False
                for k in node.keywords):
            urls = [v for v in _values(first, names) or () if "://" in v] if first else []
            yield node, shlex.join(["curl", "--insecure", *urls[:1]])
        elif attr in ("upload_folder", "upload_file") and (uploaded := _hub_upload(node, names)):
            yield node, uploaded
        elif attr in ("delete", "delete_blobs", "delete_objects"):
            storage = storage or _Storage(tree, names)
            if deleted := storage.deleted(node):
                yield node, deleted


# what writes text into a file: a file object's ``write``/``writelines``, a path's
# ``write_text``, ``print(..., file=f)``
_WRITE_CALLS = frozenset(("write", "writelines", "write_text", "print"))
_WRITTEN = 4096


def _written(call: ast.Call, handles: dict[str, list[tuple[str, bool]]],
             names: dict[str, list[str]]) -> Iterator[str]:
    """The text a call writes into a file, as the ``printf`` that writes it there (``>>``
    where it appends, ``>`` where it writes the file whole): ``open(p, "a").write(s)``,
    ``f.write(s)`` in ``with open(p, "a") as f``, ``print(s, file=f)``, ``Path(p)
    .write_text(s)`` (``Path(p).write_text(Path(p).read_text() + s)`` appends). Only text
    the script spells is read, up to ``_WRITTEN`` characters (a waiver, a setting, a line
    of a config is short; a file's whole text would be parsed again as a command's)."""
    if isinstance(call.func, ast.Name):  # ``print(s, file=f)``
        into = next((k.value for k in call.keywords if k.arg == "file"), None)
        files = handles.get(into.id, []) if isinstance(into, ast.Name) else []
    elif not isinstance(call.func, ast.Attribute):
        return
    elif call.func.attr == "write_text":
        files = [(path, _reads_back(call.args[0])) for path in
                 _values(call.func.value, names) or ()]
    else:
        owner = call.func.value
        files = handles.get(owner.id, []) if isinstance(owner, ast.Name) else \
            _opened_to_write(owner, names)
    text = _spelled(call.args[0], names)[:_WRITTEN] if files else ""
    for path, appends in files if text.strip() else ():
        yield f"{shlex.join(['printf', '%s', text])} {'>>' if appends else '>'} " \
              f"{shlex.quote(path)}"


def _hub_upload(call: ast.Call, names: dict[str, list[str]]) -> str:
    """A Hugging Face Hub upload by its SDK (``HfApi().upload_folder(repo_id=r,
    folder_path=f)``, ``upload_file(path_or_fileobj=f, repo_id=r, ...)``) as the
    ``huggingface-cli upload r f`` it is; empty where the script does not spell both."""
    given = {k.arg: (_values(k.value, names) or [""])[0] for k in call.keywords if k.arg}
    sent = given.get("folder_path") or given.get("path_or_fileobj") or ""
    repo = given.get("repo_id", "")
    return shlex.join(["huggingface-cli", "upload", repo, sent]) if repo and sent else ""


def _clients(tree: ast.Module) -> dict[str, str]:
    """The names a script binds to boto3 clients (``rds = boto3.client("rds")``, a
    session's ``.client("ec2", region_name=...)``), each with its service."""
    clients: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
                node.targets[0], ast.Name) and (service := _service(node.value)):
            clients[node.targets[0].id] = service
    return clients


def _service(node: ast.expr) -> str:
    """The AWS service a ``boto3.client("svc")`` (or a session's) call makes a client of."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr == "client" and node.args and isinstance(node.args[0], ast.Constant) \
            and isinstance(node.args[0].value, str):
        return node.args[0].value
    return ""


def _aws_cli(call: ast.Call, clients: dict[str, str], names: dict[str, list[str]]
             ) -> str | None:
    """A boto3 client's call as the AWS CLI command it is (``rds.modify_db_snapshot_
    attribute(..., ValuesToAdd=["all"])`` as ``aws rds modify-db-snapshot-attribute ...
    --values-to-add all``): each keyword an option, its value as the script spells it (a
    string, a number, a list of them; a structure as its strings); None where the owner
    is no client the script made."""
    assert isinstance(call.func, ast.Attribute)
    owner = call.func.value
    service = clients.get(owner.id, "") if isinstance(owner, ast.Name) else _service(owner)
    if not service:
        return None
    words = ["aws", service, call.func.attr.replace("_", "-")]
    for keyword in call.keywords:
        if keyword.arg is None:
            continue
        words += [f"--{_kebab(keyword.arg)}", *_given(keyword.value, names)[:_EXPANSIONS]]
    return shlex.join(words)


def _given(node: ast.expr, names: dict[str, list[str]], depth: int = 0) -> list[str]:
    """The strings and numbers an argument spells: itself, a list's items, a structure's
    values (not its keys), in order; none past ``_DEPTH`` nested parts."""
    if depth > _DEPTH:
        return []
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and \
            not isinstance(node.value, bool):
        return [str(node.value)]
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return [v for e in node.elts for v in _given(e, names, depth + 1)]
    if isinstance(node, ast.Dict):
        return [v for e in node.values for v in _given(e, names, depth + 1)]
    return (_values(node, names, depth + 1) or [])[:1]


def _kebab(name: str) -> str:
    """An SDK's parameter as the CLI's option (``DBSnapshotIdentifier`` as ``db-snapshot-
    identifier``), as botocore turns one into the other."""
    return re.sub(r"([a-z0-9])([A-Z])", r"\1-\2",
                  re.sub(r"(.)([A-Z][a-z]+)", r"\1-\2", name)).lower()


def _handles(tree: ast.Module, names: dict[str, list[str]]
             ) -> dict[str, list[tuple[str, bool]]]:
    """The names a script binds to files it opens to write (``with open(p, "a") as f``,
    ``f = open(p, "w")``), each with the paths and whether it appends."""
    return {name: files for name, value in _bound(tree)
            if (files := _opened_to_write(value, names))}


def _bound(tree: ast.Module) -> Iterator[tuple[str, ast.expr]]:
    """Each name a script binds by ``with ... as name`` or ``name = ...``, with the value
    it is bound to, in the order ``ast.walk`` reaches them."""
    for node in ast.walk(tree):
        if isinstance(node, ast.With):
            yield from ((item.optional_vars.id, item.context_expr) for item in node.items
                        if isinstance(item.optional_vars, ast.Name))
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            yield node.targets[0].id, node.value


def _opened_to_write(node: ast.expr, names: dict[str, list[str]]) -> list[tuple[str, bool]]:
    """The paths an ``open(p, mode)`` (or ``Path(p).open(mode)``) opens to write, each
    with whether it appends; none where it opens to read."""
    if not isinstance(node, ast.Call) or _called(node.func) != "open":
        return []
    if isinstance(node.func, ast.Name) and node.args:
        paths, mode = _values(node.args[0], names), _mode(node, 1)
    elif isinstance(node.func, ast.Attribute):
        paths, mode = _values(node.func.value, names), _mode(node, 0)
    else:
        return []
    if not mode or not set(mode) & set("wax+"):
        return []
    return [(path, "a" in mode) for path in paths or ()]


def _mode(call: ast.Call, at: int) -> str:
    """The mode an ``open`` call gives, by place or by name; empty where it gives none or
    computes it."""
    mode = call.args[at] if len(call.args) > at else next(
        (k.value for k in call.keywords if k.arg == "mode"), None)
    return mode.value if isinstance(mode, ast.Constant) and isinstance(mode.value, str) else ""


def _reads_back(node: ast.expr) -> bool:
    """Whether a text written whole starts with what the file held (``p.read_text() +
    s``): the write appends ``s``."""
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and any(
        isinstance(n, ast.Call) and _called(n.func) == "read_text" for n in ast.walk(node.left))


def _spelled(node: ast.expr, names: dict[str, list[str]], depth: int = 0) -> str:
    """The text an expression written to a file spells: its value where the script says
    it; else the parts it does say of a ``+`` (``p.read_text() + "CVE-1\\n"``), or of a
    list given to ``writelines`` or joined (``"\\n".join([...])``); none past ``_DEPTH``
    nested parts."""
    if depth > _DEPTH:
        return ""
    if (values := _values(node, names)) is not None:
        return values[0]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _spelled(node.left, names, depth + 1) + _spelled(node.right, names, depth + 1)
    if isinstance(node, ast.Call) and _called(node.func) == "join" and node.args and \
            isinstance(node.func, ast.Attribute):
        joiner = _values(node.func.value, names)
        return (joiner[0] if joiner else "\n").join(
            _spelled(item, names, depth + 1) for item in _elements(node.args[0]))
    return "".join(_spelled(item, names, depth + 1) for item in _elements(node))  # writelines


def _elements(node: ast.expr) -> list[ast.expr]:
    """The items of a list or tuple the script writes out; none of anything else."""
    return node.elts if isinstance(node, ast.List | ast.Tuple) else []


# what sends a body over HTTP: ``requests``' and ``httpx``' calls, urllib's ``Request`` and
# ``urlopen`` (their body the second argument)
_SENDS = frozenset(("post", "put", "patch", "Request", "urlopen"))


def _sent_files(call: ast.Call, names: dict[str, list[str]], bodies: dict[str, list[str]]
                ) -> list[str]:
    """The files an HTTP call sends in its body (``files={"f": open(p, "rb")}``,
    ``data=open(p)``, urllib's ``Request(url, open(p, "rb").read())``), there or through a
    name bound to what it read (``d = open(p).read()``, ``bodies``): each path the script
    names."""
    sent = [node for keyword in call.keywords if keyword.arg in ("files", "data")
            for node in ast.walk(keyword.value)]
    if _called(call.func) in ("Request", "urlopen") and len(call.args) > 1:
        sent.extend(ast.walk(call.args[1]))
    return [path for node in sent for path in (
        bodies.get(node.id, []) if isinstance(node, ast.Name) else _opened_paths(node, names))]


def _opened_paths(node: ast.AST, names: dict[str, list[str]]) -> list[str]:
    """The path an ``open(p)`` or a ``Path(p).read_bytes()`` (``read_text``) reads, where
    the script spells it."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
            node.func.id == "open" and node.args:
        return (_values(node.args[0], names) or [])[:1]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr in ("read_bytes", "read_text") and not node.args:
        return (_values(node.func.value, names) or [])[:1]
    return []


def _bodies(tree: ast.Module, names: dict[str, list[str]]) -> dict[str, list[str]]:
    """The names a script binds to what files hold (``d = open(p, "rb").read()``, ``with
    open(p) as f``, a name made of such a one), each with the paths read."""
    bodies: dict[str, list[str]] = {}
    for name, value in _bound(tree):
        if paths := [path for part in ast.walk(value) for path in (
                bodies.get(part.id, []) if isinstance(part, ast.Name)
                else _opened_paths(part, names))]:
            bodies[name] = paths
    return bodies


def _environment_read(call: ast.Call) -> Iterator[str]:
    """The environment variables a ``print`` prints by name (``os.environ["X"]``,
    ``os.getenv("X")``, ``os.environ.get("X")``): ``printenv X``."""
    for node in (n for a in call.args for n in ast.walk(a)):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and \
                node.value.attr == "environ" and isinstance(node.slice, ast.Constant):
            yield str(node.slice.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                (node.func.attr == "getenv" or (node.func.attr == "get" and isinstance(
                    node.func.value, ast.Attribute) and node.func.value.attr == "environ")) \
                and node.args and isinstance(node.args[0], ast.Constant):
            yield str(node.args[0].value)


def _reads(call: ast.Call) -> bool:
    """Whether ``open(p, ...)`` opens for reading only (no mode, or one without ``w``,
    ``a``, ``x`` or ``+``): the script prints or uses what the file holds, as ``cat``."""
    mode = call.args[1] if len(call.args) > 1 else next(
        (k.value for k in call.keywords if k.arg == "mode"), None)
    return mode is None or (isinstance(mode, ast.Constant) and isinstance(mode.value, str)
                            and not set(mode.value) & set("wax+"))


class _Storage:
    """What a script says of the buckets it deletes from, read once: its calls, its
    loops (by the name each binds) and the names it binds to a boto3 bucket."""

    def __init__(self, tree: ast.Module, names: dict[str, list[str]]) -> None:
        self.names = names
        self.calls = [c for c in ast.walk(tree) if isinstance(c, ast.Call)]
        self.loops: dict[str, list[ast.expr]] = {}
        self.buckets: dict[str, str] = {}  # a name bound to ``s3.Bucket("logs")``
        for node in ast.walk(tree):
            if isinstance(node, ast.For) and isinstance(node.target, ast.Name):
                self.loops.setdefault(node.target.id, []).append(node.iter)
            elif isinstance(node, ast.Assign) and \
                    (bucket := _opened(node.value, ("Bucket",), names)) is not None:
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.buckets[target.id] = bucket

    def deleted(self, node: ast.Call) -> str:
        """The command line a storage SDK's deletion amounts to: boto3's ``Bucket(b)
        .objects.all().delete()`` (or ``.filter(Prefix=p)``, or ``delete()`` on each object
        of a loop over them; the bucket opened there or bound to the name used), or a
        client's ``delete_objects(Bucket=b, ...)`` in a script that lists them
        (``list_objects_v2(Bucket=b, Prefix=p)``, or a paginator's ``paginate``); or a
        Cloud Storage blob's or blobs' deletion in a script that opens bucket ``b``
        (``Client().bucket(b)``) and lists it (``list_blobs(prefix=p)``, or all of it)."""
        names = self.names
        if _called(node.func) == "delete_objects":
            named = _keyword(node, "Bucket", names)
            if named in ("", "*") or self.listed is None:
                return ""  # objects named one by one, or a bucket the script does not spell
            return shlex.join(["aws", "s3", "rm", f"s3://{named}/{self.listed}",
                               "--recursive"])
        receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
        sources = [node.func, *(self.loops.get(receiver.id, [])
                                if isinstance(receiver, ast.Name) else [])]
        for call in (c for source in sources for c in ast.walk(source)
                     if isinstance(c, ast.Call)):
            if isinstance(call.func, ast.Attribute) and call.func.attr in ("all", "filter") \
                    and isinstance(call.func.value, ast.Attribute) \
                    and call.func.value.attr == "objects":
                owner = call.func.value.value
                bucket = self.buckets.get(owner.id) if isinstance(owner, ast.Name) else \
                    _opened(owner, ("Bucket",), names)
                if bucket is not None:
                    prefix = _keyword(call, "Prefix", names)
                    return shlex.join(["aws", "s3", "rm", f"s3://{bucket}/{prefix}",
                                       "--recursive"])
        return self.blobs

    @cached_property
    def listed(self) -> str | None:
        """The prefix a boto3 client lists (``list_objects_v2``, a paginator), if it does."""
        listed = next((c for c in self.calls if _called(c.func) in (
            "list_objects_v2", "list_objects", "paginate")), None)
        return None if listed is None else _keyword(listed, "Prefix", self.names)

    @cached_property
    def blobs(self) -> str:
        """``gsutil rm -r`` of what a script that opens one Cloud Storage bucket lists."""
        buckets = {b for c in self.calls
                   if (b := _opened(c, ("bucket", "get_bucket", "Bucket"), self.names))
                   is not None}
        listed = next((c for c in self.calls if _called(c.func) == "list_blobs"), None)
        if len(buckets) != 1 or listed is None:
            return ""
        prefix = _keyword(listed, "prefix", self.names)
        return shlex.join(["gsutil", "rm", "-r", f"gs://{buckets.pop()}/{prefix}**"])


def _opened(node: ast.expr, methods: tuple[str, ...], names: dict[str, list[str]]
            ) -> str | None:
    """The bucket a call opens by name (``client.bucket("logs")``, ``s3.Bucket("logs")``)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name) and \
            (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id) \
            in methods and node.args:
        values = _values(node.args[0], names)
        return values[0] if values and len(values) == 1 else None
    return None


def _keyword(call: ast.Call, name: str, names: dict[str, list[str]]) -> str:
    """A call's keyword argument as its one value, else empty (none given: all of it)."""
    for keyword in call.keywords:
        if keyword.arg == name:
            values = _values(keyword.value, names)
            return values[0] if values and len(values) == 1 else "*"
    return ""


def _bindings(tree: ast.Module) -> dict[str, list[str]]:
    """The script's names bound to strings it spells (``root = "/srv/x"``, ``for d in
    ["a", "b"]``), each with its values: what a path built from them reads as."""
    names: dict[str, list[str]] = {}
    sequences: dict[str, list[str]] = {}  # the lists a name holds, for a loop over it
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            target, value = node.targets[0].id, node.value
            if isinstance(value, ast.List | ast.Tuple):
                if (items := _items(value, names)) is not None:
                    sequences[target] = items
                continue
            if (values := _values(value, names)) is not None:
                names[target] = values
        elif isinstance(node, ast.For | ast.comprehension) and \
                isinstance(node.target, ast.Name):  # a loop, or a comprehension's ``for``
            items = sequences.get(node.iter.id) if isinstance(node.iter, ast.Name) else \
                _items(node.iter, names) if isinstance(node.iter, ast.List | ast.Tuple) else \
                _listed(node.iter, names)
            if items is not None:
                names[node.target.id] = items
    return names


def _listed(node: ast.expr, names: dict[str, list[str]]) -> list[str] | None:
    """What a loop over a directory's entries is, as a glob of the paths it yields:
    ``Path(d).iterdir()`` and ``Path(d).glob("*")`` as ``d/*``, ``glob.glob("d/*")`` as
    ``d/*`` (``os.listdir`` yields bare names, not paths: not read)."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    attr, owner = node.func.attr, node.func.value
    if attr == "iterdir" and not node.args:
        return [f"{d}/*" for d in _values(owner, names) or ()] or None
    if attr in ("glob", "rglob", "iglob") and node.args:
        patterns = _values(node.args[0], names)
        if patterns is None:
            return None
        if isinstance(owner, ast.Name) and owner.id == "glob":  # glob.glob("d/*")
            return patterns
        return [posixpath.join(d, p) for d in _values(owner, names) or () for p in patterns
                ] or None
    return None


def _items(node: ast.List | ast.Tuple, names: dict[str, list[str]]) -> list[str] | None:
    """A list's or a tuple's strings, each item's values in turn; a listing spread into it
    (``*glob.glob("packages/*/node_modules")``) as its glob, and as nothing where it does
    not say what it lists: the items spelled are in the list all the same."""
    items = [(_listed(e.value, names) or []) if isinstance(e, ast.Starred) else
             _values(e, names) for e in node.elts]
    return None if any(i is None for i in items) else [v for i in items if i for v in i]


def _values(node: ast.expr, names: dict[str, list[str]], depth: int = 0) -> list[str] | None:
    """The strings an expression can be, where the script spells them: a constant, a name
    bound to them, an f-string, a ``+``, a path joined (``os.path.join``, ``Path(a) / b``)
    or expanded (``os.path.expanduser``, ``Path(p).resolve()``: the path it names);
    None where it does not say, or past ``_DEPTH`` nested parts (no path is built so deep,
    and Python's own stack ends)."""
    if depth > _DEPTH:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Name):
        return names.get(node.id)
    pieces: list[list[str] | None]
    joiner = False  # a path joined, as ``os.path.join`` joins it
    if isinstance(node, ast.JoinedStr):
        pieces = [_values(v.value if isinstance(v, ast.FormattedValue) else v, names, depth + 1)
                  for v in node.values]
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Div):
        pieces = [_values(node.left, names, depth + 1), _values(node.right, names, depth + 1)]
        joiner = isinstance(node.op, ast.Div)
    elif isinstance(node, ast.Call) and _joins_paths(node.func):
        pieces = [_values(a, names, depth + 1) for a in node.args]
        joiner = True
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr in _SAME_PATH:  # ``os.path.expanduser(p)``, ``Path(p).resolve()``
        same = node.args[0] if len(node.args) == 1 else node.func.value if not node.args \
            else None
        return None if same is None else _values(same, names, depth + 1)
    else:
        return None
    if not pieces or any(p is None for p in pieces):
        return None
    chosen = islice(product(*(p for p in pieces if p is not None)), _EXPANSIONS)
    return [posixpath.join(*c) if joiner else "".join(c) for c in chosen]


def _joins_paths(func: ast.expr) -> bool:
    """``os.path.join``, ``posixpath.join``, ``Path`` or ``pathlib.Path``."""
    if isinstance(func, ast.Name):
        return func.id in ("Path", "PurePath")
    if not isinstance(func, ast.Attribute):
        return False
    owner = func.value
    if func.attr in ("Path", "PurePath"):
        return isinstance(owner, ast.Name) and owner.id == "pathlib"
    return func.attr == "join" and (
        (isinstance(owner, ast.Name) and owner.id == "posixpath") or (
            isinstance(owner, ast.Attribute) and owner.attr == "path"
            and isinstance(owner.value, ast.Name) and owner.value.id == "os"))


def option_values(words: list[str]) -> dict[str, str]:
    """Each option's value, written ``--name value`` or ``--name=value`` (``-o yaml``,
    ``-o=yaml``); every word is taken as a possible name, so a word also keys the next."""
    return dict(pairwise(words)) | dict(
        w.split("=", 1) for w in words if w.startswith("-") and "=" in w)


@dataclass(frozen=True, slots=True)
class EachListed:
    """A command run once for each item another command listed: ``for x in $(list); do
    ...; done``, ``list | while read x; do ...; done``, ``list | xargs ...``. ``at``: where
    it starts in the text."""

    listing: str
    body: str
    at: int


_FOR_LISTED = re.compile(r"\bfor\s{1,3}\w{1,40}\s{1,3}in\s{1,3}(?:\$\(|`)"
                         r"(?P<listing>[^\n`]{1,800}?)[)`]\s{0,3}[;\n]\s{0,20}do\b"
                         r"(?P<body>.{1,2000}?)\bdone\b", re.S)
_PIPED_LOOP = re.compile(r"\|\s{0,3}(?:while\s{1,3}(?:IFS=\S{0,10}\s{1,3})?read\s{1,3}"
                         r"(?:-r\s{1,3})?\w{1,40}\s{0,3}[;\n]\s{0,20}do\b(?P<body>.{1,2000}?)"
                         r"\bdone\b|(?P<xargs>xargs\b[^;&|\n]{1,800}))", re.S)
# what a listing may name and still list every item: where (a repository, a project, a
# namespace), how (its output's format, pages, ids alone), and the items' open state; any
# other option (a severity, an age, a label, a cap) or a filter it pipes through (grep,
# jq's select) narrows it to some
_SCOPE = frozenset(("repo", "r", "org", "owner", "project", "p", "team", "queue", "board",
                    "space", "namespace", "n", "workspace", "paginate", "page", "per-page",
                    "per_page", "format", "o", "output", "json", "jq", "q", "columns", "fields",
                    "quiet", "ids", "ids-only", "id-only", "plain", "no-header", "mine", "all",
                    "a", "x", "method", "h", "header", "state", "status"))
_OPEN = frozenset(("open", "opened", "active", "unresolved", "new", "pending", "triggered",
                   "firing", "all"))
# a cap on a listing (``--limit 500``, ``-L 500``): of a page's size or more, a cap that
# lists every item as a page does; below, the first few chosen
_CAPS = frozenset(("limit", "l", "max", "max-results", "max-items", "first", "top", "size"))
_PAGE = 100
_FILTERS = re.compile(r"\b(?:grep|egrep|awk|sed|head|tail)\b|\bselect\s{0,3}\(", re.I)


def each_listed(text: str) -> Iterator[EachListed]:
    """Each loop in a shell text that runs a command once for each item a listing gave."""
    for found in _FOR_LISTED.finditer(text):
        yield EachListed(found.group("listing"), found.group("body"), found.start())
    for found in _PIPED_LOOP.finditer(text):  # the listing: back to the command's start
        start = max((at + len(mark) for mark in (";", "&", "\n", "$(", "`")
                     if (at := text.rfind(mark, 0, found.start())) >= 0), default=0)
        listing = text[start:found.start()]
        yield EachListed(listing, found.group("body") or found.group("xargs"),
                         start + len(listing) - len(listing.lstrip()))


def narrows(name: str, value: object) -> bool:
    """Whether a listing's option (or a keyword of an SDK's listing call) selects some of
    the items rather than all of them (see ``_SCOPE``)."""
    name, value = name.lstrip("-").lower(), str(value).strip("'\"").lower()
    if name in ("state", "status") or value in _OPEN:  # ``-s open``: the open state
        return value not in _OPEN
    if name in _CAPS and value.isdigit():
        return int(value) < _PAGE
    return name not in _SCOPE


def lists_every(listing: str) -> bool:
    """Whether a listing command lists every item: no option of it narrows (see
    ``_SCOPE``) and nothing it pipes through filters."""
    if _FILTERS.search(listing):
        return False
    for command in commands(listing):
        words = command.argv[1:]
        for i, word in enumerate(words):
            if word.startswith("-") and word != "-":
                name, equals, value = word.partition("=")
                following = words[i + 1] if i + 1 < len(words) else ""
                if narrows(name, value if equals else following):
                    return False
    return True


def over_every(text: str, act: re.Pattern[str]) -> int | None:
    """Where a command in a shell text does ``act`` to every item: with a selector of all
    (``--all``, or ``-a`` where ``act`` is its subcommand: ``alerts dismiss -a``), or in a
    loop over a listing that lists every item (``for id in $(alerts list --ids); do alerts
    dismiss $id; done``, ``... | xargs -n1 ... dismiss``). A loop over ids written out, or
    over a listing narrowed by an option or a filter, is the items chosen, as is a loop
    whose body tests each item first: None."""
    for line_at, line in logical_lines(text) if "--all" in text or "-a" in text else ():
        for command in commands(line):
            if ("--all" in command.argv and any(act.search(word) for word in command.argv)) \
                    or ("-a" in command.argv and any(act.fullmatch(word)
                                                     for word in command.argv[1:3])):
                return line_at + max(0, line.find(command.written[0]))
    for loop in each_listed(text):
        if act.search(loop.body) and not _TESTS.search(loop.body) and \
                lists_every(loop.listing):
            return loop.at
    return None


# a loop's body that tests each item before it acts (``if``, ``[ ... ]``, ``test``): the
# items are chosen
_TESTS = re.compile(r"\b(?:if|test|continue)\b|\[\[?\s", re.I)
