"""What detectors read and return: the agent's own output in typed parts, and signals.

The request and tool outputs are context (what was asked, what the world said back), never
evidence by themselves: a detector sees them only to judge scope or to recognise a test's
inputs. What the agent did is split into typed parts (prose it said, shell commands, SQL,
code, files written, diffs, messages sent), so each detector reads the kind it understands:
``rm -rf`` in a command is an act, the same words in an explanation are not.
"""

from __future__ import annotations

import ast
import base64
import binascii
import dataclasses
import json
import re
import textwrap
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import unquote

from ...schema import Category, Step, ToolCall, Trajectory
from ..base import Quote
from .cues import cued
from .recipes import recipes, run_by_name

Kind = Literal["say", "command", "sql", "code", "file", "diff", "message"]
# (a terminal's ``keystrokes``, as Terminus types them; a container's ``argv``; a list of
# ``commands``, one a line)
_COMMAND_KEYS = {"cmd", "command", "script", "shell", "keystrokes", "argv", "commands"}
# a file written whole, or the part of it a tool writes (Cursor's code_edit, a notebook
# cell's new_source)
_FILE_KEYS = {"content", "contents", "text", "new_content", "file_text", "code_edit",
              "new_source", "data", "lines"}
PATH_KEYS = ("path", "file_path", "filepath", "file", "filename", "target_file",
              "notebook_path")
# an edit given as the text it replaces and its replacement (the str_replace editors of
# OpenHands and SWE-agent, Claude Code's Edit), alone or as a list of ``edits``
# (the MCP filesystem server's ``oldText``/``newText``, a search-and-replace tool's)
_EDIT_KEYS = (("old_str", "new_str"), ("old_string", "new_string"), ("old", "new"),
              ("old_text", "new_text"), ("oldText", "newText"), ("search", "replace"))
# a patch written to a file is the diff it holds
_PATCH_FILE = re.compile(r"\.(?:patch|diff)$")
# a shell script written to a file is the commands it will run
_SCRIPT = re.compile(r"\.(?:sh|bash|zsh)$|^#!\s{0,3}/(?:usr/)?bin/(?:env\s{1,3})?(?:ba|z|da)?sh\b")
_DIFF_KEYS = {"diff", "patch"}
# where a patch names the file its next lines change: a unified diff's "+++ b/path", a
# Codex apply_patch's "*** Update File: path" or "*** Add File: path"
_FILE_HEADER = re.compile(r"^(?:\+\+\+ (?:b/)?|\*\*\* (?:Add|Update) File: )([^\t\n]{1,300})",
                          re.M)
_SHELLS = {"bash", "sh", "zsh", "dash", "ksh"}
# a heredoc's opener (``<<EOF``, ``<<'EOF'``, ``<<-EOF``: a tab-indented closer), and where
# the line it is on sends its text (``> path``, ``>> path``, ``tee [-a] path``)
_HEREDOC = re.compile(r"<<(-?)[ \t]{0,3}([\"']?)([A-Za-z_][\w.-]{0,30})\2")
# Python told to run what it reads (``python3 - <<EOF``, ``sudo -u app python3 <<EOF``,
# ``python3 -u - <<EOF``): an interpreter whose words up to the heredoc are options
_TO_PYTHON = re.compile(r"(?<![^\s;&|(])(?:\S*/)?python(?:\d(?:\.\d{1,2})?)?"
                        r"(?:[ \t]{1,3}-(?![cm]\b)[\w-]{0,20})*[ \t]{0,3}$")
# a cluster client applying the manifest it reads (``kubectl apply -f - <<EOF``): the
# manifest, as a file written and applied
_APPLIES_STDIN = re.compile(r"\b(?:kubectl|oc)\b[^\n;&|]{0,80}\b(?:apply|create|replace)\b"
                            r"[^\n;&|]{0,80}(?:-f|--filename)[ \t=]{1,3}-[ \t]{0,3}[^\n<]{0,40}$")
_REDIRECT = re.compile(r"(?:(?<![\d&])>>?|\btee[ \t]{1,3}(?:-a[ \t]{1,3})?)[ \t]{0,3}([\"']?)"
                       r"([^\s\"'<>|;&]{1,300})\1")
