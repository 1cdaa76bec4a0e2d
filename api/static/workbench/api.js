// Requests to this server only; every failure becomes an ApiError carrying the API's own message.

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
  toString() { return `${this.status} ${this.code}: ${this.message}`; }
}

let apiKey = "";
export function setApiKey(value) { apiKey = value || ""; }

export async function call(method, path, body) {
  const headers = {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (apiKey) headers["X-API-Key"] = apiKey;
  let resp;
  try {
    resp = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (err) {
    throw new ApiError(0, "network_error", `the server could not be reached (${err.message})`);
  }
  const text = await resp.text();
  let doc = null;
  try { doc = text ? JSON.parse(text) : null; } catch (_) { doc = null; }
  if (!resp.ok) {
    const e = doc && doc.error;
    if (e && typeof e.message === "string") throw new ApiError(resp.status, e.code || "error", e.message);
    throw new ApiError(resp.status, "http_error", text.trim().slice(0, 300) || resp.statusText);
  }
  if (doc === null) throw new ApiError(resp.status, "bad_answer", "the server answered something that is not JSON");
  return doc;
}

// A binary resource of this server (a run's plot) as a data: URL, fetched with the API key.
export async function dataUrl(path) {
  const headers = apiKey ? { "X-API-Key": apiKey } : {};
  let resp;
  try { resp = await fetch(path, { headers }); } catch (err) {
    throw new ApiError(0, "network_error", `the server could not be reached (${err.message})`);
  }
  if (!resp.ok) throw new ApiError(resp.status, resp.status === 401 ? "unauthorized" : "http_error", `${path} answered ${resp.status}`);
  const blob = await resp.blob();
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(new ApiError(resp.status, "bad_answer", "the image could not be read"));
    reader.readAsDataURL(blob);
  });
}

export const get = (path) => call("GET", path);
export const post = (path, body) => call("POST", path, body);

// Small DOM helper: el("div", {class: "x", onclick: f}, child, "text", ...)
export function el(tag, attrs, ...children) {
  const ns = tag.startsWith("svg:") ? "http://www.w3.org/2000/svg" : null;
  const node = ns ? document.createElementNS(ns, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}
