// The side panels: what was heard (utterances), the service (requests, rate windows, characters),
// the bot's status and log, the page's connection.
import { $, channelName, el, nameOf, state, T, time } from './state.js';

export function renderUtterance(u) {
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
      // The voice it was spoken with: members without their own are told apart by the server's voice pool.
      text: `${T(u.endToEndEncrypted ? 'e2ee' : 'transport_only')} · ${T('heard_by', { names: u.heardBy.map(nameOf).join(', ') || '…' })}${u.voice ? ` · ${T('voice_of', { voice: u.voice })}` : ''}`,
    }),
  );
  const existing = list.querySelector(`li[data-id="${u.id}"]`);
  if (existing) existing.replaceWith(node);
  else list.prepend(node);
  while (list.children.length > 100) list.lastElementChild.remove();
}

// ---- the service --------------------------------------------------------------------------------

export function renderService(service) {
  state.service = service;
  $('#speech-engine').textContent = T('engine', { engine: T(service.speech === 'espeak' ? 'engine_espeak' : 'engine_tones') });
  const windows = Object.entries(service.rate).map(([name, w]) => {
    const pct = Math.min(100, (w.current / w.limit) * 100);
    return el(
      'div',
      { class: 'window' },
      el('span', {
        text: `${T('rate', { name: T(`endpoint_${name}`), current: w.current, limit: w.limit, seconds: Math.round(w.windowMs / 1000) })}${w.retryInMs ? T('rate_full', { seconds: Math.ceil(w.retryInMs / 1000) }) : ''}`,
      }),
      el('div', { class: 'bar' }, el('span', { class: w.current >= w.limit ? 'full' : '', style: `width:${pct}%` })),
    );
  });
  $('#rate').replaceChildren(...windows);
  const account = service.accounts[0];
  $('#characters').textContent =
    `${T('characters', { spent: service.charactersCharged })}${account ? T('characters_left', { remaining: account.remaining, plan: T(`plan_${account.plan}`) }) : ''}${service.notices ? T('notices', { count: service.notices }) : ''}`;
  $('#requests tbody').replaceChildren(
    ...service.requests.map((r) =>
      el(
        'tr',
        {},
        el('td', { text: time(r.at) }),
        el('td', { text: T(`endpoint_${r.target}`) }),
        el('td', { class: `status-${String(r.status)[0]}`, text: `${r.status || '…'}${r.code ? ` ${r.code}` : ''}` }),
        el('td', { text: `${r.chars ?? ''}${r.speed ? ` ×${r.speed}` : ''}` }),
        el('td', { class: 'voice', text: r.voice ?? '' }),
        el('td', { class: 'text', title: r.text ?? r.path, text: r.text ?? '' }),
      ),
    ),
  );
}

// ---- the bot ------------------------------------------------------------------------------------

export function renderBotStatus() {
  const pill = $('#bot-status');
  const status = { starting: 'bot_starting', ready: 'bot_ready', exited: 'bot_exited' }[state.botStatus];
  pill.textContent = T('bot_status', { status: status ? T(status) : state.botStatus });
  pill.className = `pill ${state.botStatus === 'ready' ? 'ok' : state.botStatus === 'exited' ? 'bad' : ''}`;
}

export function appendLog(line) {
  const list = $('#log');
  list.append(
    el('li', {
      class: `lvl-${line.level}`,
      text: `${line.time ? time(line.time) : ''} ${line.msg}${line.fields ? ` ${line.fields}` : ''}`,
    }),
  );
  while (list.children.length > 300) list.firstElementChild.remove();
}

export function renderConnection() {
  const pill = $('#connection');
  pill.textContent = T(connection.state);
  pill.className = `pill ${connection.state === 'connected' ? 'ok' : connection.state === 'disconnected' ? 'bad' : ''}`;
}

export const connection = { state: 'connecting' };
