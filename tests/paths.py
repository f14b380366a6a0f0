"""Where things are, for tests in any of the test folders."""

import os
from pathlib import Path

TESTS = Path(__file__).parent
ROOT = TESTS.parent


def pythonpath(*more: Path) -> str:
    """A child process's PYTHONPATH: this checkout first, then ``more``. Without it, a
    child whose working directory is not this checkout imports the installed package, and
    in a git worktree the virtualenv's editable install is another checkout's code."""
    return os.pathsep.join(str(path) for path in (ROOT, *more))
