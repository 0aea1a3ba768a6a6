// Shared dictionaries (as /dictionary share, follow, unfollow): whether other servers may follow
// this one's dictionary, the dictionaries it follows, and those it may follow (servers the admin is
// in, and the operator's curated lists). The rules are the API's (src/usecases/shared-dictionaries.ts).
import { api, change, field, h, tr } from './dom.js';

const label = (s) =>
  s.kind === 'curated'
    ? tr('sharing_curated', { name: s.source })
    : s.name === null
      ? tr('sharing_server_id', { id: s.source })
      : tr('sharing_server', { name: s.name, id: s.source });

export function sharingCard(guildId, g) {
  const path = `/guilds/${guildId}/dictionary`;
  const followable = h('input', { type: 'checkbox', checked: g.sharing.followable });
  const list = h('ul', { class: 'plain' });
  const pick = h('select', {});
  const typed = h('input', { type: 'text', maxlength: 60, placeholder: tr('sharing_id_placeholder') });
  const count = h('p', { class: 'hint' });
  const draw = (view) => {
    followable.checked = view.followable;
    count.textContent = tr('sharing_count', { count: view.follows.length, max: view.max });
    list.replaceChildren(
      ...(view.follows.length === 0 ? [h('li', { class: 'hint', text: tr('sharing_none') })] : []),
      ...view.follows.map((f) =>
        h(
          'li',
          {},
          h('span', { text: label(f) + (f.active ? '' : ` ${tr('sharing_inactive')}`) }),
          ' ',
          h('button', {
            type: 'button',
            class: 'danger',
            'aria-label': `${tr('sharing_unfollow')} ${label(f)}`,
            text: tr('sharing_unfollow'),
            onclick: async () => {
              const next = await change(() => api('DELETE', `${path}/follows`, { source: `${f.kind}:${f.source}` }), tr('saved'));
              if (next) draw(next);
            },
          }),
        ),
      ),
    );
    pick.replaceChildren(
      h('option', { value: '', text: tr('sharing_pick') }),
      ...view.available.map((a) => h('option', { value: `${a.kind}:${a.source}`, text: label(a) })),
    );
  };
  followable.addEventListener('change', async () => {
    const next = await change(() => api('PUT', `${path}/sharing`, { followable: followable.checked }), tr('saved'));
    if (next) draw(next);
    else followable.checked = !followable.checked;
  });
  const form = h(
    'form',
    {
      class: 'row add',
      onsubmit: async (e) => {
        e.preventDefault();
        const source = typed.value.trim() || pick.value;
        const next = await change(() => api('POST', `${path}/follows`, { source }), tr('saved'));
        if (next) {
          typed.value = '';
          draw(next);
        }
      },
    },
    field(tr('sharing_available'), pick),
    field(tr('sharing_by_id'), typed),
    h('button', { type: 'submit', class: 'primary', text: tr('sharing_follow') }),
  );
  draw(g.sharing);
  return h(
    'section',
    { class: 'card', id: 'shared-dictionaries' },
    h('h3', { text: tr('sharing_title') }),
    h('p', { class: 'hint', text: tr('sharing_hint') }),
    h('div', { class: 'check' }, followable, h('label', { for: (followable.id ||= 'sharing-followable'), text: tr('sharing_followable') })),
    h('h4', { text: tr('sharing_followed') }),
    count,
    list,
    form,
  );
}
