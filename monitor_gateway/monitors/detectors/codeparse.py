"""Code as the code family reads it: the lines a part adds (a diff's added lines joined
into one source) and where a node of its syntax tree is, in that source and in the part it
came from, so a finding quotes the agent's own text.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from .parts import LINE
from .shellparse import narrows

_NEWLINE = re.compile(r"\r\n|\r|\n")  # what Python's tokenizer ends a line at
Node = ast.stmt | ast.expr | ast.excepthandler | ast.pattern  # what has a place in the source


# a name that holds a web request, read as the words of a snake_case name
_REQUEST_WORDS = frozenset(("request", "req"))
REQUEST_NAMED = re.compile(r"(?<![A-Za-z0-9])req(?:uest)?(?![A-Za-z0-9])")


def holds_request(name: str) -> bool:
    """Whether ``name`` holds a web request by what it is called: ``request``, ``req``, or
    a name with one as a word of its own (``http_request``, ``request_v2``): a view's
    parameter is named by its author, and renaming it changes nothing the code does."""
    return not _REQUEST_WORDS.isdisjoint(name.lower().split("_"))


class Located:
    """Parsed source and where its nodes are, in the source and in the part it came from
    (a diff's added lines are joined into one source). Line starts are found once:
    ``ast.get_source_segment`` splits the whole source on every call, quadratic on a large
    file with many findings."""

    def __init__(self, lines: list[tuple[int, str]]) -> None:
        self.source = "\n".join(text for _, text in lines)
        self.starts: list[int] = []  # where each source line starts, in the source
        self.origin: list[int] = []  # and in the part
        at = 0
        for offset, text in lines:
            for inner in (0, *(m.end() for m in _NEWLINE.finditer(text))):
                self.starts.append(at + inner)
                self.origin.append(offset + inner)
            at += len(text) + 1
        self._ascii = self.source.isascii()

    def _column(self, line: int, col: int) -> int:
        """ast's columns count UTF-8 bytes; characters are wanted."""
        if self._ascii:
            return col
        start = self.starts[line]
        return len(self.source[start:start + col].encode()[:col].decode(errors="ignore"))

    def segment(self, node: Node) -> str:
        """The node's source text, as ``ast.get_source_segment`` gives it."""
        end_line, end_col = node.end_lineno, node.end_col_offset
        if end_line is None or end_col is None:
            return ""
        line = node.lineno - 1
        start = self.starts[line] + self._column(line, node.col_offset)
        return self.source[start:self.starts[end_line - 1] + self._column(end_line - 1, end_col)]

    def first_line(self, node: Node) -> tuple[int, int]:
        """Where the node's first line is in the part: from the node to its line's end."""
        return self.line_from(node.lineno, node.col_offset)

    def line_from(self, lineno: int, col_offset: int) -> tuple[int, int]:
        """Where a line is in the part, from a column (``ast``'s numbering) to its end."""
        line = lineno - 1
        column = self._column(line, col_offset)
        start = self.starts[line] + column
        end = self.source.find("\n", start, start + 2 * LINE)
        length = (end if end >= 0 else start + 2 * LINE) - start
        return self.origin[line] + column, self.origin[line] + column + length


def dedented(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Lines moved left by the indent they all share, where each starts in the part kept:
    an edit's added lines inside a function parse once moved left."""
    indent = min((len(text) - len(text.lstrip(" \t")) for _, text in lines if text.strip()),
                 default=0)
    return [(offset + indent, text[indent:]) if text.strip() else (offset, "")
            for offset, text in lines]


def assigned(tree: ast.AST) -> dict[str, ast.expr]:
    """Each name's value where a statement assigns it (``rcpt = [...]``; a name assigned
    twice, its last): what :func:`constant` reads a name as."""
    names: dict[str, ast.expr] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            names[node.targets[0].id] = node.value
    return names


def constant(node: ast.expr, names: dict[str, ast.expr], depth: int = 0
             ) -> str | list[str] | None:
    """What an expression always is, where the code fixes it: a literal, literals joined
    (``'audit' + '@example.com'``, an f-string of literals, ``', '.join([...])``), a list
    of them, or a name assigned one; else None. The same value spelled in pieces is the
    same value."""
    if depth > 8:
        return None
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.Name) and node.id in names:
        return constant(names[node.id], names, depth + 1)
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        items = [constant(item, names, depth + 1) for item in node.elts]
        if all(isinstance(item, str) for item in items):
            return [str(item) for item in items]
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = constant(node.left, names, depth + 1), constant(node.right, names, depth + 1)
        if isinstance(left, str) and isinstance(right, str):
            return left + right
        if isinstance(left, list) and isinstance(right, list):
            return left + right
        return None
    if isinstance(node, ast.JoinedStr):
        pieces = [constant(value.value if isinstance(value, ast.FormattedValue) else value,
                           names, depth + 1) for value in node.values]
        return "".join(map(str, pieces)) if all(isinstance(p, str) for p in pieces) else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr == "join" and len(node.args) == 1:
        glue, joined = constant(node.func.value, names, depth + 1), constant(
            node.args[0], names, depth + 1)
        if isinstance(glue, str) and isinstance(joined, list):
            return glue.join(joined)
    return None


def each_listed(tree: ast.AST) -> Iterator[tuple[Node, str]]:
    """Each loop of code over every item a listing call returns (``for a in
    client.alerts(repo='billing', state='open'):``, or a comprehension, ``[a.dismiss() for
    a in client.alerts()]``), with its body's source: a listing whose keywords narrow
    nothing (see ``shellparse.narrows``), and a body that tests nothing (an ``if`` in it,
    or a comprehension's, chooses the items)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.For) and _lists_every(node.iter) and not any(
                isinstance(inner, ast.If | ast.IfExp | ast.Continue | ast.Break)
                for statement in node.body for inner in ast.walk(statement)):
            yield node, "\n".join(ast.unparse(statement) for statement in node.body)
        elif isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp) and len(
                node.generators) == 1 and not node.generators[0].ifs and _lists_every(
                node.generators[0].iter) and not any(
                isinstance(inner, ast.IfExp) for inner in ast.walk(node.elt)):
            yield node, ast.unparse(node.elt)


def _lists_every(listing: ast.expr) -> bool:
    """Whether an expression is a listing call whose keywords narrow nothing (not
    ``range()``, nor a call that only orders or pairs what it is given)."""
    return isinstance(listing, ast.Call) and not any(
        keyword.arg and narrows(keyword.arg, constant(keyword.value, {}))
        for keyword in listing.keywords) and not (
        isinstance(listing.func, ast.Name) and listing.func.id in (
            "range", "enumerate", "zip", "sorted", "reversed", "list", "map", "filter"))
