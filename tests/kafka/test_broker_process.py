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
    return subprocess.Popen(
        [sys.executable, "-m", "monitor_gateway", "broker", "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


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
    time.sleep(1.0)  # past start-up: topics created, waiting
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
