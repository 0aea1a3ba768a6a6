// The channel's timeline: members' messages, the bot's messages and replies (embeds, buttons,
// attachments), the commands members ran (one entry each: the bot's reply, headed "… used /x",
// once it answers); each message's Apps menu; following new messages while the reader is at the
// bottom, and a "new messages" bar when they arrive while the reader has scrolled up.
import { $, el, format, loc, nameOf, post, state, T, textChannel, time } from './state.js';
import { openAppsMenu } from './apps-menu.js';
import { renderMemberAttachment } from './attachments.js';
import { renderPoll, renderPollResult } from './polls.js';

/** Only the chosen text channel's messages are shown (each item knows its channel). */
export function showChannelTimeline() {
  const id = textChannel()?.id ?? '';
  let rule = document.getElementById('channel-filter');
  if (!rule) {
    rule = el('style', { id: 'channel-filter' });
    document.head.append(rule);
  }
  rule.textContent = `#timeline > li[data-channel]:not([data-channel="${CSS.escape(id)}"]) { display: none; }`;
  followTimeline();
}

function renderItem(item) {
  const at = el('span', { class: 'time', text: time(item.at) });
  if (item.type === 'member') {
    // Discord's poll result message: a system line in the poll author's name, no author header.
    const kind = item.pollResult ? 'member poll-result-message' : item.poll ? 'member poll-message' : 'member';
    return withApps(
      item,
      nameOf(item.authorId),
      el(
        'li',
        { 'data-id': item.id, 'data-channel': item.channelId, class: item.deleted ? `${kind} deleted` : kind },
        item.pollResult ? renderPollResult(item) : el('div', {}, el('span', { class: 'author', text: nameOf(item.authorId) }), at),
        item.content ? el('div', { class: 'body', html: format(item.content) }) : null,
        ...(item.attachments ?? []).map(renderMemberAttachment),
        item.poll ? renderPoll(item) : null,
        item.reactions.length
          ? el('div', { class: 'reactions' }, ...item.reactions.map((r) => el('span', { text: decodeURIComponent(r) })))
          : null,
      ),
    );
  }
  if (item.type === 'command') {
    // Shown only until the bot answers (its reply then carries the header), or to say it never did.
    return el(
      'li',
      { 'data-id': item.id, 'data-channel': item.channelId, class: 'command', hidden: item.replied },
      el(
        'div',
        { class: 'command-use' },
        T('used', { name: nameOf(item.userId), command: '\u0000' })
          .split('\u0000')
          .flatMap((part, i) => (i ? [el('code', { text: commandSummary(item) }), part] : [part])),
      ),
      item.noResponse ? el('div', { class: 'error', text: T('no_response') }) : null,
    );
  }
  const context = [];
  const invoked = item.interaction;
  if (invoked?.kind === 'button') context.push(replyContext(state.items.get(invoked.messageId)));
  else if (invoked)
    context.push(
      el('div', {
        class: 'context',
        text: T('interaction_used', { name: nameOf(invoked.userId), command: commandSummary(state.items.get(invoked.id) ?? invoked) }),
      }),
    );
  if (item.replyTo) context.push(replyContext(state.items.get(item.replyTo)));
  const owner = nameOf(invoked ? invoked.userId : state.me);
  const li = el(
    'li',
    {
      'data-id': item.id,
      'data-channel': item.channelId,
      class: ['bot', item.ephemeral ? 'ephemeral' : '', item.deleted ? 'deleted' : ''].join(' ').trim(),
    },
    ...context,
    el(
      'div',
      {},
      el('span', { class: 'author bot-author', text: state.botUser?.username ?? 'bot' }),
      el('span', { class: 'badge bot', text: T('badge_app') }),
      at,
      item.edited ? el('span', { class: 'time', text: T('edited') }) : null,
    ),
    item.loading
      ? el('div', { class: 'body muted', text: T('thinking', { bot: state.botUser?.username ?? 'bot' }) })
      : el('div', { class: 'body', html: format(item.content) }),
    ...item.embeds.map(renderEmbed),
    ...item.attachments.map(renderAttachment),
    item.buttons?.length ? el('div', { class: 'buttons' }, ...item.buttons.map((b) => renderButton(item, b))) : null,
    item.ephemeral
      ? el(
          'div',
          { class: 'context' },
          el('span', { class: 'badge ephemeral', text: T('ephemeral') }),
          ` ${T('only_you', { name: owner })}`,
        )
      : null,
  );
  // Discord offers no Apps on an ephemeral message or one still loading.
  return item.ephemeral || item.loading ? li : withApps(item, state.botUser?.username ?? 'bot', li);
}

/** "↪ Alice: the start of what she wrote": the message a reply (or a click's answer) refers to. */
function replyContext(original) {
  const who =
    original?.type === 'member'
      ? `${nameOf(original.authorId)}: ${original.content.slice(0, 60)}`
      : original?.type === 'bot'
        ? `${state.botUser?.username ?? 'bot'}: ${original.content.slice(0, 60)}`
        : T('a_message');
  return el('div', { class: 'context', text: T('replying_to', { who }) });
}

/** A message's Apps menu, as Discord's: a ⋯ button shown on hover or focus, and a right click. */
function withApps(item, author, li) {
  if (item.deleted) return li;
  li.addEventListener('contextmenu', (event) => {
    event.preventDefault();
    openAppsMenu(item, { x: event.clientX, y: event.clientY });
  });
  li.prepend(
    el('button', {
      type: 'button',
      class: 'more',
      title: T('more'),
      'aria-label': T('more_for', { name: author }),
      'aria-haspopup': 'menu',
      text: '⋯',
      onclick: (event) => openAppsMenu(item, event.currentTarget),
    }),
  );
  return li;
}

