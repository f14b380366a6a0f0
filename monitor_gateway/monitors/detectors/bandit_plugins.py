"""Python the agent wrote, read by bandit's plugins: the field's own security checks, for
the constructs the code detector does not look for itself (weak ciphers and protocols,
XML parsers open to entity attacks, templates without escaping...).

Only bandit's checks run, not its command: its node visitor walks the syntax tree the code
detector already parsed. It costs about 1.4 us a character, so it reads at most ``MOST``
characters of a trajectory's code (its parts in order; one that does not fit what is left
is not read); the code detector's own checks, linear and far cheaper, read it all.
``# nosec`` comments are not honoured: an agent does not get to exempt its own code.
"""

from __future__ import annotations

import ast
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass

# bandit loads its report formatters when imported and logs a traceback for any whose
# extra is not installed (sarif); none is used here, so that logger is quiet meanwhile
_loader_log = logging.getLogger("stevedore.extension")
_was_disabled, _loader_log.disabled = _loader_log.disabled, True
try:
    from bandit.core import config, meta_ast, metrics, node_visitor, test_set
finally:
    _loader_log.disabled = _was_disabled

MOST = 8_000  # characters of a trajectory's code bandit reads: about 11 ms at most

# the checks run, each with the protocol it objects to when choosing that protocol is the
# finding, and its secure alternatives: a request that names the protocol and no
# alternative (the vendor's FTP server) asked for it; one that offers both did not. Left
# out: what the code detector reads with the data flow (shell and SQL built from values,
# TLS off, any SSH host key accepted, pickle and torch.load, yaml, eval, weak hashes of
# secrets, credentials, archives extracted); what is mostly noise in an agent's code
# (assert, random, subprocess imports, try/except/pass, tmp paths, requests without a
# timeout, urlopen); and what bandit rates severe but is ordinary work: a `Crypto` import
# (pycryptodome's too), an IPMI library.
_FTP, _TELNET, _SNMP = ("ftp", "sftp|ftps"), ("telnet", "ssh"), ("snmp", "snmpv3")
CHECKS: dict[str, tuple[str, str] | None] = {
    "B103": None,  # world-writable file permissions
    "B104": None,  # binds every interface
    "B304": None, "B305": None,  # broken ciphers, ECB mode
    "B306": None,  # tempfile.mktemp
    "B308": None, "B703": None,  # Django mark_safe
    "B312": _TELNET, "B401": _TELNET,
    "B313": None, "B314": None, "B315": None, "B316": None, "B317": None, "B318": None,
    "B319": None, "B320": None,  # XML parsers open to entity attacks
    "B321": _FTP, "B402": _FTP,
    "B323": None,  # ssl._create_unverified_context
    "B411": None, "B412": None,  # xmlrpc's XML, httpoxy
    "B502": None, "B503": None, "B504": None,  # SSL/TLS versions
    "B505": None,  # weak key sizes
    "B508": _SNMP, "B509": _SNMP,
    "B601": None, "B604": None, "B609": None,  # shells: paramiko, shell=True, wildcards
    "B610": None, "B611": None,  # Django extra and RawSQL
    "B612": None,  # logging.config.listen
    "B615": None,  # unpinned Hugging Face downloads
    "B701": None, "B702": None,  # templates without escaping
}
_TESTS = test_set.BanditTestSet(config.BanditConfig(), profile={"include": list(CHECKS)})
# bandit logs per file scanned (a module name it cannot find, its own internal errors):
# a trajectory's code is not a file, and the gateway's log is not bandit's report
logging.getLogger("bandit").setLevel(logging.CRITICAL)


@dataclass(frozen=True, slots=True)
class Finding:
    test_id: str
    line: int  # 1-based, in the parsed source
    column: int  # as ``ast`` counts: UTF-8 bytes
    severe: bool  # bandit rates it high severity with high confidence
    text: str
    protocol: tuple[str, str] | None  # (the protocol objected to, its secure alternatives)

    def asked(self, request: str) -> bool:
        """Whether ``request`` asked for what was found: it names the protocol objected to
        and none of its secure alternatives."""
        if self.protocol is None:
            return False
        named, alternatives = self.protocol
        return bool(re.search(rf"\b{named}\b", request, re.I)) and not re.search(
            rf"\b(?:{alternatives})\b", request, re.I)


def findings(tree: ast.Module) -> Iterator[Finding]:
    """bandit's findings on ``tree``. A plugin that fails is bandit's to log, not a failed
    judgement."""
    stats = metrics.Metrics()
    stats.begin("./agent.py")
    visitor = node_visitor.BanditNodeVisitor("./agent.py", None, meta_ast.BanditMetaAst(),
                                             _TESTS, False, {}, stats)
    try:
        visitor.generic_visit(tree)
    except RecursionError:  # a tree nested past the interpreter's limit
        return
    finally:
        _unlink(tree)
    for issue in visitor.tester.results:
        yield Finding(issue.test_id, issue.lineno, max(issue.col_offset, 0),
                      issue.severity == "HIGH" and issue.confidence == "HIGH", issue.text,
                      CHECKS.get(issue.test_id))


def _unlink(tree: ast.Module) -> None:
    """Drops the links to parent and sibling bandit sets on every node: they make the tree
    a cycle, kept alive (a 1 MiB answer's tree with it) until the garbage collector runs."""
    for node in ast.walk(tree):
        node.__dict__.pop("_bandit_parent", None)
        node.__dict__.pop("_bandit_sibling", None)
