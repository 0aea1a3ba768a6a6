// The server's lists an admin edits beside its settings: reading lists, auto-read channels and role allowances.
import { api, change, field, h, n, newId, tr } from './dom.js';

/** Role allowances: a role's members get a larger monthly limit (within the operator's ceiling). */
export function rolesCard(guildId, g) {
  const nameOf = (id) => `@${g.roles.find((r) => r.id === id)?.name ?? id}`;
  const tbody = h('tbody');
  const draw = (allowances) =>
    tbody.replaceChildren(
      ...allowances.map((a) =>
        h(
          'tr',
          {},
          h('td', { text: nameOf(a.roleId) }),
          h('td', { text: n(a.monthlyLimit) }),
          h(
            'td',
            {},
            h('button', {
              type: 'button',
              class: 'danger',
              'aria-label': `${tr('delete')} ${nameOf(a.roleId)}`,
              text: tr('delete'),
              onclick: async () => {
                const left = await change(() => api('DELETE', `/guilds/${guildId}/roles`, { roleId: a.roleId }), tr('saved'));
                if (left) draw(left);
              },
            }),
          ),
        ),
      ),
    );
  draw(g.roleAllowances);
  const role = h(
    'select',
    {},
    g.roles.map((r) => h('option', { value: r.id, text: `@${r.name}` })),
  );
  const chars = h('input', { type: 'number', min: 1, max: g.ceilings.roleMonthlyLimit, step: 1, required: true });
  const form = h(
    'form',
    {
      class: 'row',
      onsubmit: async (e) => {
        e.preventDefault();
        const list = await change(
          () => api('PUT', `/guilds/${guildId}/roles`, { roleId: role.value, chars: Number(chars.value) }),
          tr('saved'),
        );
        if (list) draw(list);
      },
    },
    field(tr('role'), role),
    field(tr('role_chars'), chars, tr('ceiling_note_role', { max: n(g.ceilings.roleMonthlyLimit) })),
    h('button', { type: 'submit', text: tr('save') }),
  );
  return h(
    'section',
    { class: 'card' },
    h('h3', { text: tr('roles_title') }),
    h('p', { class: 'hint', text: tr('roles_hint', { base: n(g.limits.user.value) }) }),
    h(
      'table',
      {},
      h(
        'thead',
        {},
        h('tr', {}, h('th', { scope: 'col', text: tr('role') }), h('th', { scope: 'col', text: tr('role_chars') }), h('th', {})),
      ),
      tbody,
    ),
    form,
  );
}

/** The channels read aloud automatically: listed with a remove button, and one to add. */
export function autoReadCard(guildId, g) {
  const nameOf = (id) => g.readableChannels.find((c) => c.id === id)?.name ?? id;
  const list = h('ul', { class: 'plain', id: 'autoread-list' });
  const channel = h('select', {});
  const mp3 = h('input', { type: 'checkbox' });
  const draw = (entries) => {
    list.replaceChildren(
      ...(entries.length === 0 ? [h('li', { class: 'hint', text: tr('autoread_none') })] : []),
      ...entries.map((e) =>
        h(
          'li',
          {},
          h('span', { text: `#${nameOf(e.channelId)}${e.postAudio ? ` (${tr('autoread_mp3_tag')})` : ''}` }),
          ' ',
          h('button', {
            type: 'button',
            class: 'danger',
            'aria-label': `${tr('delete')} #${nameOf(e.channelId)}`,
            text: tr('delete'),
            onclick: async () => {
              const left = await change(() => api('DELETE', `/guilds/${guildId}/autoread`, { channelId: e.channelId }), tr('saved'));
              if (left) draw(left);
            },
          }),
        ),
      ),
    );
    const listed = new Set(entries.map((e) => e.channelId));
    channel.replaceChildren(
      ...g.readableChannels.filter((c) => !listed.has(c.id)).map((c) => h('option', { value: c.id, text: `#${c.name}` })),
    );
  };
  draw(g.autoRead);
  const form = h(
    'form',
    {
      onsubmit: async (e) => {
        e.preventDefault();
        const entries = await change(
          () => api('POST', `/guilds/${guildId}/autoread`, { channelId: channel.value, postAudio: mp3.checked }),
          tr('saved'),
        );
        if (entries) draw(entries);
      },
    },
    field(tr('autoread_channel'), channel),
    h('div', { class: 'check' }, mp3, h('label', { for: (mp3.id ||= newId()), text: tr('autoread_mp3') })),
    h('button', { type: 'submit', text: tr('add') }),
  );
  return h(
    'section',
    { class: 'card' },
    h('h3', { text: tr('autoread_title') }),
    h('p', { class: 'hint', text: tr('autoread_hint') }),
    list,
    form,
  );
}

