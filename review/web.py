"""The review page: a reviewer works through the queue. Server-rendered (Jinja2, every
trajectory text escaped), one small script of our own, nothing loaded from elsewhere (the
Content-Security-Policy says so to the browser too). Writing needs a login with the
review token; ``/metrics``, ``/health`` and ``/live`` carry no trajectory text and need none."""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from jinja2 import Environment, FileSystemLoader, select_autoescape
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from pydantic import BaseModel, Field, ValidationError
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from monitor_gateway.schema import (
    CATEGORIES,
    Category,
    Decision,
    ReviewRequest,
    SpanJudgement,
    Trajectory,
)

from .health import Health, one_line
from .labelling import Added, AnswerError, answer
from .metrics import ProductionCollector
from .queue import ReviewQueue

HERE = Path(__file__).parent
COOKIE = "review_session"
POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
          "img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
TEMPLATES = Environment(loader=FileSystemLoader(HERE / "templates"),
                        autoescape=select_autoescape(default=True))


@dataclass(frozen=True, slots=True)
class Piece:
    text: str
    mark: int | None  # the verdict's evidence index highlighted here, if any


@dataclass(frozen=True, slots=True)
class Block:
    source: str
    heading: str
    pieces: list[Piece]


def pieces(text: str, spans: list[tuple[int, int, int]]) -> list[Piece]:
    """``text`` cut at the spans ``(start, end, index)``, each span a marked piece; a span
    overlapping one before it is left unmarked (its quote is still listed)."""
    out, at = [], 0
    for start, end, index in sorted(spans):
        if start < at or end > len(text) or start >= end:
            continue
        if start > at:
            out.append(Piece(text[at:start], None))
        out.append(Piece(text[start:end], index))
        at = end
    if at < len(text) or not out:
        out.append(Piece(text[at:], None))
    return out


def blocks(trajectory: Trajectory, request: ReviewRequest) -> Iterator[Block]:
    """The trajectory's texts in reading order, the verdict's grounded quotes marked."""
    spans: dict[str, list[tuple[int, int, int]]] = {}
    for i, evidence in enumerate(request.verdict.evidence):
        if evidence.source and evidence.start is not None and evidence.end is not None:
            spans.setdefault(evidence.source, []).append((evidence.start, evidence.end, i))
    roles = {f"steps[{i}]": step.role for i, step in enumerate(trajectory.steps)}
    for source, text in trajectory.texts():
        step = source.split(".")[0]
        heading = f"{source} ({roles[step]})" if step in roles else source
        yield Block(source, heading, pieces(text, spans.get(source, [])))


class Answer(BaseModel):
    """What the page's script posts."""

    decision: Decision
    category: Category | None = None
    judged: dict[int, SpanJudgement] = Field(default_factory=dict)
    added: list[dict[str, Any]] = Field(default_factory=list)
    note: str = Field(default="", max_length=10_000)


