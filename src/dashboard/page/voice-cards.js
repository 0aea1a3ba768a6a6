// Voices told apart and evened out: the server's voice pool and members' volumes (admins, as
// /config voice-pool and /config volume), and a member's own volume (as /voice volume).
import { api, change, field, h, tr } from './dom.js';

/** A volume box: 0 to 2 in steps of 0.1, empty when none is set. */
const volumeInput = (value, placeholder) =>
  h('input', { type: 'number', min: 0, max: 2, step: 0.1, value: value ?? '', placeholder: placeholder ?? '' });
const volumeOf = (input) => (input.value.trim() === '' ? null : Number(input.value));

/** The member's own volume in voice; an admin's volume for them wins and is said so. */
export function myVolumeCard(guildId, me) {
  const v = me.voice;
  const input = volumeInput(v.own.volume, '1');
  const note = h('p', { class: 'hint' });
  const describe = (voice) => {
    note.textContent = voice.adminVolume === null ? tr('volume_hint') : tr('volume_admin_note', { volume: voice.adminVolume });
  };
  describe(v);
  return h(
    'form',
    {
      class: 'card',
      onsubmit: async (e) => {
        e.preventDefault();
        const now = await change(() => api('PUT', `/me/${guildId}/volume`, { volume: volumeOf(input) }), tr('saved'));
        if (now) describe(now.voice);
      },
    },
    h('h3', { text: tr('my_volume') }),
    note,
    field(tr('volume'), input),
    h('button', { type: 'submit', class: 'primary', text: tr('save') }),
  );
}

/** The server's voice pool: members without a voice of their own are given one of these each. */
export function voicePoolCard(guildId, g, voiceInput) {
  const list = h('ul', { class: 'plain' });
  const draw = (pool) =>
    list.replaceChildren(
      ...(pool.length === 0 ? [h('li', { class: 'hint', text: tr('voice_pool_none', { voice: g.settings.voice }) })] : []),
      ...pool.map((voice) =>
        h(
          'li',
          {},
          h('span', { text: voice }),
          h('button', {
            type: 'button',
            text: tr('delete'),
            onclick: async () => {
              const now = await change(() => api('DELETE', `/guilds/${guildId}/voice-pool`, { voice }), tr('saved'));
              if (now) draw(now);
            },
          }),
        ),
      ),
    );
  draw(g.voicePool);
  const voice = voiceInput('');
  const form = h(
    'form',
    {
      class: 'row',
      onsubmit: async (e) => {
        e.preventDefault();
        const now = await change(() => api('POST', `/guilds/${guildId}/voice-pool`, { voice: voice.value }), tr('saved'));
        if (now) {
          voice.value = '';
          draw(now);
        }
      },
    },
    field(tr('voice_pool_new'), voice),
    h('button', { type: 'submit', text: tr('add') }),
  );
  return h(
    'section',
    { class: 'card' },
    h('h3', { text: tr('voice_pool_title') }),
    h('p', { class: 'hint', text: tr('voice_pool_hint') }),
    list,
    form,
  );
}

/** Members whose volume an admin set (over their own choice). */
export function volumesCard(guildId, g) {
  const list = h('ul', { class: 'plain' });
  const put = async (memberId, volume) => {
    const now = await change(() => api('PUT', `/guilds/${guildId}/volume`, { memberId, volume }), tr('saved'));
    if (now) draw(now);
  };
  const draw = (volumes) =>
    list.replaceChildren(
      ...(volumes.length === 0 ? [h('li', { class: 'hint', text: tr('volumes_none') })] : []),
      ...volumes.map((m) =>
        h(
          'li',
          {},
          h('span', { text: `${m.name}: ${m.volume}` }),
          h('button', { type: 'button', text: tr('volume_clear'), onclick: () => put(m.id, null) }),
        ),
      ),
    );
  draw(g.volumes);
  const member = h(
    'select',
    {},
    g.members.map((m) => h('option', { value: m.id, text: m.name })),
  );
  const volume = volumeInput('', '1');
  const form = h(
    'form',
    {
      class: 'row',
      onsubmit: (e) => {
        e.preventDefault();
        void put(member.value, volumeOf(volume));
      },
    },
    field(tr('mute_member'), member),
    field(tr('volume'), volume),
    h('button', { type: 'submit', text: tr('save') }),
  );
  return h(
    'section',
    { class: 'card' },
    h('h3', { text: tr('volumes_title') }),
    h('p', { class: 'hint', text: tr('volumes_hint') }),
    list,
    form,
  );
}