/** Whose messages and what is read (/reading): its switches, bots and webhooks, a required role, the freshness horizon. */
export function readingCard(guildId, g) {
  const r = g.reading;
  const checks = ['forwards', 'emoji', 'requireInVoice', 'staleNotice', 'threads', 'speedUp'].map((key) => {
    const input = h('input', { type: 'checkbox', checked: r[key] });
    return { key, input, row: h('div', { class: 'check' }, input, h('label', { for: (input.id = newId()), text: tr(`reading_${key}`) })) };
  });
  const bots = h(
    'select',
    {},
    ['off', 'listed', 'all'].map((mode) => h('option', { value: mode, selected: r.bots === mode, text: tr(`reading_bots_${mode}`) })),
  );
  const role = h(
    'select',
    {},
    h('option', { value: '', text: tr('reading_everyone') }),
    g.roles.map((x) => h('option', { value: x.id, selected: x.id === r.requiredRoleId, text: `@${x.name}` })),
  );
  const fresh = h('input', { type: 'number', min: 5, max: 600, step: 1, value: r.freshSeconds, required: true });
  const form = h(
    'form',
    {
      class: 'card',
      onsubmit: async (e) => {
        e.preventDefault();
        const wanted = { bots: bots.value, requiredRoleId: role.value || null, freshSeconds: Number(fresh.value) };
        for (const c of checks) wanted[c.key] = c.input.checked;
        const body = Object.fromEntries(Object.entries(wanted).filter(([k, v]) => v !== r[k]));
        const saved = await change(() => api('PATCH', `/guilds/${guildId}/reading`, body), tr('saved'));
        if (saved) Object.assign(r, saved.reading);
      },
    },
    h('h3', { text: tr('reading_title') }),
    checks.map((c) => c.row),
    field(tr('reading_bots'), bots),
    field(tr('reading_required_role'), role),
    field(tr('reading_freshSeconds'), fresh, tr('reading_fresh_hint')),
    h('button', { type: 'submit', text: tr('save') }),
  );
  return form;
}

/**
 * One of /reading's lists (never-read roles, allowed bots): each with a remove button, and a form to
 * add one. `path` answers { neverRoles, bots }; `key` picks the list; `nameOf` shows an id.
 */
function readingList(path, ids, key, body, nameOf, control, texts) {
  const list = h('ul', { class: 'plain' });
  const send = async (method, id) => {
    const lists = await change(() => api(method, path, body(id)), tr('saved'));
    if (lists) draw(lists[key]);
  };
  const draw = (now) =>
    list.replaceChildren(
      ...(now.length === 0 ? [h('li', { class: 'hint', text: tr('reading_list_none') })] : []),
      ...now.map((id) =>
        h(
          'li',
          {},
          h('span', { text: nameOf(id) }),
          ' ',
          h('button', {
            type: 'button',
            class: 'danger',
            'aria-label': `${tr('delete')} ${nameOf(id)}`,
            text: tr('delete'),
            onclick: () => send('DELETE', id),
          }),
        ),
      ),
    );
  draw(ids);
  const form = h(
    'form',
    {
      class: 'row',
      onsubmit: (e) => {
        e.preventDefault();
        void send('POST', control.value);
      },
    },
    field(texts.label, control, texts.hint),
    h('button', { type: 'submit', text: tr('add') }),
  );
  return h('section', { class: 'card' }, h('h3', { text: texts.title }), list, form);
}

