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

async function api(method, path, body, extraHeaders) {
  const headers = { ...extraHeaders, "x-csrf-token": csrf() };
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

async function call(el, method, path, body, extraHeaders) {
  if (el.dataset.confirm && !window.confirm(el.dataset.confirm)) return;
  el.disabled = true;
  const formError = el.form && el.form.querySelector("output.form-error");
  try {
    const data = await api(method, path, body, extraHeaders);
    if (el.dataset.go && data && data.job_id) {
      window.location = el.dataset.go.replace("{job_id}", data.job_id);
      return;
    }
    sessionStorage.setItem("flash", `${method} ${path}: done`);
    window.location.reload();
  } catch (e) {
    flash(e.message, false);
    if (formError) formError.textContent = e.message;
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
  if (f.dataset.webhookForm) {
    // The fields are named as PUT /api/v1/webhooks/{name}'s body; an empty secret is left out
    // (the stored secrets are kept), and the create form refuses to overwrite a hook.
    ev.preventDefault();
    const field = (n) => f.elements.namedItem(n);
    const list = (n) => field(n).value.split(",").map((v) => v.trim()).filter(Boolean);
    const num = (n) => (field(n).value.trim() === "" ? undefined : Number(field(n).value));
    const body = {
      url: field("url").value.trim(), events: list("events"), namespaces: list("namespaces"),
      allow_private: field("allow_private").checked,
      max_retries: num("max_retries"), timeout_secs: num("timeout_secs"),
    };
    const secret = field("secret").value;
    if (secret !== "") {
      body.secrets = [secret];
      if (field("rotate") && field("rotate").checked) body.rotate = true;
    }
    const create = f.dataset.webhookForm === "create";
    const path = "/api/v1/webhooks/" + encodeURIComponent(field("name").value.trim());
    call(f.querySelector("button"), "PUT", path, body, create ? { "if-none-match": "*" } : undefined);
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
