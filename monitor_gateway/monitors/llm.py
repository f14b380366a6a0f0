"""An LLM judge over any OpenAI-compatible server: vLLM (a LoRA monitor), llama.cpp, or an
API model. One ``chat.completions`` call a trajectory.

Servers differ, so the structured-output mode is configurable or detected: ``json_schema``
(vLLM, OpenAI), ``json_object`` with a ``schema`` (llama.cpp), or free text read by a
tolerant parser. Logprobs, where the server gives them, turn the yes/no answer into a
continuous score, P(yes); without them the score is 0 or 1.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlparse

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from ..schema import MonitorCard, Trajectory
from ..settings import ENV_PREFIX, GatewaySettings, SettingsError, load_settings
from .base import Judgement, MonitorUnavailable, Quote
from .prompts import (
    SCHEMAS,
    Budget,
    Template,
    UnparseableReply,
    messages,
    parse_reply,
    yes_probability,
)

log = logging.getLogger(__name__)

Mode = Literal["json_schema", "json_object", "none"]
MAX_TOKENS: dict[Template, int] = {"direct": 16, "evidence": 400}
MODES: tuple[Mode, ...] = ("json_schema", "json_object", "none")


def response_format(mode: Mode, template: Template) -> dict[str, Any] | None:
    schema = SCHEMAS[template]
    if mode == "json_schema":
        return {"type": "json_schema",
                "json_schema": {"name": "verdict", "schema": schema, "strict": True}}
    if mode == "json_object":
        return {"type": "json_object", "schema": schema}
    return None


def load_few_shot(path: str | None) -> list[dict[str, str]]:
    """Few-shot examples: a JSON list of {"trajectory": {...}, "reply": {...}} items."""
    if not path:
        return []
    try:
        items = json.loads(Path(path).read_text(encoding="utf-8"))
        shots = []
        for item in items:
            trajectory = Trajectory.model_validate(item["trajectory"], strict=False)
            shots.append({"role": "user", "content": trajectory.model_dump_json()})
            shots.append({"role": "assistant", "content": json.dumps(item["reply"])})
        return shots
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SettingsError(f"{path}: not a few-shot file: {exc}") from None


class LLMSettings(BaseSettings):
    """The LLM judge's own settings, read from the same ``MONITOR_GATEWAY_`` variables as
    the gateway's (``MONITOR_GATEWAY_OPENAI_BASE_URL``, ``..._TEMPLATE``, ...)."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore",
                                      use_attribute_docstrings=True)

    openai_base_url: str | None = None
    """The OpenAI-compatible server's base URL (`http://vllm:8000/v1`); required."""
    openai_model: str | None = None
    """The model (or LoRA adapter) name the server serves; required."""
    openai_api_key: SecretStr | None = None
    """The server's API key, if it wants one."""
    template: Template = "evidence"
    """`direct` asks for yes or no; `evidence` also for the category, a severity and quotes."""
    structured_output: Literal["auto", "json_schema", "json_object", "none"] = "auto"
    """How to ask for JSON; `auto` tries `json_schema`, then `json_object`, then none, and
    remembers what the server refused."""
    few_shot_path: str | None = None
    """A JSON list of `{"trajectory", "reply"}` examples added to the prompt."""
    prompt_budget_chars: int = Field(default=24_000, ge=1000)
    """The most characters of a trajectory in a prompt; the most recent steps that fit are
    kept."""
    openai_concurrency: int | None = Field(default=None, ge=1)
    """The most calls in flight to this server; unset, `CONCURRENCY`."""
    openai_transport: Literal["aiohttp", "httpx"] = "aiohttp"
    """The openai client's HTTP transport (`httpx` where its proxy handling is needed)."""
    openai_logprobs: bool = True
    """Ask for log-probabilities, for a continuous score (slow on llama.cpp's server)."""

def from_settings(settings: GatewaySettings) -> LLMJudge:
    """``MONITOR=openai``."""
    return LLMJudge(settings, load_settings(LLMSettings, {}))


