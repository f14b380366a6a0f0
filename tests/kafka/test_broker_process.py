"""``monitor-gateway broker`` as a real process: stops its broker on SIGTERM and SIGINT, and
refuses a port that another process holds."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time

import pytest

from monitor_gateway.embedded import free_port, port_taken


def start_broker(port: int) -> subprocess.Popen[str]:
    """The ``broker`` command as a terminal starts it: with SIGINT at its default even when
    the test runner was started in the background, which ignores SIGINT for its children
    (and Python then installs no KeyboardInterrupt for it)."""
    return subprocess.Popen(
        [sys.executable, "-m", "monitor_gateway", "broker", "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def wait_listening(port: int, process: subprocess.Popen[str], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stdout.read() if process.stdout else ""
        if port_taken("127.0.0.1", port):
            return
        time.sleep(0.1)
    raise AssertionError("the broker did not start listening")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_broker_stops_its_child_on_a_signal(sig: signal.Signals) -> None:
    port = free_port()
    process = start_broker(port)
    wait_listening(port, process)
    # past start-up (topics created, waiting): a signal that lands while the topics are
    # being created cancels that work and is not seen again
    assert process.stdout is not None
    while "Ctrl-C stops it" not in (line := process.stdout.readline()):
        assert line, "the broker exited before it was ready"
    process.send_signal(sig)
    assert process.wait(20) == 0
    deadline = time.monotonic() + 5
    while port_taken("127.0.0.1", port) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not port_taken("127.0.0.1", port)  # no broker left behind on the port


def test_broker_refuses_a_port_another_process_holds() -> None:
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        process = start_broker(port)
        out, _ = process.communicate(timeout=30)
    assert process.returncode == 2
    assert f"port {port} on 127.0.0.1 is in use by another process" in out
