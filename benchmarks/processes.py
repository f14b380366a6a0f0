"""What the benchmarks' processes use, read from /proc (Linux): the resident memory and CPU
of a process and its descendants, and the whole machine's busy CPU, so that a run on a
shared machine says how much of it others took."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


def tree(pid: int, name: str) -> dict[str, tuple[float, float]]:
    """Resident MB and CPU seconds so far of ``pid`` and of each of its descendants, by a
    readable name."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry.name))
    found: dict[str, tuple[float, float]] = {}
    todo = [(pid, name)]
    while todo:
        current, name = todo.pop()
        with contextlib.suppress(OSError):
            stat = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            kb = int(stat[21]) * os.sysconf("SC_PAGE_SIZE") // 1024
            found[name] = (kb / 1024, (int(stat[11]) + int(stat[12])) / TICKS)
        for i, child in enumerate(sorted(children.get(current, []))):
            todo.append((child, f"{name}/{_role(child)}{i}"))
    return found


def _role(pid: int) -> str:
    with contextlib.suppress(OSError):
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        for part, role in ((b"resource_tracker", "tracker"), (b"multiprocessing", "worker"),
                           (b"monitor_gateway\0serve", "gateway"), (b"tansu", "broker"),
                           (b"--serve", "stub"), (b"py-spy", "profiler")):
            if part in cmdline:
                return role
    return "child"


def machine_busy() -> float:
    """CPU seconds every core of the machine has spent busy since boot (all but idle and
    I/O wait)."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = map(int, fields[:8])
    return (user + nice + system + irq + softirq + steal) / TICKS