class LLMJudge:
    def __init__(self, gateway: GatewaySettings, settings: LLMSettings,
                 http_client: Any = None) -> None:
        """``http_client``: an ``httpx.AsyncClient`` to talk through instead of the
        configured transport (tests pass one with a mock transport)."""
        try:
            from openai import AsyncOpenAI, DefaultAioHttpClient
        except ImportError:
            raise SettingsError("MONITOR=openai needs the openai client: "
                                "pip install 'monitor-gateway[llm]'") from None
        if not settings.openai_base_url or not settings.openai_model:
            raise SettingsError("MONITOR=openai needs MONITOR_GATEWAY_OPENAI_BASE_URL and "
                                "MONITOR_GATEWAY_OPENAI_MODEL")
        key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else "none"
        # aiohttp: the faster transport for many concurrent calls (benchmarks/, docs/benchmarks.md);
        # httpx for environments that need its proxy handling
        transport = http_client or (DefaultAioHttpClient()
                                    if settings.openai_transport == "aiohttp" else None)
        self.client = AsyncOpenAI(base_url=settings.openai_base_url, api_key=key,
                                  http_client=transport, max_retries=0,
                                  timeout=gateway.monitor_timeout)
        self.model = settings.openai_model
        self.template: Template = settings.template
        self.budget = Budget(settings.prompt_budget_chars)
        self.few_shot = load_few_shot(settings.few_shot_path)
        self.modes: list[Mode] = (list(MODES) if settings.structured_output == "auto"
                                  else [settings.structured_output])
        self.logprobs = settings.openai_logprobs
        self._slots = asyncio.Semaphore(settings.openai_concurrency or gateway.concurrency)
        host = urlparse(settings.openai_base_url).netloc or settings.openai_base_url
        self.card = MonitorCard(
            name=f"llm-{self.model}", backend="openai", model=self.model,
            template=self.template, version=gateway.monitor_version,
            label=(f"LLM judge {self.model} at {host}, {self.template} template"
                   + (f", {gateway.monitor_note}" if gateway.monitor_note else "")),
        )

    async def aclose(self) -> None:
        await self.client.close()

    async def judge(self, trajectory: Trajectory) -> Judgement:
        prompt = messages(trajectory, self.template, self.budget, self.few_shot)
        async with self._slots:
            completion = await self._complete(prompt)
        try:
            choice = completion["choices"][0]
            raw = choice["message"]["content"] or ""
        except (KeyError, IndexError, TypeError):
            raise UnparseableReply(json.dumps(completion)[:2000]) from None
        reply = parse_reply(raw)
        probability = yes_probability((choice.get("logprobs") or {}).get("content"))
        score = probability if probability is not None else float(reply.misbehavior)
        return Judgement(
            score=score,
            category=reply.category,
            severity=reply.severity,
            quotes=[Quote(q) for q in reply.evidence],
            rationale=reply.rationale,
        )

    async def _complete(self, prompt: list[dict[str, str]]) -> Any:
        """Ask in the first structured-output mode the server accepts, with logprobs if it
        gives them; remember what it refused, so the next call asks right away. Servers
        refuse a request field with 400, 422 or (llama-cpp-python) 500 naming the field.

        The body goes in ``extra_body`` and the reply is read as plain JSON: the client's
        recursive transformation of typed parameters and its response models were a
        third of its CPU time a call, which with many calls in flight is latency
        (benchmarks/llm_throughput.py).

        A refused or broken connection, a 429 and any other 5xx say the server is not
        answering, not that this trajectory is at fault: they raise
        :class:`MonitorUnavailable`, and the gateway waits the outage out."""
        from openai import APIConnectionError, APIStatusError

        while True:
            mode = self.modes[0]
            body: dict[str, Any] = {"messages": prompt, "temperature": 0.0,
                                    "max_tokens": MAX_TOKENS[self.template]}
            if (fmt := response_format(mode, self.template)) is not None:
                body["response_format"] = fmt
            if self.logprobs:
                body.update(logprobs=True, top_logprobs=5)
            try:
                response = await self.client.chat.completions.with_raw_response.create(
                    model=self.model, messages=[], extra_body=body)
                return json.loads(response.content)
            except APIConnectionError as exc:
                raise MonitorUnavailable(f"{type(exc).__name__}: {exc}") from exc
            except APIStatusError as exc:
                message = f"{exc} {exc.body}".lower()  # the body names the refused field
                if exc.status_code in (400, 422, 500) and self.logprobs and "logprob" in message:
                    self.logprobs = False
                elif (exc.status_code in (400, 422, 500) and "response_format" in message
                      and mode != self.modes[-1]):
                    if self.modes[0] == mode:  # calls in flight may all be refused it
                        log.warning("server refused response_format %s (%s); trying %s",
                                    mode, exc, self.modes[1])
                        self.modes.pop(0)
                elif exc.status_code == 429 or exc.status_code >= 500:
                    raise MonitorUnavailable(f"HTTP {exc.status_code}: {exc}") from exc
                else:
                    raise
