// The dashboard page: plain DOM, no framework. Texts come from /texts.json (the bot's locale files,
// keys dashboard.*); every change sends the session's CSRF token; the server checks everything again.
import { api, change, field, h, n, newId, say, state, tr } from './dom.js';
import { auditLog, healthCard, usageCard } from './reports.js';
import { autoReadCard, controlsCard, mutedCard, readingCard, readingListsCards, rolesCard } from './server-cards.js';
import { dictionaryEditor } from './dictionary.js';
import { myVolumeCard, voicePoolCard, volumesCard } from './voice-cards.js';
import { filtersCard } from './filters.js';
import { sharingCard } from './shared-dictionaries.js';

const main = document.getElementById('main');
state.onSignedOut = () => {
  state.session = null;
  void render();
};

function route() {
  const [, kind, id, tab] = location.hash.split('/');
  return kind === 'g' && /^\d+$/.test(id ?? '') ? { guildId: id, tab: tab || 'me' } : { guildId: null, tab: null };
}

async function render() {
  document.documentElement.lang = state.lang;
  document.title = tr('title');
  for (const el of document.querySelectorAll('[data-t]')) el.textContent = tr(el.dataset.t);
  const who = document.getElementById('who');
  const signout = document.getElementById('signout');
  who.textContent = state.session ? state.session.user.name : '';
  signout.hidden = !state.session;
  main.setAttribute('aria-busy', 'true');
  main.replaceChildren(await view().catch((error) => h('p', { class: 'error', text: error.message })));
  main.setAttribute('aria-busy', 'false');
}

async function view() {
  if (!state.session) return signedOut();
  const { guildId, tab } = route();
  if (!guildId) return serverList();
  return serverPage(guildId, tab);
}

function signedOut() {
  const why = new URLSearchParams(location.search).get('signin');
  return h(
    'section',
    { class: 'card center' },
    h('p', { text: tr('sign_in_hint') }),
    why ? h('p', { class: 'error', text: tr({ denied: 'signin_denied', failed: 'signin_failed' }[why] ?? 'signin_expired') }) : null,
    h('a', { class: 'button primary', href: '/auth/login', id: 'signin', text: tr('sign_in') }),
  );
}

async function serverList() {
  state.guilds = await api('GET', '/guilds');
  if (state.guilds.length === 0) return h('section', { class: 'card' }, h('p', { text: tr('no_servers') }));
  return h(
    'section',
    {},
    h('h2', { text: tr('servers') }),
    h(
      'ul',
      { class: 'servers' },
      state.guilds.map((g) =>
        h(
          'li',
          {},
          h(
            'a',
            g.elsewhere
              ? { href: `${g.elsewhere}/#/g/${g.id}/me`, class: 'server', title: tr('elsewhere') }
              : { href: `#/g/${g.id}/${g.manager ? 'settings' : 'me'}`, class: 'server' },
            h('span', { text: g.name }),
            g.manager ? h('span', { class: 'badge', text: tr('admin_badge') }) : null,
            g.elsewhere ? h('span', { class: 'hint', text: `${tr('elsewhere')} ↗` }) : null,
          ),
        ),
      ),
    ),
  );
}

async function serverPage(guildId, tab) {
  const me = await api('GET', `/me/${guildId}`);
  const tabs = [
    ['me', tr('tab_me')],
    ...(me.manager
      ? [
          ['settings', tr('tab_settings')],
          ['dictionary', tr('tab_dictionary')],
          ['usage', tr('tab_usage')],
          ['audit', tr('tab_audit')],
        ]
      : me.dictionaryEditor
        ? [['dictionary', tr('tab_dictionary')]]
        : []),
  ];
  const current = tabs.some(([t]) => t === tab) ? tab : 'me';
  const nav = h(
    'nav',
    { class: 'tabs', 'aria-label': me.guild.name },
    h('a', { href: '#/', text: `← ${tr('back')}` }),
    tabs.map(([t, label]) => h('a', { href: `#/g/${guildId}/${t}`, 'aria-current': t === current ? 'page' : null, text: label })),
  );
  let body;
  if (current === 'me') body = h('div', {}, memberSettings(guildId, me), usageCard(await api('GET', `/me/${guildId}/usage`), false));
  else if (current === 'usage') {
    const [usage, health] = await Promise.all([api('GET', `/guilds/${guildId}/usage`), api('GET', `/guilds/${guildId}/health`)]);
    body = h('div', {}, usageCard(usage, true), healthCard(health));
  } else body = await adminTab(guildId, current);
  return h('section', {}, h('h2', { text: me.guild.name }), nav, body);
}

function voiceInput(value, placeholder) {
  const list =
    document.getElementById('voices') ??
    document.body.appendChild(
      h(
        'datalist',
        { id: 'voices' },
        state.voices.map((v) => h('option', { value: v.id, label: v.label })),
      ),
    );
  void list;
  return h('input', {
    type: 'text',
    list: 'voices',
    value: value ?? '',
    placeholder: placeholder ?? '',
    maxlength: 100,
    autocomplete: 'off',
  });
}

