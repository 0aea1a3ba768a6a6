// The server's filters against 荒らし (as /filter): words and patterns never read or read as another
// word, and the flood limit. The rules are the API's (src/usecases/filters.ts); refusals say why.
import { api, change, field, h, tr } from './dom.js';

/** Filters as a table with a remove button each, a form to add one, and the flood limit. */
export function filtersCard(guildId, g) {
  const tbody = h('tbody');
  const floodNow = h('p', { class: 'hint' });
  const draw = ({ entries, floodMax }) => {
    tbody.replaceChildren(
      ...(entries.length === 0 ? [h('tr', {}, h('td', { colspan: 3, class: 'hint', text: tr('filters_none') }))] : []),
      ...entries.map((e) =>
        h(
          'tr',
          {},
          h('td', { text: e.word }),
          h('td', { text: e.action === 'skip' ? tr('filters_skip') : tr('filters_read_as', { reading: e.reading }) }),
          h(
            'td',
            {},
            h('button', {
              type: 'button',
              class: 'danger',
              'aria-label': `${tr('delete')} ${e.word}`,
              text: tr('delete'),
              onclick: async () => {
                const left = await change(() => api('DELETE', `/guilds/${guildId}/filters`, { word: e.word }), tr('saved'));
                if (left) draw(left);
              },
            }),
          ),
        ),
      ),
    );
    floodNow.textContent = floodMax === null ? tr('filters_flood_off') : tr('filters_flood_now', { max: floodMax });
    flood.value = floodMax ?? 0;
  };
  const word = h('input', { type: 'text', maxlength: 103, required: true });
  const action = h(
    'select',
    {},
    h('option', { value: 'replace', text: tr('filters_action_replace') }),
    h('option', { value: 'skip', text: tr('filters_action_skip') }),
  );
  const reading = h('input', { type: 'text', maxlength: 20, placeholder: g.settings.locale === 'en' ? 'beep' : 'ピー' });
  action.addEventListener('change', () => (reading.disabled = action.value === 'skip'));
  const add = h(
    'form',
    {
      class: 'row add',
      onsubmit: async (e) => {
        e.preventDefault();
        const body = { word: word.value, action: action.value, reading: reading.value };
        const list = await change(() => api('POST', `/guilds/${guildId}/filters`, body), tr('saved'));
        if (list) {
          word.value = reading.value = '';
          draw(list);
        }
      },
    },
    field(tr('filters_word'), word, tr('filters_word_hint')),
    field(tr('filters_action'), action),
    field(tr('filters_reading'), reading),
    h('button', { type: 'submit', class: 'primary', text: tr('add') }),
  );
  const flood = h('input', { type: 'number', min: 0, max: 30, step: 1, required: true });
  const floodForm = h(
    'form',
    {
      class: 'row',
      onsubmit: async (e) => {
        e.preventDefault();
        const list = await change(() => api('PUT', `/guilds/${guildId}/filters/flood`, { messages: Number(flood.value) }), tr('saved'));
        if (list) draw(list);
      },
    },
    field(tr('filters_flood'), flood, tr('filters_flood_hint')),
    h('button', { type: 'submit', text: tr('save') }),
  );
  draw(g.filters);
  return h(
    'section',
    { class: 'card', id: 'filters' },
    h('h3', { text: tr('filters_title') }),
    h('p', { class: 'hint', text: tr('filters_hint') }),
    add,
    h(
      'div',
      { class: 'scroll' },
      h(
        'table',
        {},
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', { scope: 'col', text: tr('filters_word') }),
            h('th', { scope: 'col', text: tr('filters_action') }),
            h('th', { scope: 'col' }, h('span', { class: 'sr', text: tr('delete') })),
          ),
        ),
        tbody,
      ),
    ),
    floodNow,
    floodForm,
  );
}
