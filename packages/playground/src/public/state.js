// What every part of the playground page shares: its state, the page's texts, building elements,
// the server's names, Discord-flavoured formatting and calling the page's JSON API.
import { pageText, PAGE_TEXT } from './strings.js';

export const $ = (selector) => document.querySelector(selector);

export const state = {
  guild: null,
  botUser: null,
  /** Every account of the bot (the main one first). */
  botUsers: [],
  commands: [],
  /** The text channel shown and written in; the voice channel the join button joins (when not in one). */
  text: localStorage.getItem('playground.text') || '',
  voice: '',
  items: new Map(),
  utterances: new Map(),
  service: null,
  botStatus: 'starting',
  me: localStorage.getItem('playground.member') || '',
  locale: localStorage.getItem('playground.locale') || (navigator.language.startsWith('ja') ? 'ja' : 'en-US'),
};

/** What the page heard, for a person (the level meter) and for the browser test. */
export const heard = { frames: 0, samples: 0, loudFrames: 0, sumSquares: 0, loudSamples: 0, peak: 0 };

export { PAGE_TEXT };

/** A page text in the chosen Discord language (strings.js). */
export function T(key, vars) {
  return pageText(state.locale, key, vars);
}

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else if (key === 'html') node.innerHTML = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) if (child !== null && child !== undefined) node.append(child);
  return node;
}

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}

export function member(id) {
  return state.guild?.members.find((m) => m.id === id);
}

export function nameOf(id) {
  const bot = state.botUsers.find((b) => b.id === id) ?? (state.botUser?.id === id ? state.botUser : undefined);
  if (bot) return bot.username;
  return member(id)?.displayName ?? id;
}

export function channelName(id) {
  return state.guild?.channels.find((c) => c.id === id)?.name ?? id;
}

/** Discord-flavoured text: ``` code blocks ``` (as written, markup and mentions untouched), mentions resolved, **bold**, `code`, newlines. */
export function format(text) {
  return String(text ?? '')
    .split(/(```[\s\S]*?```)/g)
    .map((part, i) => {
      if (i % 2 === 0) return formatInline(part);
      // Discord: an optional language on the opening line, then the code as it is.
      const body = part
        .slice(3, -3)
        .replace(/^[\w+#.-]*\n/, '')
        .replace(/\n$/, '');
      return `<pre class="code-block"><code>${escapeHtml(body)}</code></pre>`;
    })
    .join('');
}

function formatInline(text) {
  let html = escapeHtml(text);
  html = html.replace(/&lt;@!?(\d+)&gt;/g, (_, id) => `<b class="mention">@${escapeHtml(nameOf(id))}</b>`);
  html = html.replace(/&lt;#(\d+)&gt;/g, (_, id) => `<b class="mention">#${escapeHtml(channelName(id))}</b>`);
  html = html.replace(
    /&lt;@&amp;(\d+)&gt;/g,
    (_, id) => `<b class="mention">@${escapeHtml(state.guild?.roles.find((r) => r.id === id)?.name ?? id)}</b>`,
  );
  html = html.replace(/`([^`\n]+)`/g, '<code>$1</code>');
  html = html.replace(/\*\*([^*\n]+)\*\*/g, '<b>$1</b>');
  // A Markdown list item ("- 声: x", as /config show answers) shown as Discord shows it: a bullet.
  html = html.replace(/^- /gm, '• ');
  return html;
}

/** A command's, option's or choice's name or description in the chosen Discord language. */
export function loc(object, field = 'name') {
  return object?.[`${field}_localizations`]?.[state.locale] ?? object?.[field] ?? '';
}

export function time(at) {
  return new Date(at).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
}

export async function post(path, body) {
  const res = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(json.error || `${res.status} ${res.statusText}`);
  return json;
}

export function textChannel() {
  const texts = state.guild?.channels.filter((c) => c.type === 0) ?? [];
  return texts.find((c) => c.id === state.text) ?? texts[0];
}

export function voiceChannels() {
  return state.guild?.channels.filter((c) => c.type === 2) ?? [];
}

/** The voice channel the member is in, else the one chosen to join, else the first. */
export function voiceChannel() {
  const mine = state.guild?.voiceStates.find((v) => v.userId === state.me)?.channelId;
  return voiceChannels().find((c) => c.id === mine) ?? voiceChannels().find((c) => c.id === state.voice) ?? voiceChannels()[0];
}

export function isBotUser(id) {
  return state.botUsers.some((b) => b.id === id) || state.botUser?.id === id;
}
