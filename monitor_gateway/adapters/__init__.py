"""Adapters from agent frameworks to the gateway: each turns a run into a trajectory and
hands it to an :class:`~monitor_gateway.adapters.outbox.Outbox`, which never blocks the
agent."""