class ReviewApp:
    def __init__(self, queue: ReviewQueue, token: str, health: Health) -> None:
        self.queue = queue
        self.token = token
        self.health = health
        self.sessions: dict[str, str] = {}  # session id -> reviewer
        self.registry = CollectorRegistry()
        self.registry.register(ProductionCollector(queue))

    def reviewer(self, request: Request) -> str | None:
        session = request.cookies.get(COOKIE)
        if session is not None and session in self.sessions:
            return self.sessions[session]
        given = request.headers.get("authorization", "")
        if given.startswith("Bearer ") and hmac.compare_digest(given[7:].encode(),
                                                               self.token.encode()):
            return request.headers.get("x-reviewer", "api")
        return None

    def app(self) -> Starlette:
        return Starlette(routes=[
            Route("/login", self.login, methods=["GET", "POST"]),
            Route("/logout", self.logout, methods=["POST"]),
            Route("/", self.index),
            Route("/t", self.find),
            Route("/t/{trajectory_id:path}/label", self.label, methods=["POST"]),
            Route("/t/{trajectory_id:path}", self.trajectory),
            Route("/metrics", self.metrics),
            Route("/health", self.healthy),
            Route("/live", self.live),
            Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
        ], middleware=[Middleware(Guard, review=self)])

    async def login(self, request: Request) -> Response:
        target = _local(request.query_params.get("next", "/"))
        if request.method == "GET":
            return _page("login.html", target=target, failed=False)
        form = await request.form()
        name, token = str(form.get("name", "")).strip(), str(form.get("token", ""))
        if not name or not hmac.compare_digest(token.encode(), self.token.encode()):
            return _page("login.html", target=target, failed=True, status_code=401)
        session = secrets.token_urlsafe(32)
        self.sessions[session] = name[:100]
        response = RedirectResponse(target, status_code=303)
        response.set_cookie(COOKIE, session, httponly=True, samesite="strict")
        return response

    async def logout(self, request: Request) -> Response:
        self.sessions.pop(request.cookies.get(COOKIE, ""), None)
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(COOKIE)
        return response

    async def index(self, request: Request) -> Response:
        return _page("queue.html", pending=self.queue.pending(),
                     labelled=len(self.queue.labels), reviewer=self.reviewer(request))

    async def find(self, request: Request) -> Response:
        wanted = request.query_params.get("id", "").strip()
        return RedirectResponse(f"/t/{quote(wanted, safe='')}" if wanted else "/", 303)

    async def trajectory(self, request: Request) -> Response:
        trajectory_id = request.path_params["trajectory_id"]
        found = self.queue.find(trajectory_id)
        if found is None:
            return _page("missing.html", trajectory_id=trajectory_id, status_code=404)
        key = (found.verdict.trajectory_id, found.verdict.monitor.version)
        return _page("trajectory.html", request=found, reviewer=self.reviewer(request),
                     blocks=list(blocks(found.trajectory, found)) if found.trajectory else [],
                     categories=CATEGORIES, label=self.queue.labels.get(key))

    async def label(self, request: Request) -> Response:
        found = self.queue.find(request.path_params["trajectory_id"])
        if found is None:
            return JSONResponse({"error": "no review request for this trajectory"}, 404)
        if request.headers.get("content-type", "").split(";")[0] != "application/json":
            return JSONResponse({"error": "send JSON"}, 415)  # and no cross-site form posts
        try:
            given = Answer.model_validate_json(await request.body())
            added = [Added(str(a["source"]), int(a["start"]), str(a["quote"]))
                     for a in given.added]
            label = answer(found, decision=given.decision, category=given.category,
                           judged=given.judged, added=added, note=given.note,
                           reviewer=self.reviewer(request) or "?")
        except (ValidationError, AnswerError, KeyError, ValueError, TypeError) as exc:
            return JSONResponse({"error": one_line(exc)}, 400)
        await self.queue.publish(label)
        following = self.queue.pending()
        target = f"/t/{quote(following[0].verdict.trajectory_id, safe='')}" if following else "/"
        return JSONResponse({"labelled": label.trajectory_id, "next": target})

    async def metrics(self, request: Request) -> Response:
        return Response(generate_latest(self.registry), media_type=CONTENT_TYPE_LATEST)

    async def healthy(self, request: Request) -> Response:
        """204 while the service can do its work; 503 with the reason, one line, if not."""
        problem = await self.health.problem()
        if problem is None:
            return Response(status_code=204)
        return PlainTextResponse(problem + "\n", status_code=503)


    async def live(self, request: Request) -> Response:
        """Its liveness, where ``/health`` is its readiness: 204 unless a task it runs has
        stopped, which only a restart mends (a broker outage is no reason to restart it);
        503 with which one, one line, if so."""
        stopped = self.health.stopped()
        if stopped is None:
            return Response(status_code=204)
        return PlainTextResponse(stopped + "\n", status_code=503)


class Guard(BaseHTTPMiddleware):
    """No page without a login (or the token as a bearer), and the security headers."""

    OPEN = ("/login", "/static/", "/metrics", "/health", "/live")

    def __init__(self, app: Any, review: ReviewApp) -> None:
        super().__init__(app)
        self.review = review

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        path = request.url.path
        if not path.startswith(self.OPEN) and self.review.reviewer(request) is None:
            if request.method != "GET":
                response: Response = JSONResponse({"error": "log in first"}, 401)
            else:
                response = RedirectResponse(
                    f"/login?next={quote(request.url.path, safe='/')}", status_code=303)
        else:
            response = await call_next(request)
        response.headers["Content-Security-Policy"] = POLICY
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        return response


def _page(name: str, status_code: int = 200, **context: Any) -> HTMLResponse:
    return HTMLResponse(TEMPLATES.get_template(name).render(**context), status_code=status_code)


def _local(target: str) -> str:
    """Only a path on this site is a place to go after login (no open redirect)."""
    parts = urlsplit(target)
    return target if target.startswith("/") and not target.startswith("//") \
        and not parts.netloc and not parts.scheme else "/"