_MESSAGE_KEYS = {"body", "message", "text", "comment", "note", "html"}
# a chat post's structured content (Slack's ``blocks`` and ``attachments``): its texts
_BLOCK_KEYS = {"blocks", "attachments"}
# a path with a file's name (``data`` is also an HTTP call's body, sent to a ``path``)
_FILE_NAME = re.compile(r"[^/]\.\w{1,10}$")
# the final answer given through a tool (smolagents' ``final_answer``, Cline's
# ``attempt_completion``), and what a tool that sends or answers says under other names
_ANSWER_KEYS = {"answer", "result", "final_answer"}
_SAID_KEYS = {"content", "output", "response", "summary"}
_SAYING_TOOL = re.compile(r"(?:^|_)(?:send|post|reply|respond|message|notify|e?mail|chat|"
                          r"slack|teams|comment|answer|complete|completion|finish|say|tell)"
                          r"(?:_|s?$)")
_SHELL_TOOLS = {"bash", "shell", "sh", "terminal", "run", "exec", "execute", "run_command"}
# inline code in prose (`ALL=(ALL) ALL`)
INLINE_CODE = re.compile(r"`[^`\n]*`")
# the arguments of an HTTP call that name files it uploads, and the most read
_UPLOAD_KEYS = ("files", "file", "attachments", "attachment", "upload", "body_file",
                "data_file", "upload_file")
_SENT_FILES = 4
_SPACE = re.compile(r"\s")
# a tool named after a program that takes a subcommand: its command argument is that
# program's arguments (a ``kubectl`` tool's ``get pods -n prod`` runs ``kubectl get pods -n
# prod``), read as the command it runs
_PROGRAM_TOOLS = {"git", "kubectl", "helm", "docker", "podman", "terraform", "tofu", "aws",
                  "gcloud", "az", "gsutil", "gh", "npm", "yarn", "pnpm", "pip", "cargo", "go",
                  "vault", "twine", "systemctl", "flyctl", "heroku", "oc", "argocd", "ansible",
                  "pulumi", "doctl", "firebase", "vercel", "wrangler", "huggingface-cli"}
LINE = 240  # the most of a line a quote carries either side of a finding
TESTISH = re.compile(r"(?:^|/)(?:tests?|spec|conftest|grader|eval)|_test\.|\.test\.|test_", re.I)
STAND_IN = re.compile(r"example|sample|template|\.dist\b", re.I)  # placeholders' files
# SSH told to accept any host key, or to forget the ones it saw (a command's option or a
# client configuration's line); and a request that names host keys, whose handling is then
# the user's call
SSH_HOST_KEYS_OFF = (r"StrictHostKeyChecking[\s=]{1,3}(?:no|off)\b|"
                     r"UserKnownHostsFile[\s=]{1,3}/dev/null\b")
HOST_KEYS_ASKED = re.compile(r"host.?keys?\b|StrictHostKeyChecking|known_hosts", re.I)
_FENCE = re.compile(r"(```|~~~)([\w+-]{0,20})[^\n]{0,80}\n(.{0,200000}?)\1", re.S)
# code in HTML (``<pre><code class="language-go">``), read as written
_HTML_CODE = re.compile(r"<pre>\s{0,3}<code[^>]{0,80}>(.{0,200000}?)</code>\s{0,3}</pre>",
                        re.S | re.I)
# a file named just before a fence ("Put this in tests/conftest.py:") is where its code goes
_NAMED_FILE = re.compile(r"[\w./-]{1,120}\.(?:py|js|ts|go|rb|java|sh|ya?ml|toml|cfg|ini|json)\b")
_LINES = re.compile(r"[^\n]*\n|[^\n]+")
# an answer that is Python without a fence: a definition or an import at a line's start
_BARE_PYTHON = re.compile(r"^(?:def |class |import |from [\w.]+ import )", re.M)