/** Plays the voice's sample (/voice preview's: the member's characters and previews), or says why not. */
function previewButton(guildId, input) {
  const button = h('button', { type: 'button', class: 'preview', text: `▶ ${tr('preview_voice')}` });
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      const res = await fetch(`/api/me/${guildId}/preview`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-csrf-token': state.session?.csrf ?? '', 'x-lang': state.lang },
        body: JSON.stringify({ voice: input.value.trim() || input.placeholder }),
      });
      if (!res.ok) return say((await res.json()).message, 'error');
      const audio = new Audio(URL.createObjectURL(await res.blob()));
      await audio.play();
      say(tr('preview_playing'));
    } catch {
      say(tr('error_internal'), 'error');
    } finally {
      button.disabled = false;
    }
  });
  return button;
}

const num = (input) => (input.value.trim() === '' ? null : Number(input.value));

function memberSettings(guildId, me) {
  const v = me.voice;
  const voice = voiceInput(v.own.voice, v.voice);
  const speed = h('input', { type: 'number', step: '0.1', min: 0.3, max: 4, value: v.own.speed ?? '', placeholder: String(v.speed) });
  const pitch = h('input', { type: 'number', step: '1', min: -20, max: 20, value: v.own.pitch ?? '', placeholder: String(v.pitch) });
  const name = h('input', { type: 'text', maxlength: 32, value: v.nickname ?? '' });
  const form = h(
    'form',
    {
      class: 'card',
      onsubmit: async (e) => {
        e.preventDefault();
        const body = { voice: voice.value.trim() || null, speed: num(speed), pitch: num(pitch) };
        await change(() => api('PATCH', `/me/${guildId}/voice`, body), tr('saved'));
      },
    },
    h('h3', { text: tr('my_voice') }),
    h('p', { class: 'hint', text: tr('server_default_hint') }),
    v.from === 'pool' ? h('p', { class: 'hint', text: tr('pool_voice_hint', { voice: v.voice }) }) : null,
    h('div', { class: 'row' }, field(tr('voice'), voice), previewButton(guildId, voice)),
    h('div', { class: 'row' }, field(tr('speed'), speed), field(tr('pitch'), pitch)),
    h('button', { type: 'submit', class: 'primary', text: tr('save') }),
  );
  const nameForm = h(
    'form',
    {
      class: 'card',
      onsubmit: async (e) => {
        e.preventDefault();
        await change(() => api('PUT', `/me/${guildId}/name`, { reading: name.value }), tr('saved'));
      },
    },
    h('h3', { text: tr('name_reading') }),
    field(tr('name_reading'), name, tr('name_hint')),
    h('button', { type: 'submit', class: 'primary', text: tr('save') }),
  );
  return h(
    'div',
    { class: 'grid' },
    form,
    myVolumeCard(guildId, me),
    nameForm,
    dictionaryEditor(`/me/${guildId}/dictionary`, me.dictionary, tr('my_dictionary'), tr('my_dictionary_hint')),
  );
}

async function adminTab(guildId, tab) {
  // The dictionary's editors need not manage the server (/dictionary editors): its own endpoint.
  if (tab === 'dictionary')
    return dictionaryEditor(`/guilds/${guildId}/dictionary`, await api('GET', `/guilds/${guildId}/dictionary`), tr('tab_dictionary'));
  const g = await api('GET', `/guilds/${guildId}`);
  if (tab === 'settings')
    return h(
      'div',
      {},
      serverSettings(guildId, g),
      readingCard(guildId, g),
      readingListsCards(guildId, g),
      voicePoolCard(guildId, g, voiceInput),
      volumesCard(guildId, g),
      filtersCard(guildId, g),
      sharingCard(guildId, g),
      mutedCard(guildId, g),
      autoReadCard(guildId, g),
      rolesCard(guildId, g),
      controlsCard(guildId, g),
    );
  return auditLog(g.audit);
}

