import { api, change, field, h, state, tr } from './dom.js';

/** A dictionary as a table: search, sort, add, delete, bulk paste and file import, export. */
export function dictionaryEditor(path, initial, title, hint) {
  let entries = [...initial];
  let sortBy = 'word';
  const search = h('input', { type: 'search', placeholder: tr('search'), oninput: () => draw() });
  const tbody = h('tbody');
  const count = h('p', { class: 'hint' });
  const sortButton = (key) => h('button', { type: 'button', class: 'link', onclick: () => ((sortBy = key), draw()), text: tr(key) });
  function draw() {
    const q = search.value.trim().toLowerCase();
    const shown = entries
      .filter((e) => !q || e.word.toLowerCase().includes(q) || e.reading.toLowerCase().includes(q))
      .sort((a, b) => a[sortBy].localeCompare(b[sortBy], state.lang));
    count.textContent = tr('entries', { count: entries.length });
    tbody.replaceChildren(
      ...shown.map((e) =>
        h(
          'tr',
          {},
          h('td', { text: e.word }),
          h('td', { text: e.reading }),
          h(
            'td',
            {},
            h('button', {
              type: 'button',
              class: 'danger',
              'aria-label': `${tr('delete')} ${e.word}`,
              text: tr('delete'),
              onclick: async () => {
                if (await change(() => api('DELETE', path, { word: e.word }), tr('removed', { word: e.word }))) {
                  entries = entries.filter((x) => x.word !== e.word);
                  draw();
                }
              },
            }),
          ),
        ),
      ),
    );
  }
  // A word (50 characters), or a pattern written r/…/ (100 and its r/ and /).
  const word = h('input', { type: 'text', maxlength: 103, required: true });
  const reading = h('input', { type: 'text', maxlength: 100, required: true });
  const add = h(
    'form',
    {
      class: 'row add',
      onsubmit: async (e) => {
        e.preventDefault();
        const added = await change(
          () => api('POST', path, { word: word.value, reading: reading.value }),
          tr('added', { word: word.value.trim() }),
        );
        if (added) {
          entries = [...entries.filter((x) => x.word !== added.word), added];
          word.value = reading.value = '';
          word.focus();
          draw();
        }
      },
    },
    field(tr('word'), word, tr('word_pattern_hint')),
    field(tr('reading'), reading),
    h('button', { type: 'submit', class: 'primary', text: tr('add') }),
  );
  const paste = h('textarea', { rows: 4, placeholder: 'word\treading' });
  const file = h('input', { type: 'file', accept: '.json,.csv,.tsv,.txt' });
  const summary = h('p', { class: 'hint', 'aria-live': 'polite' });
  let pending = null;
  // Merge and Replace only once a check has summarised what they would do.
  const merge = h('button', { type: 'button', disabled: true, onclick: () => apply('merge'), text: tr('merge') });
  const replace = h('button', { type: 'button', class: 'danger', disabled: true, onclick: () => apply('replace'), text: tr('replace') });
  const ready = (yes) => (merge.disabled = replace.disabled = !yes);
  async function check(name, text) {
    pending = null;
    ready(false);
    const result = await change(() => api('POST', `${path}/import`, { name, text }), '');
    if (!result) return;
    pending = { name, text };
    ready(true);
    summary.textContent = tr('import_summary', result.summary);
  }
  async function apply(mode) {
    if (!pending) return;
    const result = await change(() => api('POST', `${path}/import`, { ...pending, apply: mode }), tr('imported'));
    if (result) location.reload();
  }
  const bulk = h(
    'details',
    { class: 'bulk' },
    h('summary', { text: tr('bulk_paste') }),
    field(tr('bulk_paste'), paste, tr('bulk_hint')),
    h('button', { type: 'button', onclick: () => check('pasted.tsv', paste.value), text: tr('preview') }),
    field(tr('import_file'), file),
    h('button', {
      type: 'button',
      onclick: async () => file.files[0] && check(file.files[0].name, await file.files[0].text()),
      text: tr('preview'),
    }),
    summary,
    h('div', { class: 'row' }, merge, replace),
    h(
      'p',
      {},
      h('a', { href: `/api${path}/export?format=json`, download: 'dictionary.json', text: tr('export_json') }),
      ' · ',
      h('a', { href: `/api${path}/export?format=csv`, download: 'dictionary.csv', text: tr('export_csv') }),
    ),
  );
  draw();
  return h(
    'section',
    { class: 'card' },
    h('h3', { text: title }),
    hint ? h('p', { class: 'hint', text: hint }) : null,
    add,
    field(tr('search'), search),
    count,
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
            h('th', { scope: 'col' }, sortButton('word')),
            h('th', { scope: 'col' }, sortButton('reading')),
            h('th', { scope: 'col' }, h('span', { class: 'sr', text: tr('delete') })),
          ),
        ),
        tbody,
      ),
    ),
    bulk,
  );
}
