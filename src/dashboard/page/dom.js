// What every part of the dashboard page shares: its state, the texts, building elements, calling the API.
export const state = { lang: 'ja', texts: {}, session: null, guilds: [], voices: [] };
const status = document.getElementById('status');

export const tr = (key, vars = {}) =>
  (state.texts[state.lang]?.[key] ?? key).replace(/\{(\w+)\}/g, (m, name) => (name in vars ? String(vars[name]) : m));

/** An element: h('button', { type: 'button', onclick }, 'text', child...). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'text') el.textContent = v;
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) el.append(c);
  return el;
}

let uid = 0;
/** A fresh element id. */
export const newId = () => `f${++uid}`;
/** A labelled field: the label's for= names the control. */
export function field(label, control, hint) {
  control.id ||= newId();
  return h('div', { class: 'field' }, h('label', { for: control.id, text: label }), control, hint ? h('small', { text: hint }) : null);
}

export function say(message, kind = 'ok') {
  status.textContent = message;
  status.dataset.kind = kind;
}

class ApiError extends Error {
  constructor(status, body) {
    super(body?.message ?? String(status));
    this.status = status;
    this.body = body;
  }
}

/** The largest body the dashboard reads (server.ts MAX_BODY): a larger one is refused here, unsent. */
const MAX_BODY = 3 * 1024 * 1024;

export async function api(method, path, body) {
  const headers = { 'x-lang': state.lang };
  if (method !== 'GET') {
    headers['x-csrf-token'] = state.session?.csrf ?? '';
    headers['content-type'] = 'application/json';
  }
  const payload = body === undefined ? undefined : JSON.stringify(body);
  if (payload !== undefined && new Blob([payload]).size > MAX_BODY)
    throw new ApiError(413, { error: 'too_large', message: tr('error_too_large') });
  let res;
  try {
    res = await fetch(`/api${path}`, { method, headers, body: payload, credentials: 'same-origin' });
  } catch {
    // No answer at all (offline, the connection cut): said in the page's language, not the browser's.
    throw new ApiError(0, { error: 'network', message: tr('error_network') });
  }
  const type = res.headers.get('content-type') ?? '';
  const data = type.startsWith('application/json') ? await res.json() : await res.text();
  if (res.status === 401 && path !== '/session') state.onSignedOut?.();
  if (!res.ok) throw new ApiError(res.status, typeof data === 'object' ? data : { message: data });
  return data;
}

/** Runs a change and says how it went (the server's own message when refused). */
export async function change(work, okMessage) {
  try {
    const result = await work();
    say(okMessage, 'ok');
    return result;
  } catch (error) {
    const problems = error.body?.problems;
    say(problems ? `${error.message ?? ''} ${problems.join(' / ')}` : error.message, 'error');
    return undefined;
  }
}

/** A count as people read it (3,000). */
export const n = (value) => Number(value).toLocaleString(state.lang === 'ja' ? 'ja-JP' : 'en-US');
