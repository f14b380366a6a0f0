"""Child processes that die with their parent: the embedded broker, and a CPU-bound
monitor's worker processes. However the parent ends (SIGKILL, the OOM killer, a SIGTERM
with no handler), none is left holding a port, a core or its standard output."""

from __future__ import annotations

import ctypes
import signal
import sys


def die_with_parent() -> None:
    """In a child process (Linux; elsewhere nothing): SIGTERM it when its parent dies. The
    signal follows the thread that started the child: start children from a thread that
    lives as long as the process (the main thread, or the event loop's)."""
    if sys.platform != "linux":
        return
    libc = ctypes.CDLL(None, use_errno=True)
    pr_set_pdeathsig = 1
    libc.prctl(pr_set_pdeathsig, signal.SIGTERM)