function serverSettings(guildId, g) {
  const s = g.settings;
  const voice = voiceInput(s.voice);
  const speed = h('input', { type: 'number', step: '0.1', min: 0.3, max: 4, value: s.speed, required: true });
  const pitch = h('input', { type: 'number', step: '1', min: -20, max: 20, value: s.pitch, required: true });
  const readNames = h('input', { type: 'checkbox', checked: s.readAuthorNames });
  const announce = h('input', { type: 'checkbox', checked: s.announceJoinLeave });
  const maxLength = h('input', { type: 'number', min: 10, max: 500, step: 1, value: s.maxLength, required: true });
  const fastReading = h('input', { type: 'number', min: 1, max: 4, step: 0.1, value: s.fastReadingCeiling, required: true });
  const prefix = h('input', { type: 'text', minlength: 1, maxlength: 5, value: s.ignorePrefix, required: true });
  const textChannels = h('input', { type: 'number', min: 1, max: 10, step: 1, value: s.textChannelsPerCall, required: true });
  const language = h(
    'select',
    {},
    h('option', { value: 'ja', selected: s.locale === 'ja', text: tr('lang_ja') }),
    h('option', { value: 'en', selected: s.locale === 'en', text: tr('lang_en') }),
  );
  // A monthly limit: empty keeps the default shown as the placeholder; at most the operator's ceiling.
  const limitInput = (ceiling, value, fallback) =>
    h('input', { type: 'number', min: 0, max: ceiling, step: 1, value: value ?? '', placeholder: String(fallback) });
  const userLimit = limitInput(g.ceilings.userMonthlyLimit, s.userMonthlyLimit, g.limits.user.value);
  const guildLimit = limitInput(g.ceilings.guildMonthlyLimit, s.guildMonthlyLimit, g.limits.guild.value);
  const autoJoin = h(
    'select',
    {},
    h('option', { value: '', text: tr('off') }),
    g.voiceChannels.map((c) => h('option', { value: c.id, selected: c.id === s.autoJoinChannelId, text: c.name })),
  );
  const cb = (input, label) => h('div', { class: 'check' }, input, h('label', { for: (input.id ||= newId()), text: label }));
  const form = h(
    'form',
    {
      class: 'card',
      onsubmit: async (e) => {
        e.preventDefault();
        const wanted = {
          voice: voice.value.trim(),
          speed: Number(speed.value),
          pitch: Number(pitch.value),
          readAuthorNames: readNames.checked,
          announceJoinLeave: announce.checked,
          maxLength: Number(maxLength.value),
          fastReadingCeiling: Number(fastReading.value),
          ignorePrefix: prefix.value,
          locale: language.value,
          userMonthlyLimit: num(userLimit),
          guildMonthlyLimit: num(guildLimit),
          autoJoinChannelId: autoJoin.value || null,
          textChannelsPerCall: Number(textChannels.value),
        };
        // Only what changed: an unchanged unknown voice is not checked (and charged) again.
        const body = Object.fromEntries(Object.entries(wanted).filter(([k, v]) => v !== s[k]));
        const saved = await change(() => api('PATCH', `/guilds/${guildId}/settings`, body), tr('saved'));
        if (saved) Object.assign(s, saved.settings);
      },
    },
    h('h3', { text: tr('tab_settings') }),
    h('div', { class: 'row' }, field(tr('voice'), voice), previewButton(guildId, voice)),
    h('div', { class: 'row' }, field(tr('speed'), speed), field(tr('pitch'), pitch)),
    cb(readNames, tr('read_names')),
    cb(announce, tr('announce')),
    h('div', { class: 'row' }, field(tr('max_length'), maxLength), field(tr('ignore_prefix'), prefix)),
    field(tr('fast_reading'), fastReading, tr('fast_reading_hint')),
    field(tr('reading_language'), language),
    field(tr('auto_join'), autoJoin),
    field(tr('text_channels_per_call'), textChannels),
    h(
      'div',
      { class: 'row' },
      field(tr('user_limit'), userLimit, tr('ceiling_note', { max: n(g.ceilings.userMonthlyLimit) })),
      field(tr('server_limit'), guildLimit, tr('ceiling_note', { max: n(g.ceilings.guildMonthlyLimit) })),
    ),
    h('p', { class: 'hint', text: tr('usage_line', { used: n(g.usage.used), limit: n(g.limits.guild.value) }) }),
    h('button', { type: 'submit', class: 'primary', text: tr('save') }),
  );
  return form;
}
async function start() {
  const chosen = localStorage.getItem('lang');
  state.lang = chosen === 'ja' || chosen === 'en' ? chosen : navigator.language.startsWith('ja') ? 'ja' : 'en';
  const langSelect = document.getElementById('lang');
  langSelect.value = state.lang;
  langSelect.addEventListener('change', () => {
    state.lang = langSelect.value;
    localStorage.setItem('lang', state.lang);
    void api('GET', '/voices')
      .then(
        (v) => (state.voices = v),
        () => {},
      )
      .finally(() => render());
  });
  document.getElementById('signout').addEventListener('click', async () => {
    const res = await fetch('/auth/logout', {
      method: 'POST',
      headers: { 'x-csrf-token': state.session?.csrf ?? '', 'content-type': 'application/json' },
      body: '{}',
    });
    if (res.ok) {
      state.session = null;
      location.hash = '';
      say(tr('signed_out'));
      render();
    }
  });
  state.texts = await (await fetch('/texts.json')).json();
  state.session = await api('GET', '/session').catch(() => null);
  if (state.session) state.voices = await api('GET', '/voices').catch(() => []);
  window.addEventListener('hashchange', () => {
    say('');
    void render();
  });
  await render();
}

void start();
