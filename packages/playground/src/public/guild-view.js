// The server: its channels (the one shown, the voice channel joined), its members (a button each:
// act as them), who is in which voice channel.
import { $, el, isBotUser, nameOf, state, T, textChannel, voiceChannel, voiceChannels } from './state.js';
import { renderCommandForm } from './commands.js';
import { speaker } from './audio.js';
import { showChannelTimeline, upsertItem } from './timeline.js';

// ---- the server ---------------------------------------------------------------------------------

export function renderServer() {
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
        // The voice channel status under its name, as Discord shows it (the bot says there what it reads).
        c.status ? el('div', { class: 'voice-status', text: c.status }) : null,
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

/** Acts as member `id` from now on (kept across reloads). */
export function setMe(id) {
  state.me = id;
  localStorage.setItem('playground.member', id);
  renderServer();
  renderCommandForm();
  // A poll shows the acting member's votes, and its end control to its author only.
  for (const item of state.items.values()) if (item.poll) upsertItem(item);
}
