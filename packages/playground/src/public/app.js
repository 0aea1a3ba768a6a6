// The playground page: plain JavaScript, no build step. State arrives over one WebSocket
// (/api/live): a snapshot first, then every change; binary messages are the voice channels' audio
// (16-bit: the voice channel's index, then mono 48 kHz PCM, about 20 ms each), played with WebAudio
// when the member the page acts as is in that channel. Members act through the JSON API; the server
// has two text and two voice channels, read at once by two accounts of the bot.
// The page's own texts are in strings.js (English and Japanese, after the Discord language chosen);
// the message box is composer.js.
'use strict';

const $ = (selector) => document.querySelector(selector);

const state = {
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
const heard = { frames: 0, samples: 0, loudFrames: 0, sumSquares: 0, loudSamples: 0, peak: 0 };
window.playground = {
  state,
  heard,
  pageText: PAGE_TEXT,
  get audioContext() {
    return speaker.ctx;
  },
};

// ---- helpers ------------------------------------------------------------------------------------

/** A page text in the chosen Discord language (strings.js). */
function T(key, vars) {
  return pageText(state.locale, key, vars);
}

function el(tag, attrs = {}, ...children) {
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

function member(id) {
  return state.guild?.members.find((m) => m.id === id);
}

function nameOf(id) {
  const bot = state.botUsers.find((b) => b.id === id) ?? (state.botUser?.id === id ? state.botUser : undefined);
  if (bot) return bot.username;
  return member(id)?.displayName ?? id;
}

function channelName(id) {
  return state.guild?.channels.find((c) => c.id === id)?.name ?? id;
}

/** Discord-flavoured text: ``` code blocks ``` (as written, markup and mentions untouched), mentions resolved, **bold**, `code`, newlines. */
function format(text) {
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
  return html;
}

/** A command's, option's or choice's name or description in the chosen Discord language. */
function loc(object, field = 'name') {
  return object?.[`${field}_localizations`]?.[state.locale] ?? object?.[field] ?? '';
}

function time(at) {
  return new Date(at).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
}

async function post(path, body) {
  const res = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(json.error || `${res.status} ${res.statusText}`);
  return json;
}

function textChannel() {
  const texts = state.guild?.channels.filter((c) => c.type === 0) ?? [];
  return texts.find((c) => c.id === state.text) ?? texts[0];
}

function voiceChannels() {
  return state.guild?.channels.filter((c) => c.type === 2) ?? [];
}

/** The voice channel the member is in, else the one chosen to join, else the first. */
function voiceChannel() {
  const mine = state.guild?.voiceStates.find((v) => v.userId === state.me)?.channelId;
  return voiceChannels().find((c) => c.id === mine) ?? voiceChannels().find((c) => c.id === state.voice) ?? voiceChannels()[0];
}

function isBotUser(id) {
  return state.botUsers.some((b) => b.id === id) || state.botUser?.id === id;
}

// ---- audio --------------------------------------------------------------------------------------

const speaker = {
  ctx: null,
  nextTime: 0,
  /** Starts (or resumes) playback; browsers allow it only from a click. */
  start() {
    if (!this.ctx) this.ctx = new AudioContext({ sampleRate: 48000 });
    void this.ctx.resume();
  },
  play(pcm) {
    if (!this.ctx || this.ctx.state !== 'running') return;
    const buffer = this.ctx.createBuffer(1, pcm.length, 48000);
    const channel = buffer.getChannelData(0);
    for (let i = 0; i < pcm.length; i++) channel[i] = pcm[i] / 32768;
    const source = this.ctx.createBufferSource();
    source.buffer = buffer;
    source.connect(this.ctx.destination);
    // A small jitter buffer: packets come every 20 ms, give or take.
    const now = this.ctx.currentTime;
    if (this.nextTime < now + 0.02) this.nextTime = now + 0.08;
    source.start(this.nextTime);
    this.nextTime += buffer.duration;
  },
};

function onAudio(data) {
  const framed = new Int16Array(data);
  // Heard only in the voice channel the member is in (each channel is read by its own account).
  const mine = state.guild?.voiceStates.find((v) => v.userId === state.me)?.channelId;
  if (framed[0] < 0 || voiceChannels()[framed[0]]?.id !== mine) return;
  const pcm = framed.subarray(1);
  let sum = 0;
  let peak = 0;
  for (const s of pcm) {
    sum += s * s;
    peak = Math.max(peak, Math.abs(s));
  }
  heard.frames += 1;
  heard.samples += pcm.length;
  heard.peak = Math.max(heard.peak, peak);
  const db = sum > 0 ? 20 * Math.log10(Math.sqrt(sum / pcm.length) / 32768) : -Infinity;
  if (db > -60) {
    heard.loudFrames += 1;
    heard.sumSquares += sum;
    heard.loudSamples += pcm.length;
  }
  showLevel(db);
  speaker.play(pcm);
}

let silenceTimer;
/** The level bar: empty in silence, also when the frames simply stop coming. */
function showLevel(db) {
  const value = Math.max(-60, Math.min(0, db));
  const meter = $('#level');
  meter.setAttribute('aria-valuenow', String(Math.round(value)));
  meter.firstElementChild.style.width = `${((value + 60) / 60) * 100}%`;
  meter.classList.toggle('loud', value > -6);
  clearTimeout(silenceTimer);
  if (value > -60) silenceTimer = setTimeout(() => showLevel(-60), 150);
}

// ---- the server ---------------------------------------------------------------------------------

function renderServer() {
  const guild = state.guild;
  if (!guild) return;
  $('#guild-name').textContent = guild.name;
  const text = textChannel();
  $('#channel-name').textContent = `# ${text?.name ?? ''}`;
  $('#message').placeholder = T('message_placeholder', { channel: text?.name ?? '', name: nameOf(state.me) });
  $('#text-channels').replaceChildren(
    ...guild.channels
      .filter((c) => c.type === 0)
      .map((c) =>
        el(
          'li',
          { class: c.id === text?.id ? 'current' : '' },
          el('button', {
            type: 'button',
            class: 'channel',
            'aria-pressed': String(c.id === text?.id),
            onclick: () => setText(c.id),
            text: `# ${c.name}`,
          }),
        ),
      ),
  );
  showChannelTimeline();
  const inVoice = (id) => guild.voiceStates.filter((v) => v.channelId === id).map((v) => v.userId);
  const chosen = voiceChannel();
  $('#voice-channels').replaceChildren(
    ...voiceChannels().map((c) =>
      el(
        'div',
        { class: c.id === chosen?.id ? 'voice-channel current' : 'voice-channel' },
        el('button', {
          type: 'button',
          class: 'channel',
          'aria-pressed': String(c.id === chosen?.id),
          onclick: () => setVoice(c.id),
          text: `🔊 ${c.name}`,
        }),
        el('ul', {}, ...inVoice(c.id).map((id) => el('li', { text: nameOf(id) }))),
      ),
    ),
  );
  $('#voice-name').textContent = voiceChannel()?.name ?? T('voice');
  const voiceIds = new Set(guild.voiceStates.map((v) => v.userId));
  $('#members').replaceChildren(
    // A member is a button: reachable and chosen by keyboard too (the bot cannot be acted as).
    ...guild.members.map((m) =>
      el(
        'li',
        { class: m.id === state.me ? 'me' : '' },
        el(
          m.bot ? 'span' : 'button',
          m.bot
            ? { class: 'member', title: `@${m.username}` }
            : {
                type: 'button',
                class: 'member',
                title: T('act_as_this', { name: m.displayName }),
                'aria-pressed': String(m.id === state.me),
                onclick: () => setMe(m.id),
              },
          el('span', { text: m.displayName }),
          m.bot ? el('span', { class: 'badge bot', text: T('badge_bot') }) : null,
          m.admin ? el('span', { class: 'badge admin', text: T('badge_admin') }) : null,
          voiceIds.has(m.id) ? el('span', { title: T('in_voice_icon'), 'aria-label': T('in_voice_icon'), text: '🔊' }) : null,
        ),
      ),
    ),
  );
  const select = $('#as-member');
  const humans = guild.members.filter((m) => !m.bot);
  select.replaceChildren(
    ...humans.map((m) =>
      el('option', { value: m.id, selected: m.id === state.me, text: `${m.displayName}${m.admin ? T('admin_suffix') : ''}` }),
    ),
  );
  renderVoiceControls();
}

/** Shows and writes in text channel `id`. */
function setText(id) {
  state.text = id;
  localStorage.setItem('playground.text', id);
  renderServer();
}

/** Chooses the voice channel the join button joins (while the member is in none). */
function setVoice(id) {
  state.voice = id;
  renderServer();
}

/** Only the chosen text channel's messages are shown (each item knows its channel). */
function showChannelTimeline() {
  const id = textChannel()?.id ?? '';
  let rule = document.getElementById('channel-filter');
  if (!rule) {
    rule = el('style', { id: 'channel-filter' });
    document.head.append(rule);
  }
  rule.textContent = `#timeline > li[data-channel]:not([data-channel="${CSS.escape(id)}"]) { display: none; }`;
  followTimeline();
}

function setMe(id) {
  state.me = id;
  localStorage.setItem('playground.member', id);
  renderServer();
  renderCommandForm();
}

function renderVoiceControls() {
  const guild = state.guild;
  const voice = voiceChannel();
  if (!guild || !voice) return;
  const mine = guild.voiceStates.find((v) => v.userId === state.me);
  const toggle = $('#voice-toggle');
  toggle.textContent = T(mine ? 'voice_leave' : 'voice_join', { channel: voice.name });
  const listeners = guild.voiceStates.filter((v) => v.channelId === voice.id && !isBotUser(v.userId)).map((v) => nameOf(v.userId));
  const botIn = guild.voiceStates.some((v) => v.channelId === voice.id && isBotUser(v.userId));
  $('#listen-state').textContent = listeners.length
    ? `${T('in_voice', { names: listeners.join(', ') })}${T(botIn ? 'and_the_bot' : 'bring_the_bot')}${speaker.ctx?.state === 'running' ? '' : T('click_to_hear')}`
    : T('not_in_voice');
}

// ---- the timeline -------------------------------------------------------------------------------

function renderItem(item) {
  const at = el('span', { class: 'time', text: time(item.at) });
  if (item.type === 'member') {
    return el(
      'li',
      { 'data-id': item.id, 'data-channel': item.channelId, class: item.deleted ? 'member deleted' : 'member' },
      el('div', {}, el('span', { class: 'author', text: nameOf(item.authorId) }), at),
      el('div', { class: 'body', html: format(item.content) }),
      item.reactions.length
        ? el('div', { class: 'reactions' }, ...item.reactions.map((r) => el('span', { text: decodeURIComponent(r) })))
        : null,
    );
  }
  if (item.type === 'command') {
    return el(
      'li',
      { 'data-id': item.id, 'data-channel': item.channelId, class: 'command' },
      el(
        'div',
        { class: 'command-use' },
        T('used', { name: nameOf(item.userId), command: '\u0000' })
          .split('\u0000')
          .flatMap((part, i) => (i ? [el('code', { text: commandSummary(item) }), part] : [part])),
        ' ',
        el('span', { class: 'muted', text: `(${item.locale})` }),
      ),
      item.noResponse ? el('div', { class: 'error', text: T('no_response') }) : null,
    );
  }
  const context = [];
  if (item.interaction)
    context.push(
      el('div', {
        class: 'context',
        text: T('interaction_used', { name: nameOf(item.interaction.userId), command: commandSummary(item.interaction) }),
      }),
    );
  if (item.replyTo) {
    const original = state.items.get(item.replyTo);
    context.push(
      el('div', {
        class: 'context',
        text: T('replying_to', {
          who: original?.type === 'member' ? `${nameOf(original.authorId)}: ${original.content.slice(0, 60)}` : T('a_message'),
        }),
      }),
    );
  }
  const owner = nameOf(item.interaction ? item.interaction.userId : state.me);
  return el(
    'li',
    {
      'data-id': item.id,
      'data-channel': item.channelId,
      class: ['bot', item.ephemeral ? 'ephemeral' : '', item.deleted ? 'deleted' : ''].join(' ').trim(),
    },
    ...context,
    el(
      'div',
      {},
      el('span', { class: 'author bot-author', text: state.botUser?.username ?? 'bot' }),
      el('span', { class: 'badge bot', text: T('badge_app') }),
      at,
      item.edited ? el('span', { class: 'time', text: T('edited') }) : null,
    ),
    item.loading
      ? el('div', { class: 'body muted', text: T('thinking', { bot: state.botUser?.username ?? 'bot' }) })
      : el('div', { class: 'body', html: format(item.content) }),
    ...item.embeds.map(renderEmbed),
    ...item.attachments.map(renderAttachment),
    item.buttons?.length ? el('div', { class: 'buttons' }, ...item.buttons.map((b) => renderButton(item, b))) : null,
    item.ephemeral
      ? el(
          'div',
          { class: 'context' },
          el('span', { class: 'badge ephemeral', text: T('ephemeral') }),
          ` ${T('only_you', { name: owner })}`,
        )
      : null,
  );
}

function renderEmbed(embed) {
  return el(
    'div',
    { class: 'embed' },
    embed.title ? el('div', { class: 'title', html: format(embed.title) }) : null,
    embed.description ? el('div', { class: 'body', html: format(embed.description) }) : null,
    ...(embed.fields ?? []).map((f) =>
      el('div', { class: 'field' }, el('b', { html: format(f.name) }), el('span', { class: 'body', html: format(f.value) })),
    ),
    embed.footer?.text ? el('div', { class: 'muted', html: format(embed.footer.text) }) : null,
  );
}

/** A command as the member's client shows it: `/参加`, `/設定 声 値: x` in Japanese, from its options. */
function commandSummary({ name, options, summary }) {
  const command = state.commands.find((c) => c.name === name);
  if (!command || !options) return summary ?? `/${loc(command) || name}`;
  const parts = [`/${loc(command)}`];
  const walk = (given, declared) => {
    for (const option of given) {
      const spec = declared?.find((d) => d.name === option.name);
      if (Array.isArray(option.options)) {
        parts.push(loc(spec) || option.name);
        walk(option.options, spec?.options);
      } else if ('value' in option) {
        const choice = spec?.choices?.find((c) => c.value === option.value);
        parts.push(`${loc(spec) || option.name}: ${choice ? loc(choice) : String(option.value)}`);
      }
    }
  };
  walk(options, command.options);
  return parts.join(' ');
}

/** A button of a bot message: the member acting now clicks it. */
function renderButton(item, b) {
  const button = el('button', { type: 'button', text: b.label });
  button.addEventListener('click', () => {
    post('/api/click', { userId: state.me, messageId: item.id, customId: b.customId, locale: state.locale }).catch(() => {});
  });
  return button;
}

function renderAttachment(a) {
  const size = a.size > 1024 * 1024 ? `${(a.size / 1024 / 1024).toFixed(1)} MB` : `${Math.ceil(a.size / 1024)} KB`;
  return el(
    'div',
    { class: a.contentType.startsWith('image/') ? 'attachment image' : 'attachment' },
    a.contentType.startsWith('audio/') ? el('audio', { controls: true, preload: 'metadata', src: a.url }) : null,
    a.contentType.startsWith('image/') ? el('img', { src: a.url, alt: a.filename, class: 'image' }) : null,
    el('a', { href: `${a.url}?download=1`, download: a.filename, text: `⬇ ${a.filename} (${size})` }),
  );
}

/**
 * Whether the timeline follows new messages: true while the reader is at its bottom. Decided by the
 * reader's scrolling only, not by the list's height: a command form opening (the list shrinks) or a
 * message growing does not make the reader miss what comes next.
 */
const timeline = { following: true, scrolledTo: -1 };

function followTimeline() {
  const list = $('#timeline');
  if (!timeline.following) return;
  list.scrollTop = list.scrollHeight;
  timeline.scrolledTo = list.scrollTop;
}

function watchTimeline() {
  const list = $('#timeline');
  list.addEventListener('scroll', () => {
    // The page's own scroll is not the reader's: its event can arrive after an image grew the list,
    // which would look like the reader having scrolled up.
    if (list.scrollTop === timeline.scrolledTo) return;
    timeline.following = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
  });
  // The list shrinks when the command form opens or the window does: stay at the bottom if there.
  new ResizeObserver(followTimeline).observe(list);
}

function upsertItem(item) {
  state.items.set(item.id, item);
  const list = $('#timeline');
  const node = renderItem(item);
  const existing = list.querySelector(`li[data-id="${item.id}"]`);
  if (existing) existing.replaceWith(node);
  else {
    const after = [...list.children].find((li) => (state.items.get(li.dataset.id)?.at ?? 0) > item.at);
    list.insertBefore(node, after ?? null);
  }
  followTimeline();
  // An image or a player gets its height later: follow again once it has it.
  for (const media of node.querySelectorAll('img, audio'))
    media.addEventListener(media.tagName === 'IMG' ? 'load' : 'loadedmetadata', followTimeline, { once: true });
}

// ---- utterances ---------------------------------------------------------------------------------

function renderUtterance(u) {
  state.utterances.set(u.id, u);
  const list = $('#utterances');
  const db = u.rmsDb === null || u.rmsDb === undefined ? '–' : `${Math.round(u.rmsDb)} dB`;
  const node = el(
    'li',
    { 'data-id': u.id, class: u.playing ? 'playing' : 'done' },
    el('b', { text: `#${u.id} ` }),
    u.playing ? T('playing') : '✓ ',
    `${u.channelId ? `🔊 ${channelName(u.channelId)} · ` : ''}${(u.durationMs / 1000).toFixed(1)} s · ${db} · ${time(u.startedAt)}`,
    el('span', {
      class: 'text said',
      text: u.text ? `“${u.text}”` : u.playing ? '…' : T('not_recognised'),
      title: u.voice ? T('voice_of', { voice: u.voice }) : undefined,
    }),
    el('span', {
      class: 'text muted',
      text: `${T(u.endToEndEncrypted ? 'e2ee' : 'transport_only')} · ${T('heard_by', { names: u.heardBy.map(nameOf).join(', ') || '…' })}`,
    }),
  );
  const existing = list.querySelector(`li[data-id="${u.id}"]`);
  if (existing) existing.replaceWith(node);
  else list.prepend(node);
  while (list.children.length > 100) list.lastElementChild.remove();
}

// ---- the service --------------------------------------------------------------------------------

function renderService(service) {
  state.service = service;
  $('#speech-engine').textContent = T('engine', { engine: T(service.speech === 'espeak' ? 'engine_espeak' : 'engine_tones') });
  const windows = Object.entries(service.rate).map(([name, w]) => {
    const pct = Math.min(100, (w.current / w.limit) * 100);
    return el(
      'div',
      { class: 'window' },
      el('span', {
        text: `${T('rate', { name, current: w.current, limit: w.limit, seconds: Math.round(w.windowMs / 1000) })}${w.retryInMs ? T('rate_full', { seconds: Math.ceil(w.retryInMs / 1000) }) : ''}`,
      }),
      el('div', { class: 'bar' }, el('span', { class: w.current >= w.limit ? 'full' : '', style: `width:${pct}%` })),
    );
  });
  $('#rate').replaceChildren(...windows);
  const account = service.accounts[0];
  $('#characters').textContent =
    `${T('characters', { spent: service.charactersCharged })}${account ? T('characters_left', { remaining: account.remaining, plan: account.plan }) : ''}${service.notices ? T('notices', { count: service.notices }) : ''}`;
  $('#requests tbody').replaceChildren(
    ...service.requests.map((r) =>
      el(
        'tr',
        {},
        el('td', { text: time(r.at) }),
        el('td', { text: r.target === 'audio' ? T('audio_download') : r.target }),
        el('td', { class: `status-${String(r.status)[0]}`, text: `${r.status || '…'}${r.code ? ` ${r.code}` : ''}` }),
        el('td', { text: r.chars ?? '' }),
        el('td', { class: 'text', title: r.text ?? r.path, text: r.text ?? '' }),
      ),
    ),
  );
}

// ---- the bot ------------------------------------------------------------------------------------

function renderBotStatus() {
  const pill = $('#bot-status');
  const status = { starting: 'bot_starting', ready: 'bot_ready', exited: 'bot_exited' }[state.botStatus];
  pill.textContent = T('bot_status', { status: status ? T(status) : state.botStatus });
  pill.className = `pill ${state.botStatus === 'ready' ? 'ok' : state.botStatus === 'exited' ? 'bad' : ''}`;
}

function appendLog(line) {
  const list = $('#log');
  list.append(
    el('li', {
      class: `lvl-${line.level}`,
      text: `${line.time ? time(line.time) : ''} ${line.msg}${line.fields ? ` ${line.fields}` : ''}`,
    }),
  );
  while (list.children.length > 300) list.firstElementChild.remove();
}

// ---- slash commands -----------------------------------------------------------------------------

const OPTION = {
  SUB: 1,
  GROUP: 2,
  STRING: 3,
  INTEGER: 4,
  BOOLEAN: 5,
  USER: 6,
  CHANNEL: 7,
  ROLE: 8,
  MENTIONABLE: 9,
  NUMBER: 10,
  ATTACHMENT: 11,
};

function currentCommand() {
  return state.commands.find((c) => c.name === $('#command').value);
}

/** The options the chosen command (sub)command takes, and the path of subcommand names to it. */
function currentLeaf() {
  const command = currentCommand();
  if (!command) return { path: [], options: [], description: '' };
  const options = command.options ?? [];
  const subs = options.filter((o) => o.type === OPTION.SUB || o.type === OPTION.GROUP);
  if (subs.length === 0) return { path: [], options, description: loc(command, 'description') };
  const sub = subs.find((o) => o.name === $('#subcommand').value) ?? subs[0];
  if (sub.type === OPTION.SUB) return { path: [sub], options: sub.options ?? [], description: loc(sub, 'description') };
  const leaf = (sub.options ?? []).find((o) => o.name === $('#subsubcommand').value) ?? sub.options?.[0];
  return { path: [sub, leaf].filter(Boolean), options: leaf?.options ?? [], description: loc(leaf, 'description') };
}

function renderCommandList() {
  const select = $('#command');
  // The form opens on /join, the first step of the page's own instructions.
  const chosen = select.value || 'join';
  select.replaceChildren(
    // Slash commands only: a message command (type 3) is used on a message, from its Apps menu.
    ...state.commands
      .filter((c) => (c.type ?? 1) === 1)
      .map((c) =>
        el('option', { value: c.name, selected: c.name === chosen, text: `${loc(c)}${c.default_member_permissions ? ' 🔒' : ''}` }),
      ),
  );
  renderSubcommands();
}

function renderSubcommands() {
  const command = currentCommand();
  const subs = (command?.options ?? []).filter((o) => o.type === OPTION.SUB || o.type === OPTION.GROUP);
  const sub = $('#subcommand');
  const chosen = sub.value;
  sub.hidden = subs.length === 0;
  sub.replaceChildren(...subs.map((o) => el('option', { value: o.name, selected: o.name === chosen, text: loc(o) })));
  const group = subs.find((o) => o.name === sub.value);
  const subsub = $('#subsubcommand');
  const leaves = group?.type === OPTION.GROUP ? (group.options ?? []) : [];
  subsub.hidden = leaves.length === 0;
  subsub.replaceChildren(...leaves.map((o) => el('option', { value: o.name, text: loc(o) })));
  renderCommandForm();
}

function renderCommandForm() {
  const command = currentCommand();
  const { options, description } = currentLeaf();
  $('#command-description').textContent = description;
  $('#command-admin').hidden = !command?.default_member_permissions;
  $('#command-error').textContent = '';
  const box = $('#command-options');
  box.replaceChildren();
  for (const option of options) {
    const id = `opt-${option.name}`;
    box.append(el('label', { for: id, class: option.required ? 'required' : '', title: option.name, text: loc(option) }));
    box.append(optionInput(option, id));
    const hint = [loc(option, 'description'), range(option)].filter(Boolean).join(' · ');
    followTimeline();
    if (hint) box.append(el('div', { class: 'hint', text: hint }));
  }
}

/** An option's limits, unless its description already gives them (e.g. "0.3〜4.0"): said once. */
function range(option) {
  const said = (loc(option, 'description').match(/-?\d+(?:\.\d+)?/g) ?? []).map(Number);
  const known = (n) => n === undefined || said.includes(n);
  const { min_value: min, max_value: max } = option;
  if (min !== undefined || max !== undefined) {
    if (known(min) && known(max)) return '';
    if (min !== undefined && max !== undefined) return T('range', { min, max });
    return min !== undefined ? T('range_min', { min }) : T('range_max', { max });
  }
  if (option.min_length !== undefined || option.max_length !== undefined) {
    return known(option.min_length) && known(option.max_length)
      ? ''
      : T('chars_range', { min: option.min_length ?? 0, max: option.max_length ?? '' });
  }
  return '';
}

function optionInput(option, id) {
  const common = { id, name: option.name, 'data-type': option.type, required: option.required };
  const blank = option.required ? [] : [el('option', { value: '', text: '—' })];
  if (option.choices?.length) {
    return el('select', common, ...blank, ...option.choices.map((c) => el('option', { value: String(c.value), text: loc(c) })));
  }
  switch (option.type) {
    case OPTION.BOOLEAN:
      return el(
        'select',
        common,
        ...blank,
        el('option', { value: 'true', text: T('yes') }),
        el('option', { value: 'false', text: T('no') }),
      );
    case OPTION.INTEGER:
    case OPTION.NUMBER:
      return el('input', {
        ...common,
        type: 'number',
        step: option.type === OPTION.INTEGER ? '1' : 'any',
        min: option.min_value,
        max: option.max_value,
      });
    case OPTION.USER:
    case OPTION.MENTIONABLE:
      return el('select', common, ...blank, ...(state.guild?.members ?? []).map((m) => el('option', { value: m.id, text: m.displayName })));
    case OPTION.ROLE:
      return el('select', common, ...blank, ...(state.guild?.roles ?? []).map((r) => el('option', { value: r.id, text: `@${r.name}` })));
    case OPTION.CHANNEL: {
      const types = option.channel_types;
      const channels = (state.guild?.channels ?? []).filter((c) => (types?.length ? types.includes(c.type) : c.type !== 4));
      return el(
        'select',
        common,
        ...blank,
        ...channels.map((c) => el('option', { value: c.id, text: `${c.type === 2 ? '🔊' : '#'} ${c.name}` })),
      );
    }
    case OPTION.ATTACHMENT:
      return el('input', { ...common, disabled: true, placeholder: T('no_attachments') });
    default: {
      const input = el('input', { ...common, type: 'text', minlength: option.min_length, maxlength: option.max_length });
      if (option.autocomplete) {
        const list = el('datalist', { id: `${id}-choices` });
        input.setAttribute('list', list.id);
        let timer;
        input.addEventListener('input', () => {
          clearTimeout(timer);
          timer = setTimeout(() => void autocomplete(option, input, list), 250);
        });
        input.addEventListener('focus', () => void autocomplete(option, input, list));
        return el('span', {}, input, list);
      }
      return input;
    }
  }
}

/** The options payload as Discord sends it: values typed, subcommands nested; errors for missing ones. */
function collectOptions(focused) {
  const { path, options } = currentLeaf();
  const values = [];
  const problems = [];
  for (const option of options) {
    const input = document.getElementById(`opt-${option.name}`);
    const raw = input?.value ?? '';
    if (raw === '' && !(focused && focused.name === option.name)) {
      if (option.required && !focused) problems.push(T('required', { name: loc(option) }));
      continue;
    }
    const problem = focused ? null : invalid(option, raw);
    if (problem) {
      problems.push(problem);
      continue;
    }
    let value = raw;
    if (option.type === OPTION.INTEGER) value = Number.parseInt(raw, 10);
    else if (option.type === OPTION.NUMBER) value = Number.parseFloat(raw);
    else if (option.type === OPTION.BOOLEAN) value = raw === 'true';
    values.push({ name: option.name, type: option.type, value, ...(focused?.name === option.name ? { focused: true } : {}) });
  }
  let nested = values;
  for (const sub of [...path].reverse()) nested = [{ name: sub.name, type: sub.type, options: nested }];
  return { options: nested, problems };
}

/** Why a value is refused, in the page's language (the browser's own messages follow its locale, not Discord's). */
function invalid(option, raw) {
  const name = loc(option);
  if (option.type === OPTION.INTEGER || option.type === OPTION.NUMBER) {
    const n = Number(raw);
    if (!Number.isFinite(n)) return T('a_number', { name });
    if (option.type === OPTION.INTEGER && !Number.isInteger(n)) return T('whole_number', { name });
    if (option.min_value !== undefined && n < option.min_value) return T('at_least', { name, min: option.min_value });
    if (option.max_value !== undefined && n > option.max_value) return T('at_most', { name, max: option.max_value });
  }
  if (option.type === OPTION.STRING && !option.choices?.length) {
    const length = [...raw].length;
    if (option.min_length !== undefined && length < option.min_length) return T('min_chars', { name, min: option.min_length });
    if (option.max_length !== undefined && length > option.max_length) return T('max_chars', { name, max: option.max_length });
  }
  return null;
}

async function autocomplete(option, input, list) {
  const command = currentCommand();
  if (!command || !state.me) return;
  try {
    const { options } = collectOptions(option);
    const { choices } = await post('/api/autocomplete', {
      userId: state.me,
      channelId: textChannel().id,
      name: command.name,
      options,
      locale: state.locale,
    });
    list.replaceChildren(...choices.map((c) => el('option', { value: String(c.value), text: c.name })));
  } catch {
    // Suggestions are a convenience; typing still works.
  }
}

async function runCommand(event) {
  event.preventDefault();
  const command = currentCommand();
  if (!command) return;
  const { options, problems } = collectOptions();
  $('#command-error').textContent = problems.join(' · ');
  if (problems.length) return;
  const button = $('#run-command');
  button.disabled = true;
  try {
    await post('/api/command', { userId: state.me, channelId: textChannel().id, name: command.name, options, locale: state.locale });
  } catch (error) {
    $('#command-error').textContent = error.message;
  } finally {
    button.disabled = false;
  }
}

// ---- wiring -------------------------------------------------------------------------------------

/** Everything in the chosen Discord language: the page's texts, the commands, the timeline. */
function renderLanguage() {
  translateDocument(state.locale);
  renderBotStatus();
  renderConnection();
  if (!state.guild) return;
  renderServer();
  renderCommandList();
  if (state.service) renderService(state.service);
  for (const item of state.items.values()) upsertItem(item);
  for (const u of state.utterances.values()) renderUtterance(u);
}

function renderConnection() {
  const pill = $('#connection');
  pill.textContent = T(connection.state);
  pill.className = `pill ${connection.state === 'connected' ? 'ok' : connection.state === 'disconnected' ? 'bad' : ''}`;
}

const connection = { state: 'connecting' };

async function toggleVoice() {
  const voice = voiceChannel();
  const inVoice = state.guild.voiceStates.some((v) => v.userId === state.me);
  if (!inVoice) speaker.start(); // this click is the gesture the browser needs to play sound
  try {
    await post('/api/voice', { userId: state.me, channelId: inVoice ? null : voice.id });
  } catch (error) {
    $('#command-error').textContent = error.message;
  }
}

function applySnapshot(snapshot) {
  state.guild = snapshot.guild;
  state.botUser = snapshot.botUser;
  state.botUsers = snapshot.botUsers ?? [snapshot.botUser];
  state.commands = snapshot.commands;
  state.botStatus = snapshot.bot.status;
  const dashboard = $('#dashboard-link');
  dashboard.hidden = !snapshot.dashboardUrl;
  if (snapshot.dashboardUrl) dashboard.href = snapshot.dashboardUrl;
  if (!member(state.me) || member(state.me).bot) state.me = snapshot.guild.members.find((m) => !m.bot)?.id ?? '';
  state.items.clear();
  $('#timeline').replaceChildren();
  for (const item of snapshot.timeline) upsertItem(item);
  $('#utterances').replaceChildren();
  for (const u of snapshot.utterances) renderUtterance(u);
  $('#log').replaceChildren();
  for (const line of snapshot.bot.logs) appendLog(line);
  renderService(snapshot.service);
  renderBotStatus();
  renderServer();
  renderCommandList();
}

function connect() {
  const ws = new WebSocket(`ws://${location.host}/api/live`);
  ws.binaryType = 'arraybuffer';
  ws.onopen = () => {
    connection.state = 'connected';
    renderConnection();
  };
  ws.onmessage = (event) => {
    if (event.data instanceof ArrayBuffer) return onAudio(event.data);
    const message = JSON.parse(event.data);
    switch (message.t) {
      case 'hello':
        return applySnapshot(message.state);
      case 'item':
        return upsertItem(message.item);
      case 'voice':
        state.guild.voiceStates = message.voiceStates;
        return renderServer();
      case 'utterance':
        return renderUtterance(message.utterance);
      case 'service':
        return renderService(message.service);
      case 'bot':
        state.botStatus = message.status;
        return renderBotStatus();
      case 'log':
        return appendLog(message.line);
    }
  };
  ws.onclose = () => {
    connection.state = 'disconnected';
    renderConnection();
    setTimeout(connect, 2000);
  };
}

$('#locale').value = state.locale;
$('#locale').addEventListener('change', (event) => {
  state.locale = event.target.value;
  localStorage.setItem('playground.locale', state.locale);
  renderLanguage();
});
translateDocument(state.locale);
renderConnection();
watchTimeline();
$('#as-member').addEventListener('change', (event) => setMe(event.target.value));
$('#command').addEventListener('change', () => {
  $('#subcommand').value = '';
  renderSubcommands();
});
$('#subcommand').addEventListener('change', renderSubcommands);
$('#subsubcommand').addEventListener('change', renderCommandForm);
$('#command-form').addEventListener('submit', runCommand);
createComposer({
  box: $('#message'),
  list: $('#mentions'),
  count: $('#message-count'),
  error: $('#message-error'),
  members: () => state.guild?.members ?? [],
  send: (content) => post('/api/message', { userId: state.me, channelId: textChannel().id, content }),
  say: T,
});
$('#voice-toggle').addEventListener('click', toggleVoice);
// The page's steps, as buttons: each does what it says.
$('#step-voice').addEventListener('click', () => {
  if (!state.guild?.voiceStates.some((v) => v.userId === state.me)) void toggleVoice();
  else speaker.start();
});
$('#step-join').addEventListener('click', () => {
  $('#command').value = 'join';
  renderSubcommands();
  $('#command-form').requestSubmit();
});
$('#step-write').addEventListener('click', () => $('#message').focus());
// Browsers play sound only after a click on the page: any click will do (after a reload, say).
document.addEventListener('pointerdown', () => speaker.start());
connect();
