// The message box, as Discord's: several lines (Enter sends, Shift+Enter starts a new line, so a
// ``` code block can be written), @-mentions picked from a list of the server's members and sent as
// <@id> (shown as @name while writing), a `/` at its start opening the list of commands (picking
// one opens its form; a message starting with / is never sent as chat), and Discord's
// 2,000-character limit said, never cut.
/** Discord's limit for a member's message (without Nitro). */
const MESSAGE_MAX_CHARS = 2000;
/** Discord shows how many characters are left once fewer than this remain. */
const COUNT_SHOWN_FROM = 200;

/** At most this many commands in the `/` list (it scrolls, as Discord's picker does). */
const COMMANDS_SHOWN = 100;

/**
 * Wires the message box. `members()` lists who can be mentioned ({ id, displayName, username });
 * `commands()` what `/` offers ({ label: '/設定 声', description, path }); `pickCommand(command)`
 * opens that command's form; `hasAttachments()` says whether files wait to go with the message;
 * `send(content)` posts the message as Discord would send it (with those files);
 * `say(key, vars)` is the page's text.
 */
export function createComposer({ box, list, count, error, members, commands, pickCommand, hasAttachments, send, say }) {
  /** Mentions picked from the list: the "@name" shown, and the member it stands for. */
  let picked = [];
  let options = [];
  /** What the list holds: members to mention, or commands after `/`. */
  let listing = 'mentions';
  let active = 0;

  const chars = (text) => [...text].length;

  /** The text as Discord receives it: each picked "@name" as the member's <@id>. */
  function wire() {
    let content = box.value;
    for (const { label, id } of [...picked].sort((a, b) => b.label.length - a.label.length))
      content = content.split(label).join(`<@${id}>`);
    return content;
  }

  function grow() {
    box.style.height = 'auto';
    box.style.height = `${Math.min(box.scrollHeight + 2, 240)}px`;
  }

  function showCount() {
    const n = chars(wire());
    count.textContent = n > MESSAGE_MAX_CHARS - COUNT_SHOWN_FROM ? `${n} / ${MESSAGE_MAX_CHARS}` : '';
    count.className = n > MESSAGE_MAX_CHARS ? 'error' : 'muted';
    if (n <= MESSAGE_MAX_CHARS) error.textContent = '';
  }

  /** The "@query" being written just before the caret, if any. */
  function mentionQuery() {
    const before = box.value.slice(0, box.selectionStart);
    const m = /(^|\s)@([^\s@]*)$/.exec(before);
    return m ? { query: m[2], start: before.length - m[2].length - 1 } : null;
  }

  function closeList() {
    list.hidden = true;
    options = [];
    box.removeAttribute('aria-activedescendant');
    box.setAttribute('aria-expanded', 'false');
  }

  /** What follows a `/` that starts the box (and the caret is in), if any: the command being looked for. */
  function commandQuery() {
    const before = box.value.slice(0, box.selectionStart);
    return before.startsWith('/') && !before.includes('\n') ? before.slice(1) : null;
  }

  /** The commands matching `query`: those whose shown or English name starts with it first, then those containing it. */
  function matchingCommands(query) {
    const q = query.trim().toLowerCase();
    const names = (c) => [c.label.slice(1).toLowerCase(), c.path.join(' ')];
    const all = commands();
    const starts = all.filter((c) => names(c).some((n) => n.startsWith(q)));
    const contains = all.filter((c) => !starts.includes(c) && names(c).some((n) => n.includes(q)));
    return [...starts, ...contains];
  }

  function renderCommandList(query) {
    listing = 'commands';
    options = matchingCommands(query).slice(0, COMMANDS_SHOWN);
    if (options.length === 0) return closeList();
    active = Math.min(active, options.length - 1);
    list.setAttribute('aria-label', say('command_list'));
    list.replaceChildren(
      ...options.map((c, i) => {
        const li = document.createElement('li');
        li.id = `command-${i}`;
        li.setAttribute('role', 'option');
        li.setAttribute('aria-selected', String(i === active));
        li.append(Object.assign(document.createElement('b'), { textContent: c.label }), ` ${c.description}`);
        li.addEventListener('mousedown', (event) => {
          event.preventDefault();
          chooseCommand(c);
        });
        return li;
      }),
    );
    list.hidden = false;
    box.setAttribute('aria-expanded', 'true');
    box.setAttribute('aria-activedescendant', `command-${active}`);
    list.querySelector('[aria-selected="true"]')?.scrollIntoView({ block: 'nearest' });
  }

  /** Opens a command picked after `/`: its form takes over; nothing of the box is sent. */
  function chooseCommand(command) {
    box.value = '';
    picked = [];
    closeList();
    grow();
    showCount();
    error.textContent = '';
    pickCommand(command);
  }

  function renderList() {
    const query = commandQuery();
    if (query !== null) return renderCommandList(query);
    listing = 'mentions';
    list.setAttribute('aria-label', say('mention_list'));
    const found = mentionQuery();
    if (!found) return closeList();
    const q = found.query.toLowerCase();
    options = members()
      .filter((m) => m.displayName.toLowerCase().includes(q) || m.username.toLowerCase().includes(q))
      .slice(0, 8);
    if (options.length === 0) return closeList();
    active = Math.min(active, options.length - 1);
    list.replaceChildren(
      ...options.map((m, i) => {
        const li = document.createElement('li');
        li.id = `mention-${m.id}`;
        li.setAttribute('role', 'option');
        li.setAttribute('aria-selected', String(i === active));
        li.dataset.id = m.id;
        li.append(Object.assign(document.createElement('b'), { textContent: m.displayName }), ` ${m.username}`);
        // mousedown, not click: the box keeps its focus and caret.
        li.addEventListener('mousedown', (event) => {
          event.preventDefault();
          pick(m);
        });
        return li;
      }),
    );
    list.hidden = false;
    box.setAttribute('aria-expanded', 'true');
    box.setAttribute('aria-activedescendant', `mention-${options[active].id}`);
  }

  function pick(m) {
    const found = mentionQuery();
    if (!found) return;
    const label = `@${m.displayName}`;
    const caret = box.selectionStart;
    box.value = `${box.value.slice(0, found.start)}${label} ${box.value.slice(caret)}`;
    const at = found.start + label.length + 1;
    box.setSelectionRange(at, at);
    if (!picked.some((p) => p.label === label)) picked.push({ label, id: m.id });
    closeList();
    showCount();
  }

  async function submit() {
    const content = wire();
    // Files alone make a message, as in Discord.
    if (!content.trim() && !hasAttachments()) return;
    // A `/` starts a command, never a chat message (it would be read aloud): the one named, or a word why not.
    if (content.trimStart().startsWith('/')) {
      const typed = content.trim();
      const exact = commands().find((c) => c.label === typed || `/${c.path.join(' ')}` === typed);
      if (exact) return chooseCommand(exact);
      error.textContent = say('unknown_command', { text: typed.split(/\s/)[0] });
      return;
    }
    const n = chars(content);
    if (n > MESSAGE_MAX_CHARS) {
      error.textContent = say('too_long', { count: n, max: MESSAGE_MAX_CHARS });
      return;
    }
    // Emptied at once, as Discord does (the message may show in the timeline before the send is answered, and a
    // second Enter must not send it twice); put back if the send fails.
    const typed = { value: box.value, picked };
    box.value = '';
    picked = [];
    grow();
    showCount();
    try {
      await send(content);
    } catch (e) {
      if (box.value === '') {
        box.value = typed.value;
        picked = typed.picked;
        grow();
        showCount();
      }
      error.textContent = e.message;
    }
  }

  box.setAttribute('role', 'combobox');
  box.setAttribute('aria-autocomplete', 'list');
  box.setAttribute('aria-controls', list.id);
  box.setAttribute('aria-expanded', 'false');
  box.addEventListener('input', () => {
    active = 0;
    grow();
    showCount();
    renderList();
  });
  box.addEventListener('keydown', (event) => {
    if (!list.hidden && options.length) {
      if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
        event.preventDefault();
        active = (active + (event.key === 'ArrowDown' ? 1 : options.length - 1)) % options.length;
        return renderList();
      }
      if (event.key === 'Enter' || event.key === 'Tab') {
        event.preventDefault();
        return listing === 'commands' ? chooseCommand(options[active]) : pick(options[active]);
      }
      if (event.key === 'Escape') return closeList();
    }
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      void submit();
    }
  });
  box.addEventListener('blur', () => setTimeout(closeList, 100));
  box.form.addEventListener('submit', (event) => {
    event.preventDefault();
    void submit();
  });
  return { refresh: showCount };
}
