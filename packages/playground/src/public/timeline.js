// The channel's timeline: members' messages, the bot's messages and replies (embeds, buttons,
// attachments), the commands members ran; following new messages while the reader is at the bottom.
import { $, el, format, loc, nameOf, post, state, T, textChannel, time } from './state.js';

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

export function renderItem(item) {
  const at = el('span', { class: 'time', text: time(item.at) });
  if (item.type === 'member') {
    return el(
      'li',
      { 'data-id': item.id, 'data-channel': item.channelId, class: item.deleted ? 'member deleted' : 'member' },
      el('div', {}, el('span', { class: 'author', text: nameOf(item.authorId) }), at),
      el('div', { class: 'body', html: format(item.content) }),
      item.reactions.length
        ? el('div', { class: 'reactions' }, ...item.reactions.map((r) => el('span', { text: decodeURIComponent(r) })))
        : null,
    );
  }
  if (item.type === 'command') {
    return el(
      'li',
      { 'data-id': item.id, 'data-channel': item.channelId, class: 'command' },
      el(
        'div',
        { class: 'command-use' },
        T('used', { name: nameOf(item.userId), command: '\u0000' })
          .split('\u0000')
          .flatMap((part, i) => (i ? [el('code', { text: commandSummary(item) }), part] : [part])),
        ' ',
        el('span', { class: 'muted', text: `(${item.locale})` }),
      ),
      item.noResponse ? el('div', { class: 'error', text: T('no_response') }) : null,
    );
  }
  const context = [];
  if (item.interaction)
    context.push(
      el('div', {
        class: 'context',
        text: T('interaction_used', { name: nameOf(item.interaction.userId), command: commandSummary(item.interaction) }),
      }),
    );
  if (item.replyTo) {
    const original = state.items.get(item.replyTo);
    context.push(
      el('div', {
        class: 'context',
        text: T('replying_to', {
          who: original?.type === 'member' ? `${nameOf(original.authorId)}: ${original.content.slice(0, 60)}` : T('a_message'),
        }),
      }),
    );
  }
  const owner = nameOf(item.interaction ? item.interaction.userId : state.me);
  return el(
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
}

export function renderEmbed(embed) {
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

/** A command as the member's client shows it: `/参加`, `/設定 声 値: x` in Japanese, from its options. */
export function commandSummary({ name, options, summary }) {
  const command = state.commands.find((c) => c.name === name);
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
        parts.push(`${loc(spec) || option.name}: ${choice ? loc(choice) : String(option.value)}`);
      }
    }
  };
  walk(options, command.options);
  return parts.join(' ');
}

/** A button of a bot message: the member acting now clicks it. */
export function renderButton(item, b) {
  const button = el('button', { type: 'button', text: b.label });
  button.addEventListener('click', () => {
    post('/api/click', { userId: state.me, messageId: item.id, customId: b.customId, locale: state.locale }).catch(() => {});
  });
  return button;
}

export function renderAttachment(a) {
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
export const timeline = { following: true, scrolledTo: -1 };

export function followTimeline() {
  const list = $('#timeline');
  if (!timeline.following) return;
  list.scrollTop = list.scrollHeight;
  timeline.scrolledTo = list.scrollTop;
}

export function watchTimeline() {
  const list = $('#timeline');
  list.addEventListener('scroll', () => {
    // The page's own scroll is not the reader's: its event can arrive after an image grew the list,
    // which would look like the reader having scrolled up.
    if (list.scrollTop === timeline.scrolledTo) return;
    timeline.following = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
  });
  // The list shrinks when the command form opens or the window does: stay at the bottom if there.
  new ResizeObserver(followTimeline).observe(list);
}

export function upsertItem(item) {
  state.items.set(item.id, item);
  const list = $('#timeline');
  const node = renderItem(item);
  const existing = list.querySelector(`li[data-id="${item.id}"]`);
  if (existing) existing.replaceWith(node);
  else {
    const after = [...list.children].find((li) => (state.items.get(li.dataset.id)?.at ?? 0) > item.at);
    list.insertBefore(node, after ?? null);
  }
  followTimeline();
  // An image or a player gets its height later: follow again once it has it.
  for (const media of node.querySelectorAll('img, audio'))
    media.addEventListener(media.tagName === 'IMG' ? 'load' : 'loadedmetadata', followTimeline, { once: true });
}
