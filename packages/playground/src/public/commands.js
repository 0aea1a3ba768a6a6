// The slash command form, built from the registered command definitions as Discord's client
// builds its options: typed inputs with their limits, choices, autocomplete; values sent typed,
// subcommands nested; what is missing or out of range said in the chosen language.
import { $, el, loc, post, state, T, textChannel } from './state.js';
import { followTimeline } from './timeline.js';
import { openModal } from './modal.js';

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

/** The slash commands (a message command is on a message's Apps menu instead, as in Discord). */
function slashCommands() {
  return state.commands.filter((c) => (c.type ?? 1) === 1);
}

function currentCommand() {
  return slashCommands().find((c) => c.name === $('#command').value);
}

/**
 * Every command and subcommand a member can run, as Discord's `/` picker lists them: its name as the
 * client shows it ("/設定 声"), its description, and the path of English names to choose it.
 */
export function commandLeaves() {
  const leaves = [];
  for (const command of slashCommands()) {
    const subs = (command.options ?? []).filter((o) => o.type === OPTION.SUB || o.type === OPTION.GROUP);
    if (subs.length === 0) leaves.push({ label: `/${loc(command)}`, path: [command.name], description: loc(command, 'description') });
    for (const sub of subs) {
      if (sub.type === OPTION.SUB)
        leaves.push({ label: `/${loc(command)} ${loc(sub)}`, path: [command.name, sub.name], description: loc(sub, 'description') });
      else
        for (const leaf of sub.options ?? [])
          leaves.push({
            label: `/${loc(command)} ${loc(sub)} ${loc(leaf)}`,
            path: [command.name, sub.name, leaf.name],
            description: loc(leaf, 'description'),
          });
    }
  }
  return leaves;
}

/** Chooses the command at `path` in the form (as picked after `/`); the control to go on with: its first option, or Run. */
export function chooseCommand(path) {
  $('#command').value = path[0];
  $('#subcommand').value = '';
  renderSubcommands();
  if (path[1]) {
    $('#subcommand').value = path[1];
    renderSubcommands();
  }
  if (path[2]) {
    $('#subsubcommand').value = path[2];
    renderCommandForm();
  }
  return $('#command-options [required]') ?? $('#run-command');
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

export function renderCommandList() {
  const select = $('#command');
  // The form opens on /join, the first step of the page's own instructions.
  const chosen = select.value || 'join';
  select.replaceChildren(
    ...slashCommands().map((c) =>
      el('option', { value: c.name, selected: c.name === chosen, text: `${loc(c)}${c.default_member_permissions ? ' 🔒' : ''}` }),
    ),
  );
  renderSubcommands();
}

export function renderSubcommands() {
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

export function renderCommandForm() {
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

export async function runCommand(event) {
  event.preventDefault();
  const command = currentCommand();
  if (!command) return;
  const { options, problems } = collectOptions();
  $('#command-error').textContent = problems.join(' · ');
  if (problems.length) return;
  const button = $('#run-command');
  button.disabled = true;
  try {
    const answer = await post('/api/command', {
      userId: state.me,
      channelId: textChannel().id,
      name: command.name,
      options,
      locale: state.locale,
    });
    if (answer.modal) openModal(answer.modal, answer.id);
  } catch (error) {
    $('#command-error').textContent = error.message;
  } finally {
    button.disabled = false;
  }
}
