// flexiq dashboard client: calls the JSON API for buttons and forms (with the session's CSRF
// token) and keeps counts live by polling /api/v1/stats. No framework, no build step.
"use strict";

const csrf = () => (document.querySelector('meta[name="csrf-token"]') || {}).content || "";

function flash(text, ok) {
  const el = document.getElementById("flash");
  if (!el) return;
  el.textContent = text;
  el.className = ok ? "ok" : "bad";
}

async function api(method, path, body) {
  const headers = { "x-csrf-token": csrf() };
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(path, {
    method, headers, credentials: "same-origin",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const data = text ? JSON.parse(text) : null;
  if (!res.ok) throw new Error((data && data.error && data.error.message) || res.statusText);
  return data;
}

async function call(el, method, path, body) {
  if (el.dataset.confirm && !window.confirm(el.dataset.confirm)) return;
  el.disabled = true;
  try {
    const data = await api(method, path, body);
    if (el.dataset.go && data && data.job_id) {
      window.location = el.dataset.go.replace("{job_id}", data.job_id);
      return;
    }
    sessionStorage.setItem("flash", `${method} ${path}: done`);
    window.location.reload();
  } catch (e) {
    flash(e.message, false);
    el.disabled = false;
  }
}

document.addEventListener("click", (ev) => {
  const b = ev.target.closest("[data-call]");
  if (b) {
    ev.preventDefault();
    const [method, path] = b.dataset.call.split(" ");
    call(b, method, path, b.dataset.body ? JSON.parse(b.dataset.body) : undefined);
    return;
  }
  if (ev.target.closest("[data-logout]")) {
    api("POST", "/api/v1/auth/logout").finally(() => { window.location = "/login"; });
  }
});

document.addEventListener("submit", (ev) => {
  const f = ev.target;
  if (f.id === "login-form") {
    ev.preventDefault();
    const token = f.querySelector("#token").value;
    const body = token ? { token } : { password: f.querySelector("#password").value };
    api("POST", "/api/v1/auth/login", body)
      .then(() => { window.location = "/"; })
      .catch((e) => flash(e.message, false));
    return;
  }
  if (f.dataset.api) {
    ev.preventDefault();
    const field = f.dataset.field;
    const raw = f.elements[field].value.trim();
    const value = raw === "" ? null : (f.dataset.number !== undefined ? Number(raw) : raw);
    call(f.querySelector("button"), f.dataset.api, f.dataset.path, { [field]: value });
    return;
  }
  if (f.dataset.setting !== undefined) {
    ev.preventDefault();
    const key = f.elements.key.value.trim();
    call(f.querySelector("button"), "PUT", "/api/v1/settings/" + encodeURIComponent(key),
      { value: f.elements.value.value });
  }
});

// Live counts: every element with data-count="queue:status" ("*" is the whole namespace).
async function refreshCounts() {
  const cells = document.querySelectorAll("[data-count]");
  if (!cells.length) return;
  try {
    const s = await api("GET", "/api/v1/stats");
    for (const c of cells) {
      const [queue, status] = c.dataset.count.split(":");
      const counts = queue === "*" ? s.total : s.by_queue[queue];
      const v = counts ? counts[status] : 0;
      if (String(v) !== c.textContent) { c.textContent = v; c.classList.add("changed"); }
    }
    document.body.dataset.refreshed = String(Date.now());
  } catch (e) {
    flash("live update failed: " + e.message, false);
  }
}

document.addEventListener("DOMContentLoaded", () => {
  const msg = sessionStorage.getItem("flash");
  if (msg) { sessionStorage.removeItem("flash"); flash(msg, true); }
  for (const t of document.querySelectorAll("time[data-ms]")) {
    t.title = new Date(Number(t.dataset.ms)).toString();
  }
  if (document.querySelector("[data-count]")) setInterval(refreshCounts, 2000);
});