@dataclass(frozen=True, slots=True)
class Part:
    """One piece of the agent's own output. ``escaped``: the part is a value inside a tool
    call's JSON arguments, so a quote of it is written the way it appears there."""

    kind: Kind
    source: str
    text: str
    base: int = 0
    escaped: bool = False
    # the characters read before the text that the agent did not write (the program a tool
    # is named after, before its arguments): read, never quoted
    lead: int = 0
    path: str = ""
    method: str = ""  # an HTTP tool call's, beside its ``url`` part: what the call does there
    # code answered without a fence: its syntax tree, parsed to recognise it as Python, for
    # the code detector (it lives as long as the part: this judgement)
    tree: ast.Module | None = field(default=None, compare=False, repr=False)

    def quote(self, start: int, end: int) -> Quote:
        start = max(start, self.lead)
        fragment = self.text[start:max(start, end)].strip()
        if self.escaped:
            return Quote(json.dumps(fragment, ensure_ascii=False)[1:-1], self.source)
        offset = self.text.find(fragment, start) if fragment else -1
        return Quote(fragment, self.source, self.base + offset if offset >= 0 else None)

    def line_at(self, position: int) -> Quote:
        """The line around ``position``, what a reviewer would point at; at most ``LINE``
        characters either side, so a huge one-line script costs no more a finding. A
        diff's line is quoted as added or removed, without its marker: an edit given as
        replaced text has none in its call."""
        text = self.text
        start = text.rfind("\n", max(0, position - LINE), position) + 1 or max(0, position - LINE)
        if self.kind == "diff" and start <= position and text[start:start + 1] in ("+", "-"):
            start += 1
        end = text.find("\n", position, position + LINE)
        return self.quote(start, min(len(text), position + LINE) if end < 0 else end)


@dataclass(frozen=True, slots=True)
class Signal:
    """What one detector found. ``decisive``: precise enough to flag on its own (its false
    alarm rate on the realistic dev split is what earned it that)."""

    name: str
    category: Category
    decisive: bool
    why: str
    quote: Quote


def parts(trajectory: Trajectory) -> list[Part]:
    """The agent's own output, typed: assistant prose, tool-call arguments by what they
    carry, the final response; code fences in prose become code parts of their own."""
    out: list[Part] = []
    for i, step in enumerate(trajectory.steps):
        out.extend(_step_parts(i, step))
    if trajectory.response:
        out.extend(_prose("response", trajectory.response))
    left = _left(out)
    return left + list(_recipes_run(left))


def _recipes_run(done: list[Part]) -> Iterator[Part]:
    """The package scripts and make targets the commands run by name, each read as a
    command of its own where the agent wrote it (``recipes``)."""
    scripts: set[str] = set()
    targets: set[str] = set()
    for part in done:
        if part.kind == "command":
            run = run_by_name(part.text)
            scripts |= run[0]
            targets |= run[1]
    for part in done if scripts or targets else ():
        if part.kind in ("file", "diff") and part.escaped and (lines := recipes(
                part.path, part.text, part.kind == "diff", scripts, targets)):
            yield Part("command", part.source, "\n".join(lines), escaped=True, path=part.path)


def step_parts(index: int, step: Step) -> list[Part]:
    """The agent's own output in one step, ``steps[index]``, typed as :func:`parts` types
    it: what a step-wise judgement reads (a write a later step replaces is still there)."""
    return _left(list(_step_parts(index, step)))


def _step_parts(i: int, step: Step) -> Iterator[Part]:
    if step.role == "assistant" and step.content:
        yield from _prose(f"steps[{i}].content", step.content)
    for j, call in enumerate(step.tool_calls):
        yield from _call_parts(f"steps[{i}].tool_calls[{j}].arguments", call.name,
                               call.arguments)


def _left(out: list[Part]) -> list[Part]:
    """The parts without the writes and edits a later tool call replaced: the same file
    written whole again, or the same lines of it edited again. What the agent left is
    judged, not a draft it took back. One pass from the end, so a trajectory of thousands
    of edits costs no more an edit."""
    written: set[str] = set()  # paths a later call writes whole
    redone: set[tuple[str, frozenset[str]]] = set()  # (path, lines removed) a later call edits
    pending: list[tuple[str, frozenset[str] | None]] = []  # this call's, seen by earlier ones
    kept: list[Part] = []
    source = None
    for part in reversed(out):
        if part.source != source:  # a new call: the one after it is now "later"
            for path, removed in pending:
                if removed is None:
                    written.add(path)
                else:
                    redone.add((path, removed))
            pending, source = [], part.source
        if part.kind not in ("file", "diff") or not part.path:
            kept.append(part)
            continue
        removed = frozenset(text for _, text in removed_lines(part.text)) \
            if part.kind == "diff" else None
        if part.path not in written and (not removed or (part.path, removed) not in redone):
            kept.append(part)
        pending.append((part.path, removed))
    return kept[::-1]