function renderEmbed(embed) {
  return el(
    'div',
    { class: 'embed' },
    embed.title ? el('div', { class: 'title', html: format(embed.title) }) : null,
    embed.description ? el('div', { class: 'body', html: format(embed.description) }) : null,
    ...(embed.fields ?? []).map((f) =>
      el('div', { class: 'field' }, el('b', { html: format(f.name) }), el('span', { class: 'body', html: format(f.value) })),
    ),
    embed.footer?.text ? el('div', { class: 'muted', html: format(embed.footer.text) }) : null,
  );
}

/** A value as the "used" header shows it: a long text (a /narrate script) cut, never repeated in full. */
function shortValue(value) {
  const chars = [...String(value)];
  return chars.length > 24 ? `${chars.slice(0, 23).join('')}…` : chars.join('');
}

/** A command as the member's client shows it: `/参加`, `/設定 声 値: x` in Japanese, from its options; a message command by its name. */
function commandSummary({ name, options, summary, kind }) {
  const command = state.commands.find((c) => c.name === name);
  if (kind === 'message' || command?.type === 3) return loc(command) || name;
  if (!command || !options) return summary ?? `/${loc(command) || name}`;
  const parts = [`/${loc(command)}`];
  const walk = (given, declared) => {
    for (const option of given) {
      const spec = declared?.find((d) => d.name === option.name);
      if (Array.isArray(option.options)) {
        parts.push(loc(spec) || option.name);
        walk(option.options, spec?.options);
      } else if ('value' in option) {
        const choice = spec?.choices?.find((c) => c.value === option.value);
        parts.push(`${loc(spec) || option.name}: ${choice ? loc(choice) : shortValue(option.value)}`);
      }
    }
  };
  walk(options, command.options);
  return parts.join(' ');
}

/** A button of a bot message: the member acting now clicks it. */
function renderButton(item, b) {
  // Discord's styles: 1 blurple, 2 grey, 3 green, 4 red.
  const button = el('button', { type: 'button', class: `style-${b.style ?? 2}`, text: b.label });
  button.addEventListener('click', () => {
    post('/api/click', { userId: state.me, messageId: item.id, customId: b.customId, locale: state.locale }).catch(() => {});
  });
  return button;
}

function renderAttachment(a) {
  const size = a.size > 1024 * 1024 ? `${(a.size / 1024 / 1024).toFixed(1)} MB` : `${Math.ceil(a.size / 1024)} KB`;
  return el(
    'div',
    { class: a.contentType.startsWith('image/') ? 'attachment image' : 'attachment' },
    a.contentType.startsWith('audio/') ? el('audio', { controls: true, preload: 'metadata', src: a.url }) : null,
    a.contentType.startsWith('image/') ? el('img', { src: a.url, alt: a.filename, class: 'image' }) : null,
    el('a', { href: `${a.url}?download=1`, download: a.filename, text: `⬇ ${a.filename} (${size})` }),
  );
}

/**
 * Whether the timeline follows new messages: true while the reader is at its bottom. Decided by the
 * reader's scrolling only, not by the list's height: a command form opening (the list shrinks) or a
 * message growing does not make the reader miss what comes next.
 */
const timeline = { following: true, scrolledTo: -1, unseen: 0 };

export function followTimeline() {
  const list = $('#timeline');
  if (!timeline.following) return;
  list.scrollTop = list.scrollHeight;
  timeline.scrolledTo = list.scrollTop;
}

/** Back to the newest message, as Discord's "Jump to present". */
export function jumpToPresent() {
  timeline.following = true;
  followTimeline();
  showUnseen(0);
}

/** The "new messages" bar: how many arrived below while the reader was scrolled up (0: hidden). */
function showUnseen(count) {
  timeline.unseen = count;
  const bar = $('#new-messages');
  bar.hidden = count === 0;
  bar.textContent = T('new_messages', { count });
}

const sizes = new ResizeObserver(followTimeline);

export function watchTimeline() {
  const list = $('#timeline');
  list.addEventListener('scroll', () => {
    // The page's own scroll is not the reader's: its event can arrive after an image grew the list,
    // which would look like the reader having scrolled up.
    if (list.scrollTop === timeline.scrolledTo) return;
    timeline.following = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
    if (timeline.following) showUnseen(0);
  });
  // The list shrinks when the command form opens or the window does, and an entry grows when its image or player
  // gets its height (whenever the browser lays it out, not only at its load event): stay at the bottom if there.
  sizes.observe(list);
  $('#new-messages').addEventListener('click', jumpToPresent);
}

export function upsertItem(item) {
  state.items.set(item.id, item);
  const list = $('#timeline');
  const node = renderItem(item);
  const existing = list.querySelector(`li[data-id="${item.id}"]`);
  if (existing) {
    sizes.unobserve(existing);
    existing.replaceWith(node);
  } else {
    const after = [...list.children].find((li) => (state.items.get(li.dataset.id)?.at ?? 0) > item.at);
    list.insertBefore(node, after ?? null);
    // Something new below, in the channel shown, while the reader is scrolled up: say so.
    if (!timeline.following && !node.hidden && item.channelId === textChannel()?.id) showUnseen(timeline.unseen + 1);
  }
  sizes.observe(node);
  followTimeline();
}

/** Re-words the bar in the chosen language. */
export function renderUnseen() {
  showUnseen(timeline.unseen);
}