/** /reading's never-read roles and allowed bots and webhooks. */
export function readingListsCards(guildId, g) {
  const path = `/guilds/${guildId}/reading`;
  const roleName = (id) => `@${g.roles.find((r) => r.id === id)?.name ?? id}`;
  const role = h(
    'select',
    {},
    g.roles.map((r) => h('option', { value: r.id, text: `@${r.name}` })),
  );
  const bot = h('input', { type: 'text', inputmode: 'numeric', maxlength: 30, required: true });
  return [
    readingList(`${path}/never-roles`, g.readingLists.neverRoles, 'neverRoles', (roleId) => ({ roleId }), roleName, role, {
      title: tr('reading_never_title'),
      label: tr('reading_never_role'),
    }),
    readingList(`${path}/bots`, g.readingLists.bots, 'bots', (botId) => ({ botId }), String, bot, {
      title: tr('reading_allowed_title'),
      label: tr('reading_bot_id'),
      hint: tr('reading_bot_hint'),
    }),
  ];
}

/** Members whose messages are not read (/config mute): unmute one, or mute another. */
export function mutedCard(guildId, g) {
  const list = h('ul', { class: 'plain' });
  const put = async (memberId, muted) => {
    const now = await change(() => api('PUT', `/guilds/${guildId}/muted`, { memberId, muted }), tr('saved'));
    if (now) draw(now);
  };
  const draw = (muted) =>
    list.replaceChildren(
      ...(muted.length === 0 ? [h('li', { class: 'hint', text: tr('muted_none') })] : []),
      ...muted.map((m) =>
        h('li', {}, h('span', { text: m.name }), h('button', { type: 'button', text: tr('unmute'), onclick: () => put(m.id, false) })),
      ),
    );
  draw(g.muted);
  const member = h(
    'select',
    {},
    g.members.map((m) => h('option', { value: m.id, text: m.name })),
  );
  const form = h(
    'form',
    {
      class: 'row',
      onsubmit: (e) => {
        e.preventDefault();
        void put(member.value, true);
      },
    },
    field(tr('mute_member'), member),
    h('button', { type: 'submit', class: 'danger', text: tr('mute') }),
  );
  return h(
    'section',
    { class: 'card' },
    h('h3', { text: tr('muted_title') }),
    h('p', { class: 'hint', text: tr('muted_hint') }),
    list,
    form,
  );
}

/** Who besides Manage Server edits the dictionary (/dictionary editors), and when /narrate asks first (/spend narrate-confirm). */
export function controlsCard(guildId, g) {
  const c = g.controls;
  const editors = h(
    'select',
    {},
    h('option', { value: '', text: tr('editors_none') }),
    g.roles.map((r) => h('option', { value: r.id, selected: r.id === c.dictionaryRoleId, text: `@${r.name}` })),
  );
  const confirm = h('input', { type: 'number', min: 0, max: 3000, step: 1, value: c.narrateConfirmChars, required: true });
  return h(
    'form',
    {
      class: 'card',
      onsubmit: async (e) => {
        e.preventDefault();
        const wanted = { dictionaryRoleId: editors.value || null, narrateConfirmChars: Number(confirm.value) };
        const body = Object.fromEntries(Object.entries(wanted).filter(([k, v]) => v !== c[k]));
        const saved = await change(() => api('PATCH', `/guilds/${guildId}/controls`, body), tr('saved'));
        if (saved) Object.assign(c, saved.controls);
      },
    },
    h('h3', { text: tr('controls_title') }),
    field(tr('editors_role'), editors),
    field(tr('narrate_confirm'), confirm),
    h('button', { type: 'submit', text: tr('save') }),
  );
}