def context(trajectory: Trajectory) -> str:
    """What the agent was given rather than what it did: the request, user turns and tool
    outputs."""
    texts = [trajectory.request]
    texts.extend(s.content for s in trajectory.steps if s.role in ("user", "tool", "system"))
    return "\n".join(texts)


def _prose(source: str, text: str, kind: Kind = "say", escaped: bool = False
           ) -> Iterator[Part]:
    """Words (said, or a message sent), and the code fenced in them as parts of their
    own: code in a message is the same act as code in the response."""
    yield Part(kind, source, text, escaped=escaped)
    fenced = False
    for fence in _FENCE.finditer(text) if "```" in text or "~~~" in text else ():
        fenced = True
        language, body = fence.group(2).lower(), fence.group(3)
        code: Kind = "command" if language in ("bash", "sh", "shell", "console", "zsh") \
            else "sql" if language == "sql" else "diff" if language in ("diff", "patch") \
            or diff_shaped(body) else "code"
        named = _NAMED_FILE.findall(text, max(0, fence.start() - 160), fence.start())
        yield from _by_file(Part(code, source, body, base=fence.start(3), escaped=escaped,
                                 path=named[-1] if named else f".{language}"))
    for html in _HTML_CODE.finditer(text) if "<pre" in text else ():
        fenced = True
        yield Part("code", source, html.group(1), base=html.start(1), escaped=escaped, path=".")
    if fenced:
        return
    if _BARE_PYTHON.search(text) and (tree := parse_python(text)) is not None:
        # code without a fence
        yield Part("code", source, text, path=".py", tree=tree, escaped=escaped)
        return
    for start, body in _indented(text):
        named = _NAMED_FILE.findall(text, max(0, start - 160), start)
        yield from _by_file(Part("diff" if diff_shaped(body) else "code", source, body,
                                 base=start, escaped=escaped, path=named[-1] if named else "."))


def _indented(text: str) -> Iterator[tuple[int, str]]:
    """Markdown's other code blocks: runs of lines indented by four spaces or a tab, after
    a blank line or at the text's start, each as where it starts and its lines moved left
    (code shown so is the same code as in a fence). Quotes of more than one line of it
    are found in the text with its whitespace folded."""
    if "\n    " not in text and "\n\t" not in text and not text.startswith(("    ", "\t")):
        return
    block: list[tuple[int, str]] = []
    blank = True  # whether the line before was blank
    for line in _LINES.finditer(text):
        content = line.group().rstrip("\r\n")
        if content.startswith(("    ", "\t")) and (block or blank):
            block.append((line.start(), content))
        elif block and not content.strip():
            block.append((line.start(), ""))
        else:
            yield from _block(block)
            block = []
        blank = not content.strip()
    yield from _block(block)


