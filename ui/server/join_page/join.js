// The join page's script: keep the draft, count characters, send without a page load.
// Without it the form posts and the server answers with the page.
(() => {
  "use strict";
  const form = document.getElementById("join-form");
  if (!form) return;
  const box = form.elements.text;
  const token = form.elements.token;
  const button = form.querySelector("button[type=submit]");
  const answer = document.getElementById("answer");
  const count = document.getElementById("count");
  const max = Number(form.dataset.max);
  const key = "lab-join:" + form.elements.code.value;

  // As the server counts (lab.board.rules.clean_sentence): NFC, invisible format
  // characters dropped, runs of whitespace made one space, in code points.
  const length = (text) => Array.from(text.normalize("NFC").replace(/\p{Cf}/gu, "").trim()
    .split(/\s+/).join(" ")).length;
  const sense = () => (form.querySelector("input[name=sense]:checked") || {}).value || "";

  function save() {
    try {
      sessionStorage.setItem(key, JSON.stringify({ text: box.value, sense: sense(), token: token.value }));
    } catch (e) { /* storage off (private mode): the page works without a draft */ }
  }

  function restore() {
    let draft = null;
    try { draft = JSON.parse(sessionStorage.getItem(key) || "null"); } catch (e) { draft = null; }
    if (!draft || !draft.text) return;
    if (!box.value) box.value = draft.text;
    if (draft.token) token.value = draft.token;
    for (const input of form.querySelectorAll("input[name=sense]")) input.checked = input.value === draft.sense;
  }

  function counter() {
    const n = length(box.value);
    count.textContent = n > max ? `${n} / ${max} characters: ${n - max} too many, shorten it`
      : `${n} / ${max} characters`;
    count.classList.toggle("over", n > max);
  }

  function show(kind, message) {
    answer.className = "answer " + kind;
    answer.textContent = message;
    answer.hidden = !message;
    if (message) answer.scrollIntoView({ block: "nearest" });
  }

  let busy = false;
  async function send(event) {
    event.preventDefault();
    if (busy) return;  // a double tap sends once (and the token would store it once)
    busy = true;
    button.disabled = true;
    save();
    show("wait", form.dataset.sending);
    let reply = null;
    const stop = new AbortController();
    const timer = setTimeout(() => stop.abort(), 20000);
    try {
      const response = await fetch(form.action, {
        method: "POST", body: new URLSearchParams(new FormData(form)), credentials: "same-origin",
        headers: { Accept: "application/json" }, cache: "no-store", signal: stop.signal,
      });
      if ((response.headers.get("Content-Type") || "").includes("application/json")) reply = await response.json();
      else if (response.status === 413) reply = { ok: false, message: form.dataset.tooBig };  // a proxy's limit
    } catch (e) {
      reply = null;  // no answer: the server is away, restarting, or a proxy has no server for it
    } finally {
      clearTimeout(timer);
      busy = false;
      button.disabled = false;
    }
    if (!reply || typeof reply.message !== "string") {
      show("no", form.dataset.unreachable);
      return;
    }
    if (reply.token) token.value = reply.token;
    if (reply.ok) {
      box.value = "";
      for (const input of form.querySelectorAll("input[name=sense]")) input.checked = false;
    }
    save();
    counter();
    show(reply.ok ? "ok" : "no", reply.message);
  }

  restore();
  counter();
  box.addEventListener("input", () => { save(); counter(); });
  form.addEventListener("change", save);
  form.addEventListener("submit", send);
  window.addEventListener("pagehide", save);
})();
