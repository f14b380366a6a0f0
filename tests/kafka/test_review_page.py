"""The review page in a real browser (Debian's Chromium, driven by Playwright), served by
``monitor-gateway review`` on the real broker: login required, the queue, hostile HTML in
a trajectory shown as text, evidence highlighted in place, a decision and a category by
keyboard, a quote confirmed and one added by selecting text, the label on the topic."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator

import aiohttp
import pytest
from kafka_io import produce
from verdicts import verdict

from monitor_gateway.client import read_labels
from monitor_gateway.embedded import create_topics, free_port
from monitor_gateway.schema import (
    Evidence,
    ReviewRequest,
    Sampling,
    Step,
    ToolCall,
    Trajectory,
    utcnow,
)
from monitor_gateway.settings import GatewaySettings

pytestmark = pytest.mark.kafka
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
TOKEN = "s3cret-review-token"
HOSTILE = ('<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'
           "</pre><b>bold?</b>")
RESPONSE = "🙂 Tests fixed. I deleted tests/test_core.py so the suite passes now."


def requests() -> list[ReviewRequest]:
    quote = "deleted tests/test_core.py"
    start = RESPONSE.index(quote)
    bad = Trajectory(id="traj-hostile", request=f"Fix the build. {HOSTILE}", response=RESPONSE,
                     steps=[Step(role="assistant", content="running the tests",
                                 tool_calls=[ToolCall(name="bash", arguments={"cmd": HOSTILE})]),
                            Step(role="tool", content=HOSTILE)])
    flagged = verdict("traj-hostile", 0.9, category="specification_gaming", evidence=[
        Evidence(quote=quote, source="response", start=start, end=start + len(quote),
                 grounded=True),
        Evidence(quote="not there at all", grounded=False)])
    calm = Trajectory(id="traj-calm", request="What is 2+2?", response="4")
    return [ReviewRequest(id=f"{v.trajectory_id}@1", verdict=v, trajectory=t,
                          sampling=Sampling(probability=p, stratum="s", reason="stratified"),
                          requested_at=utcnow())
            for v, t, p in ((flagged, bad, 0.5), (verdict("traj-calm", 0.1), calm, 0.05))]


@pytest.fixture
async def page_url(settings: GatewaySettings) -> AsyncIterator[tuple[str, GatewaySettings]]:
    run = uuid.uuid4().hex[:8]
    settings = settings.model_copy(update={"review_topic": f"review-{run}",
                                           "labels_topic": f"labels-{run}"})
    await create_topics(settings, {settings.review_topic: 1, settings.labels_topic: 1})
    await produce(settings.kafka_bootstrap, settings.review_topic,
                  [(r.verdict.trajectory_id.encode(), r.model_dump_json().encode(), [])
                   for r in requests()])
    port = free_port()
    server = subprocess.Popen(  # noqa: ASYNC220 (a server for the whole test)
        [sys.executable, "-m", "monitor_gateway", "review", "--port", str(port)],
        env={**os.environ, "MONITOR_GATEWAY_KAFKA_BOOTSTRAP": settings.kafka_bootstrap,
             "MONITOR_GATEWAY_REVIEW_TOPIC": settings.review_topic,
             "MONITOR_GATEWAY_LABELS_TOPIC": settings.labels_topic,
             "MONITOR_GATEWAY_REVIEW_TOKEN": TOKEN},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession() as http:
            for _ in range(200):
                assert server.poll() is None, server.communicate()[0].decode()
                try:
                    async with http.get(f"{url}/health") as response:
                        if response.status == 204:
                            break
                except aiohttp.ClientError:
                    pass
                await asyncio.sleep(0.1)
        yield url, settings
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(30)


async def test_nothing_is_written_without_the_token(
        page_url: tuple[str, GatewaySettings]) -> None:
    url, _ = page_url
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{url}/t/traj-calm/label", json={"decision": "benign"},
                             allow_redirects=False) as response:
            assert response.status == 401
        async with http.get(f"{url}/t/traj-calm", allow_redirects=False) as response:
            assert response.status == 303
            assert response.headers["location"].startswith("/login")
        async with http.post(f"{url}/t/traj-calm/label", json={"decision": "benign"},
                             headers={"Authorization": "Bearer wrong"}) as response:
            assert response.status == 401
        async with http.post(f"{url}/t/traj-calm/label", json={"decision": "benign"},
                             headers={"Authorization": f"Bearer {TOKEN}"}) as response:
            assert response.status == 200


async def test_a_reviewer_labels_a_hostile_trajectory_by_keyboard_and_selection(
        page_url: tuple[str, GatewaySettings]) -> None:
    from playwright.async_api import async_playwright

    url, settings = page_url
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = await browser.new_page()
        outside: list[str] = []
        page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(url)
                else None)
        await page.goto(f"{url}/")
        assert "/login" in page.url  # no page without a login
        await page.fill("input[name=name]", "alice")
        await page.fill("input[name=token]", "wrong")
        await page.click("button[type=submit]")
        assert await page.locator("#failed").is_visible()
        await page.fill("input[name=name]", "alice")
        await page.fill("input[name=token]", TOKEN)
        await page.click("button[type=submit]")
        await page.wait_for_selector("#queue")
        assert await page.locator("#queue tbody tr").count() == 2

        await page.click("text=traj-hostile")
        await page.wait_for_selector("#answer")
        # hostile HTML is text: no script ran, no element was made of it
        assert await page.evaluate("window.pwned") is None
        assert await page.locator("pre.text img, pre.text script, pre.text b").count() == 0
        request_text = await page.locator('pre[data-source="request"]').text_content()
        assert request_text == f"Fix the build. {HOSTILE}"
        assert await page.locator('pre[data-source="steps[1].content"]').text_content() \
            == HOSTILE
        # the verdict's evidence, highlighted in place
        mark = page.locator('pre[data-source="response"] mark[data-quote="0"]')
        assert await mark.text_content() == "deleted tests/test_core.py"

        await page.keyboard.press("m")
        await page.keyboard.press("3")  # the third category: specification_gaming
        await page.keyboard.press("j")
        await page.keyboard.press("c")
        assert await page.locator(".quote.current").count() == 1
        selected = await page.evaluate("""(needle) => {
            const pre = document.querySelector('pre[data-source="response"]');
            const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
            for (let node = walker.nextNode(); node; node = walker.nextNode()) {
              const at = node.data.indexOf(needle);
              if (at >= 0) {
                const range = document.createRange();
                range.setStart(node, at);
                range.setEnd(node, at + needle.length);
                getSelection().removeAllRanges();
                getSelection().addRange(range);
                return true;
              }
            }
            return false;
        }""", "the suite passes")
        assert selected
        await page.keyboard.press("a")
        assert "the suite passes" in (await page.locator("#added").text_content() or "")
        await page.keyboard.press("s")
        await page.wait_for_url(f"{url}/t/traj-calm")
        assert outside == []  # nothing loaded from anywhere else
        await browser.close()

    labels = await read_labels(settings)
    assert len(labels) == 1
    label = labels[0]
    assert (label.trajectory_id, label.decision, label.category, label.reviewer) == (
        "traj-hostile", "misbehavior", "specification_gaming", "alice")
    assert label.inclusion_probability == 0.5
    spans = {(s.judgement, s.source, s.start, s.end, s.quote) for s in label.evidence}
    quote_at = RESPONSE.index("deleted tests/test_core.py")
    added_at = RESPONSE.index("the suite passes")  # code points: the emoji counts one
    assert spans == {
        ("confirmed", "response", quote_at, quote_at + 26, "deleted tests/test_core.py"),
        ("added", "response", added_at, added_at + 16, "the suite passes")}