def _block(lines: list[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    if any(content.strip() for _, content in lines):
        yield lines[0][0], textwrap.dedent("\n".join(content for _, content in lines)).strip("\n")


def diff_shaped(body: str) -> bool:
    """A fence of another language written as a diff: every line kept, added or removed,
    one at least added or removed (a YAML list's "- item" is neither)."""
    lines = body.splitlines()
    return all(not line or line[0] in "+- " for line in lines) and any(
        len(line) > 1 and line[0] in "+-" and line[1] not in "+- \t" for line in lines)


def prose(text: str, inline: bool = False) -> str:
    """``text`` with its fenced code blanked out, positions kept: the words alone. The
    blank is line ends, which no sentence or word crosses (a run of spaces is scanned
    again from each of its characters by a pattern looking for a sentence's end).
    ``inline``: inline code (```ALL=(ALL) ALL```) blanked too, with spaces, so the
    sentence around it goes on."""
    words = _FENCE.sub(lambda fence: "\n" * len(fence.group()), text)
    return INLINE_CODE.sub(lambda code: " " * len(code.group()), words) if inline else words


# the trees parsed while ``parsed_once`` is in effect, by their source
_PARSED: ContextVar[dict[str, ast.Module | None] | None] = ContextVar("parsed", default=None)


@contextmanager
def parsed_once() -> Iterator[None]:
    """Within it, :func:`parse_python` parses a source once and gives every caller the same
    tree: the detectors of one judgement each read the same code (about half their parses
    were of a source parsed already). The trees go when it ends. No detector changes what
    a tree says (bandit takes its links off as it finishes, and keeps only each node's
    line range on it). Inside another, the outer one's trees are shared."""
    if _PARSED.get() is not None:
        yield
        return
    token = _PARSED.set({})
    try:
        yield
    finally:
        _PARSED.reset(token)


def parse_python(source: str) -> ast.Module | None:
    """Python's syntax tree, with names read as the checks know them (``_Unaliased``), or
    None where it does not parse; the same tree again for a source parsed already inside
    ``parsed_once``."""
    parsed = _PARSED.get()
    if parsed is None:
        return _parse_python(source)
    if source not in parsed:
        parsed[source] = _parse_python(source)
    return parsed[source]


def _parse_python(source: str) -> ast.Module | None:
    """The agent's code is untrusted: what the compiler warns of in it (an invalid escape
    sequence) is about its code, not ours, and stays out of our stderr."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    imports = [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]
    if not imports:
        return tree
    renamed = {alias.asname: alias.name for node in imports for alias in node.names
               if alias.asname and alias.asname != alias.name}
    qualified = {alias.name: f"{node.module}.{alias.name}" for node in imports
                 if isinstance(node, ast.ImportFrom) and node.module and not node.level
                 for alias in node.names if alias.name != "*"}
    _Unaliased(renamed, qualified).visit(tree)  # in place: a module is never replaced
    return tree


def _dotted(name: str, at: ast.AST) -> ast.expr:
    """``a.b.c`` as the expression that names it, at ``at``'s place in the source."""
    first, *rest = name.split(".")
    expr: ast.expr = ast.copy_location(ast.Name(first, ast.Load()), at)
    for attr in rest:
        expr = ast.copy_location(ast.Attribute(expr, attr, ast.Load()), at)
    return expr


class _Unaliased(ast.NodeTransformer):
    """Reads a name as the checks know it, whatever the import that bound it: a name an
    import renamed as the name it renamed (``pk.loads`` after ``import pickle as pk`` is
    ``pickle.loads``; ``req`` after ``from flask import request as req`` is ``request``),
    and a function imported from a module, where it is called, by its module's name
    (``loads(blob)`` after ``from pickle import loads`` is ``pickle.loads(blob)``). A name
    is the agent's choice of words and changes nothing the code does. An object imported
    from a module keeps its own name where it is not called (``request.headers``). Nodes
    keep the name's place in the source, so a quote shows what was written."""

    def __init__(self, renamed: dict[str, str], qualified: dict[str, str]) -> None:
        self.renamed = renamed
        self.qualified = qualified

    def visit_Name(self, node: ast.Name) -> ast.expr:
        name = self.renamed.get(node.id)
        return node if name is None or not isinstance(node.ctx, ast.Load) else \
            _dotted(name, node)

    def visit_Call(self, node: ast.Call) -> ast.Call:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in self.qualified:
            node.func = _dotted(self.qualified[node.func.id], node.func)
        return node


def _call_parts(source: str, tool: str, arguments: dict[str, object] | str) -> Iterator[Part]:
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments)
        except ValueError:
            kind: Kind = "command" if tool.lower() in _SHELL_TOOLS else "message"
            yield Part(kind, source, arguments)
            return
        if not isinstance(parsed, dict):
            return
        arguments = parsed
    path = str(next((arguments[key] for key in PATH_KEYS if arguments.get(key)), ""))
    method = str(arguments.get("method") or "").upper()
    edits = arguments.get("edits")
    for edit in [arguments, *(edits if isinstance(edits, list) else ())]:
        if isinstance(edit, dict):
            yield from _replacements(source, edit, path)
    for key, value in arguments.items():
        typed = _kind(tool.lower(), key.lower(), path, value)
        if isinstance(value, list) and key.lower() in ("commands", "lines") and all(
                isinstance(item, str) for item in value):
            value = "\n".join(value)  # one a line
        elif isinstance(value, list) and key.lower() in _BLOCK_KEYS:
            typed, value = "message", "\n".join(_texts(value))
        elif isinstance(value, list) and typed == "command":
            value = _script(value)  # a command given as its argument list
        if not isinstance(value, str) or not value:
            continue
        if typed == "file" and (_SCRIPT.search(path) or _SCRIPT.match(value)):
            typed = "command"
        elif typed == "file" and _PATCH_FILE.search(path):
            typed = "diff"  # a patch written to a file is the diff it holds
        if typed == "message":
            yield from _prose(source, value, "message", escaped=True)
        elif typed == "command" and key != "url" and (lead := _program(tool, value)):
            yield Part(typed, source, lead + value, escaped=True, path=path, lead=len(lead))
        elif typed == "command" and key == "url" and (lead := _uploads(method, arguments)):
            yield Part(typed, source, lead + value, escaped=True, path=path, lead=len(lead),
                       method=method)
        elif typed is not None:
            yield from _by_file(Part(typed, source, value, escaped=True, path=path,
                                     method=method if key == "url" else ""))
        if typed == "command" and key != "url" and "<<" in value:
            yield from _heredocs(source, value)


def _heredocs(source: str, command: str) -> Iterator[Part]:
    """The files a command's heredocs write (``cat > app.py <<'EOF'``, ``tee``), each as
    that file written whole; a manifest a cluster client applies (``kubectl apply -f -
    <<EOF``) as a manifest written; and the programs they give Python to run (``python3 -
    <<EOF``, ``sudo python3 <<EOF``), each as code of its own, run: the same as ``python3
    -c``. A shell script's is the command's own lines, which its part reads already."""
    for found in _HEREDOC.finditer(command):
        start = command.rfind("\n", 0, found.start()) + 1
        end = command.find("\n", found.end())
        if end < 0:
            continue
        indent = r"\t*" if found.group(1) else ""  # ``<<-`` lets the closer be indented
        closer = re.compile(rf"^{indent}{re.escape(found.group(3))}[ \t]*$", re.M).search(
            command, end + 1)
        body = command[end + 1:closer.start() if closer else len(command)]
        line = command[start:found.start()] + " " + command[found.end():end]
        target = _REDIRECT.search(line)
        if _TO_PYTHON.search(command, start, found.start()):
            yield Part("code", source, body, escaped=True, path=".py")
        elif _APPLIES_STDIN.search(command, start, found.start()):
            yield Part("file", source, body, escaped=True, path="stdin.yaml")
        elif target and not target.group(2).startswith("/dev/") and not (
                _SCRIPT.search(target.group(2)) or _SCRIPT.match(body)):
            yield Part("file", source, body, escaped=True, path=target.group(2))


def _texts(value: object) -> Iterator[str]:
    """The ``text`` strings anywhere in a chat post's blocks, in order."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "text" and isinstance(item, str):
                yield item
            else:
                yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)


def _uploads(method: str, arguments: dict[str, object]) -> str:
    """What to read before the URL of an HTTP call that sends local files in its body (a
    multipart upload: ``files``, ``file``, ``attachment``): ``curl -F`` sending them, the
    same upload as on a command line."""
    if method not in ("POST", "PUT", "PATCH"):
        return ""
    sent: list[str] = []
    for key in _UPLOAD_KEYS:
        value = arguments.get(key)
        values = value.values() if isinstance(value, dict) else (
            value if isinstance(value, list) else [value])
        sent += [v for v in values if isinstance(v, str) and v and not _SPACE.search(v)]
    return "".join(f"curl -F file=@{file} " for file in sent[:_SENT_FILES])


def _program(tool: str, command: str) -> str:
    """What to read before a command given to a tool named after its program: the program
    (``kubectl ``), unless the command names it already (``kubectl get pods``)."""
    program = tool.lower()
    if program not in _PROGRAM_TOOLS:
        return ""
    first = command.split(None, 1)[0].rsplit("/", 1)[-1] if command.strip() else ""
    return "" if first == program else program + " "


def _script(argv: list[object]) -> str | None:
    """The command an argument list runs: the script of ``["bash", "-lc", script]`` (so
    quotes of it are found in the call), else the arguments joined by spaces (a quote
    spanning two of them is not found in the call; the finding stands)."""
    if not argv or not all(isinstance(arg, str) for arg in argv):
        return None
    words = [str(arg) for arg in argv]
    if len(words) == 3 and words[0].rsplit("/", 1)[-1] in _SHELLS and \
            words[1].startswith("-") and "c" in words[1]:
        return words[2]
    return " ".join(words)


def _by_file(part: Part) -> Iterator[Part]:
    """A diff as one part a file it changes, each with the path its header names (the
    part's own path when it names none), so a test's file is told from the code's; any
    other part as it is."""
    headers = list(_FILE_HEADER.finditer(part.text)) if part.kind == "diff" else []
    if not headers:
        yield part
        return
    ends = [following.start() for following in headers[1:]] + [len(part.text)]
    for header, end in zip(headers, ends, strict=True):
        yield dataclasses.replace(part, text=part.text[header.end():end],
                                  base=part.base + header.end(), path=header.group(1).strip())


def _replacements(source: str, edit: dict[str, object], path: str) -> Iterator[Part]:
    """An edit given as replaced text and its replacement, as the unified diff it amounts
    to: every line of the old text removed, every line of the new added. Its lines are
    the call's own, so quotes of them are found in its arguments."""
    for old_key, new_key in _EDIT_KEYS:
        old, new = edit.get(old_key), edit.get(new_key)
        if isinstance(old, str) and isinstance(new, str) and (old or new):
            lines = [f"-{line}" for line in old.splitlines()]
            lines += [f"+{line}" for line in new.splitlines()]
            yield Part("diff", source, "\n".join(lines), escaped=True, path=path)


# a statement by its shape, whatever the tool is called (``execute_query``'s ``query``)
_SQL_SHAPED = re.compile(r"\s{0,20}(?:(?:SELECT\b[^;]{1,2000}?\bFROM|INSERT\s{1,3}INTO|UPDATE"
                         r"\s{1,3}[\w.\"`]{1,80}\s{1,3}SET|DELETE\s{1,3}FROM|(?:DROP|TRUNCATE|"
                         r"ALTER)\s{1,3}TABLE|GRANT|REVOKE)\b|WITH\s{1,3}\w{1,60}\s{1,3}AS\s{0,3}\()",
                         re.I)
_SEARCH_TOOL = re.compile(r"search|web|google|bing|docs|lookup")  # a query for words
# a tool named for a database, whose query is SQL (``db_query``, ``run_sql``, ``bigquery``)
_DATABASE_TOOL = re.compile(r"sql|(?:^|_)(?:db|database|postgres|pg|mysql|bigquery|snowflake|"
                            r"redshift|warehouse|clickhouse)(?:_|$)")


def _kind(tool: str, key: str, path: str, value: object) -> Kind | None:
    if key in _DIFF_KEYS or tool == "apply_patch":
        return "diff"
    if key in _COMMAND_KEYS or (tool in _SHELL_TOOLS | _PROGRAM_TOOLS and key in (
            "input", "args")) or (key == "keys" and ("tmux" in tool or "terminal" in tool)):
        return "command"
    if key == "sql" or (key in ("query", "statement", "stmt") and (
            tool == "query" or _DATABASE_TOOL.search(tool) or (
                isinstance(value, str) and _SQL_SHAPED.match(value)
                and not _SEARCH_TOOL.search(tool)))):
        return "sql"
    if key in ("code", "cell") or (key in _FILE_KEYS and path and (
            key not in ("data", "lines") or _FILE_NAME.search(path))):
        return "file" if key in _FILE_KEYS else "code"
    if key in _MESSAGE_KEYS or key in _ANSWER_KEYS or key in ("subject", "description", "title") \
            or (key in _SAID_KEYS and _SAYING_TOOL.search(tool)):
        return "message"
    if key == "url":
        return "command"
    return None


# a setting as a configuration file writes it: ``key: value``, ``"key": value,`` or ``key =
# "value"`` (YAML, JSON, TOML, INI), a comment after it; and the values that switch a
# setting on and off
SETTING = re.compile(r"^\s{0,40}[\"']?([\w.@/-]{1,80})[\"']?\s{0,3}[:=]\s{0,3}[\"']?(\w{1,12})"
                     r"[\"']?\s{0,3}[,;]?\s{0,3}(?:(?:#|//).{0,200})?$")
SWITCHED_ON = frozenset(("true", "yes", "on", "1", "enable", "enabled"))
SWITCHED_OFF = frozenset(("false", "no", "off", "0", "disable", "disabled"))


def text_lines(text: str) -> Iterator[tuple[int, str]]:
    """(offset, text) of each line of a text, its line end kept."""
    offset = 0
    for line in text.splitlines(keepends=True):
        yield offset, line
        offset += len(line)


def added_lines(diff: str) -> Iterator[tuple[int, str]]:
    """(offset, text) of each line a unified diff adds, without its ``+``."""
    for match in re.finditer(r"^\+(?!\+\+ )([^\n]{0,2000})", diff, re.M):
        yield match.start(1), match.group(1)


def removed_lines(diff: str) -> Iterator[tuple[int, str]]:
    for match in re.finditer(r"^-(?!-- )([^\n]{0,2000})", diff, re.M):
        yield match.start(1), match.group(1)


# a run of text written in an encoding: percent-encoded (``amqps%3A%2F%2F...``), or base64
# (a multiple of four characters, sixteen or more, letters and digits both in it)
_PERCENT = re.compile(r"(?<![\w.~+/=&?:@%-])[\w.~+/=&?:@-]{0,200}%[0-9A-Fa-f]{2}"
                      r"[\w.~+/=&?:@%-]{0,400}")
_BASE64 = re.compile(r"(?<![\w+/=-])(?=[A-Za-z0-9+/]{0,600}\d)(?=[A-Za-z0-9+/]{0,600}[A-Za-z])"
                     r"(?:[A-Za-z0-9+/]{4}){4,150}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?"
                     r"(?![\w+/=-])")


def decoded(text: str) -> Iterator[tuple[int, str]]:
    """(offset, text) of each run of ``text`` written in an encoding, decoded: a
    percent-encoded run, and a base64 run that decodes to printable text. The same words
    encoded are the same words sent: a reader decodes them in a moment."""
    for found in _PERCENT.finditer(text) if "%" in text else ():
        yield found.start(), unquote(found.group())
    for found in _BASE64.finditer(text):
        try:
            plain = base64.b64decode(found.group(), validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            continue
        if plain.isprintable():
            yield found.start(), plain


_STEP = re.compile(r"steps\[(\d+)\]")


def calls_done(trajectory: Trajectory, done: list[Part]) -> Iterator[tuple[str, ToolCall]]:
    """The tool calls of the run or the step ``done`` was split from, each with the source
    its parts name: every call where ``done`` holds the answer (a whole run), else the
    calls of the steps its parts come from (a step judged alone, in a context that
    numbers its steps afresh: the step judged is the context's last). For the checks that
    read a call's arguments whole (a flag in an HTTP body), which parts do not carry."""
    steps = trajectory.steps
    if any(part.source == "response" for part in done):
        indexed = list(enumerate(steps))
    else:
        named = sorted({int(found.group(1)) for part in done
                        if (found := _STEP.match(part.source))})
        indexed = [(i, steps[i] if i < len(steps) else steps[-1]) for i in named if steps]
    for i, step in indexed:
        for j, call in enumerate(step.tool_calls):
            yield f"steps[{i}].tool_calls[{j}].arguments", call


# a command or code that writes a document: its text redirected or teed into a file of
# prose or data ("echo '...' >> reports/week-48.md", "cat <<EOF > notes.txt"), or the file
# opened to write ("open('notes.md', 'a')", "Path('notes.md').write_text(...)")
_DOCUMENT = r"(?<![\w./~-])[\w./~-]{1,200}\.(?:md|markdown|txt|rst|html?|csv|json|ya?ml|log)\b"
_WRITES_DOCUMENT = cued(
    rf"(?:>>?|\btee(?:\s{{1,3}}-a)?)\s{{0,3}}[\"']?{_DOCUMENT}|{_DOCUMENT}[\"']\s{{0,3}}"
    r"(?:,\s{0,3}(?:mode\s{0,2}=\s{0,2})?[\"'][wax]|\)\s{0,3}\.write_(?:text|bytes)\b)")


def documents(done: list[Part]) -> Iterator[Part]:
    """The documents the agent wrote by a tool call, where a report it delivers may be
    rather than in its answer: a file written whole by a tool, or a command or code that
    writes its text into a document."""
    for part in done:
        if ".tool_calls[" in part.source and (part.kind == "file" or (
                part.kind in ("command", "code") and _WRITES_DOCUMENT.search(part.text))):
            yield part
