"""Adapters from agent frameworks to the gateway: each turns a run into a trajectory and
hands it to an :class:`~monitor_gateway.adapters.outbox.Outbox`, which never blocks the
agent."""


def needs(extra: str) -> str:
    """What to tell a user who imported an adapter without its framework installed."""
    return (f"this adapter needs the {extra!r} extra: pip install 'monitor-gateway[{extra}]'")
