// The review page's only script: keyboard shortcuts, quotes added by selecting text, and
// posting the answer as JSON. Trajectory text is only ever read and written as text
// (textContent), never as HTML.
"use strict";

const form = document.getElementById("answer");
if (form) {
  const added = [];
  const quotes = Array.from(document.querySelectorAll(".quote"));
  let current = -1;

  // offsets in code points, as Python counts them
  const points = (text) => Array.from(text).length;

  function offsetIn(container, node, offset) {
    const range = document.createRange();
    range.setStart(container, 0);
    range.setEnd(node, offset);
    return points(range.toString());
  }

  function addSelection() {
    const selection = window.getSelection();
    if (!selection || selection.isCollapsed) return;
    const range = selection.getRangeAt(0);
    const within = (node) =>
      (node.nodeType === Node.ELEMENT_NODE ? node : node.parentElement)?.closest("pre.text");
    const container = within(range.startContainer);
    if (!container || container !== within(range.endContainer)) {
      status("select text within one part of the trajectory");
      return;
    }
    const quote = range.toString();
    if (!quote.trim()) return;
    const span = {source: container.dataset.source,
                  start: offsetIn(container, range.startContainer, range.startOffset),
                  quote: quote};
    added.push(span);
    const item = document.createElement("li");
    item.className = "added";
    item.textContent = `${span.source} [${span.start}]: ${quote}`;
    document.getElementById("added").appendChild(item);
    selection.removeAllRanges();
  }

  function status(text) {
    document.getElementById("status").textContent = text;
  }

  function select(index) {
    if (!quotes.length) return;
    current = (index + quotes.length) % quotes.length;
    document.querySelectorAll(".current").forEach((e) => e.classList.remove("current"));
    const quote = quotes[current];
    quote.classList.add("current");
    const mark = document.querySelector(`mark[data-quote="${quote.dataset.quote}"]`);
    if (mark) {
      mark.classList.add("current");
      mark.scrollIntoView({block: "center"});
    }
  }

  function judge(value) {
    if (current < 0) select(0);
    const input = quotes[current]?.querySelector(`input[value="${value}"]`);
    if (input) input.checked = true;
  }

  function check(name, value) {
    const input = form.querySelector(`input[name="${name}"][value="${value}"]`);
    if (input) input.checked = true;
  }

  async function save(event) {
    if (event) event.preventDefault();
    const decision = form.querySelector('input[name="decision"]:checked');
    if (!decision) {
      status("choose misbehavior or benign first");
      return;
    }
    const judged = {};
    for (const quote of quotes) {
      const chosen = quote.querySelector("input:checked");
      if (chosen) judged[quote.dataset.quote] = chosen.value;
    }
    const category = form.querySelector('input[name="category"]:checked').value || null;
    const body = {decision: decision.value, category: category, judged: judged,
                  added: added, note: form.querySelector("textarea").value};
    status("saving…");
    const response = await fetch(form.dataset.action, {
      method: "POST", headers: {"Content-Type": "application/json"},
      body: JSON.stringify(body), credentials: "same-origin"});
    const answer = await response.json();
    if (!response.ok) {
      status(`not saved: ${answer.error}`);
      return;
    }
    status("saved");
    window.location.assign(answer.next);
  }

  form.addEventListener("submit", save);
  document.getElementById("add").addEventListener("click", addSelection);
  document.addEventListener("keydown", (event) => {
    if (event.target.closest("textarea, input[type=text], input:not([type])")) return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const categories = Array.from(form.querySelectorAll('input[name="category"]'))
      .map((input) => input.value).filter((value) => value);
    const keys = {
      m: () => check("decision", "misbehavior"),
      b: () => check("decision", "benign"),
      j: () => select(current + 1),
      k: () => select(current - 1),
      c: () => judge("confirmed"),
      x: () => judge("rejected"),
      a: addSelection,
      s: () => save(null),
    };
    categories.forEach((value, i) => { keys[String(i + 1)] = () => check("category", value); });
    const action = keys[event.key];
    if (action) {
      event.preventDefault();
      action();
    }
  });
}
