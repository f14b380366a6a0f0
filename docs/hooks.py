"""MkDocs hook: the settings page's tables, generated from the settings models when the
site is built, so the page lists exactly what the code reads. A field without a
description (its docstring, or its model's when the model has no other field) fails the
build."""

from __future__ import annotations

import types
import typing
from pathlib import Path
from typing import Any

from pydantic import SecretStr
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings

from monitor_gateway.monitors.classifier import ClassifierSettings
from monitor_gateway.monitors.llm import LLMSettings
from monitor_gateway.monitors.offline import OfflineSettings
from monitor_gateway.settings import (
    ENV_PREFIX,
    GatewaySettings,
    GuardSettings,
    KafkaSettings,
    flag,
)

MARKER = "<!-- settings -->"
ROOT = Path(__file__).resolve().parent.parent
# each model's own fields (a subclass's inherited ones are its base's), under a heading
MODELS: list[tuple[str, type[BaseSettings]]] = [
    ("Kafka: every command that talks to Kafka", KafkaSettings),
    ("The gateway: `serve` and `demo`", GatewaySettings),
    ("The pre-execution guard: `guard` (with the gateway's monitor, policy and Kafka "
     "settings)", GuardSettings),
    ("The offline monitor (`MONITOR=offline`)", OfflineSettings),
    ("The classifier (`MONITOR=classifier`)", ClassifierSettings),
    ("The LLM judge (`MONITOR=openai`, and a cascade's judge)", LLMSettings),
]


def reference() -> str:
    """The settings page's tables: a section a settings model."""
    flags = _flags()
    sections = []
    for heading, model in MODELS:
        inherited = {name for base in model.__mro__[1:] if issubclass(base, BaseSettings)
                     for name in base.model_fields}
        rows = ["| variable | flag | values | default | what it does |", "|---|---|---|---|---|"]
        for name, field in model.model_fields.items():
            if name in inherited:
                continue
            # a model of one setting may say what it is in its own docstring
            alone = len(model.model_fields) == 1 and model.__doc__
            described = field.description or alone
            if not described:
                raise ValueError(f"{model.__name__}.{name} has no description (a docstring)")
            commands = flags.get(name, [])
            shown = f"`{flag(name)}` ({', '.join(commands)})" if commands else ""
            description = " ".join(described.replace("``", "`").split())
            rows.append(f"| `{ENV_PREFIX}{name.upper()}` | {shown} | {_values(field)} | "
                        f"{_default(field)} | {description} |")
        sections.append(f"## {heading}\n\n" + "\n".join(rows))
    return "\n\n".join(sections) + "\n"


def _flags() -> dict[str, list[str]]:
    """Each setting's commands with a flag for it: an option whose help names its
    variable."""
    import typer

    from monitor_gateway.cli import app

    group = typer.main.get_command(app)
    found: dict[str, list[str]] = {}
    for command_name, command in sorted(getattr(group, "commands", {}).items()):
        for param in command.params:
            help_text = getattr(param, "help", None) or ""
            for name in GuardSettings.model_fields:
                if flag(name) in param.opts and f"{ENV_PREFIX}{name.upper()}" in help_text:
                    found.setdefault(name, []).append(f"`{command_name}`")
    return found


def _values(field: FieldInfo) -> str:
    """The values a field takes: a Literal's choices, else its type and bounds."""
    annotation = field.annotation
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) is typing.Literal:
        return ", ".join(f"`{value}`" for value in typing.get_args(annotation))
    if isinstance(annotation, types.UnionType) and len(args) == 1:
        annotation = args[0]
        if typing.get_origin(annotation) is typing.Literal:
            return ", ".join(f"`{value}`" for value in typing.get_args(annotation))
    kinds: dict[object, str] = {str: "text", int: "integer", float: "number",
                                bool: "`true` or `false`", SecretStr: "text (secret)"}
    kind = kinds.get(annotation, str(annotation))
    bounds = []
    for constraint in field.metadata:
        for attribute, sign in (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<")):
            value = getattr(constraint, attribute, None)
            if value is not None:
                bounds.append(f"{sign} {value:,}")
    return kind + (f", {' and '.join(bounds)}" if bounds else "")


def _default(field: FieldInfo) -> str:
    default = field.default
    if default is None:
        return "unset"
    if isinstance(default, bool):
        return f"`{str(default).lower()}`"
    if isinstance(default, str) and Path(default).is_absolute():
        path = Path(default)
        if path.is_relative_to(ROOT):  # a file shipped with the package
            return f"`{path.relative_to(ROOT)}`"
    return f"`{default}`"


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    """MkDocs' hook: the settings page gets its tables where its marker is."""
    if page.file.src_uri == "settings.md":
        if MARKER not in markdown:
            raise ValueError(f"settings.md has lost its {MARKER} marker")
        return markdown.replace(MARKER, reference())
    return markdown
