// The dashboard's read-only views: usage of the billing period, the voice channels read now, and the audit log.
import { h, n, state, tr } from './dom.js';

/** The period's characters per text channel, most first, each with its share as a bar; rows with no channel are other/unknown, or the channels one cannot view. */
function channelTable(channels) {
  if (!channels.length) return null;
  const max = Math.max(1, ...channels.map((c) => c.chars));
  return h(
    'table',
    { class: 'channels' },
    h('caption', { text: tr('usage_by_channel') }),
    h(
      'tbody',
      {},
      channels.map((c) => {
        const bar = h('span', { class: 'channel-bar' });
        bar.style.setProperty('--w', `${Math.round((c.chars / max) * 100)}%`);
        return h(
          'tr',
          {},
          h('td', { text: c.hidden ? tr('usage_channel_hidden') : c.channelId === null ? tr('usage_channel_unknown') : `#${c.name}` }),
          h('td', { text: n(c.chars) }),
          h('td', { class: 'bar-cell' }, bar),
        );
      }),
    ),
  );
}

/** The top of a chart's scale: 1, 2 or 5 times a power of ten, at least `max`. */
function niceTop(max) {
  const power = 10 ** Math.floor(Math.log10(max));
  return [1, 2, 5, 10].map((m) => m * power).find((top) => top >= max);
}

/** A bar per day on a labelled scale (characters a day, 0 to a round top), a date under every seventh day. */
function dayChart(days, label) {
  const dayLabel = new Intl.DateTimeFormat(state.lang === 'ja' ? 'ja-JP' : 'en-US', { month: 'numeric', day: 'numeric', timeZone: 'UTC' });
  const top = niceTop(Math.max(1, ...days.map((d) => d.chars)));
  const bars = h(
    'ol',
    { class: 'bars', 'aria-label': label },
    days.map((d, i) => {
      const bar = h('span', { class: d.chars > 0 ? 'day-bar some' : 'day-bar' });
      bar.style.setProperty('--h', `${(d.chars / top) * 100}%`);
      const said = `${dayLabel.format(d.dayStart)}: ${n(d.chars)}`;
      return h(
        'li',
        { title: said },
        bar,
        h('span', { class: 'sr', text: said }),
        i % 7 === 0 ? h('span', { class: 'tick', 'aria-hidden': 'true', text: dayLabel.format(d.dayStart) }) : null,
      );
    }),
  );
  return h(
    'figure',
    { class: 'chart' },
    h('figcaption', { class: 'hint', text: tr('usage_axis') }),
    h(
      'div',
      { class: 'scale', 'aria-hidden': 'true' },
      [top, top / 2, 0].map((v) => h('span', { text: n(v) })),
    ),
    bars,
  );
}

/** The billing period's characters as /usage shows them: used of the limit, a bar per day and per channel, the biggest spenders. */
export function usageCard(u, server) {
  const dayLabel = new Intl.DateTimeFormat(state.lang === 'ja' ? 'ja-JP' : 'en-US', { month: 'numeric', day: 'numeric', timeZone: 'UTC' });
  const period = `${dayLabel.format(u.period.start)} – ${dayLabel.format(u.period.end - 86_400_000)}`;
  // A period with nothing spent says so, rather than a row of empty bars.
  const spent = u.days.some((d) => d.chars > 0);
  return h(
    'section',
    { class: 'card' },
    h('h3', { text: tr(server ? 'usage_server' : 'usage_mine') }),
    h('p', { text: tr('usage_line', { used: n(u.usage.used), limit: n(u.usage.limit) }) }),
    h('p', { class: 'hint', text: tr('usage_period', { period }) }),
    spent
      ? dayChart(u.days, tr(server ? 'usage_by_day_server' : 'usage_by_day_member'))
      : h('p', { class: 'empty', text: tr('usage_none') }),
    channelTable(u.channels),
    u.top.length
      ? h(
          'table',
          {},
          h('caption', { text: tr('usage_top') }),
          h(
            'tbody',
            {},
            u.top.map((s) => h('tr', {}, h('td', { text: s.name }), h('td', { text: n(s.used) }))),
          ),
        )
      : null,
  );
}

/** The audit log: when, who (and through which door), and what changed, as the server words it in the page's language. */
export function auditLog(entries) {
  if (entries.length === 0) return h('section', { class: 'card' }, h('p', { text: tr('audit_empty') }));
  const when = new Intl.DateTimeFormat(state.lang === 'ja' ? 'ja-JP' : 'en-US', { dateStyle: 'short', timeStyle: 'short' });
  return h(
    'section',
    { class: 'card' },
    h('h3', { text: tr('tab_audit') }),
    h(
      'table',
      { class: 'audit' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['audit_when', 'audit_who', 'audit_what'].map((k) => h('th', { scope: 'col', text: tr(k) })),
        ),
      ),
      h(
        'tbody',
        {},
        entries.map((e) =>
          h(
            'tr',
            {},
            h('td', { class: 'when', text: when.format(e.at) }),
            h(
              'td',
              { class: 'who' },
              e.name,
              ' ',
              h('span', { class: 'via', text: `(${tr(e.via === 'dashboard' ? 'via_dashboard' : 'via_command')})` }),
            ),
            h('td', { class: 'what', text: e.text }),
          ),
        ),
      ),
    ),
  );
}

/** Each voice channel read now (GET /guilds/:id/health): the text channels it reads, connected and encrypted, what waits, how much was heard within 20 s lately. */
export function healthCard(sessions) {
  const seconds = (s) => (s === null ? '—' : tr('health_seconds', { seconds: s }));
  const separator = state.lang === 'ja' ? '、' : ', ';
  const rows = sessions.map((s) =>
    h(
      'tr',
      {},
      h('td', { text: `🔊 ${s.name ?? tr('health_channel_hidden')}${s.main ? '' : ` (${tr('health_extra')})`}` }),
      h('td', {
        text:
          [
            ...s.textChannels.map((c) => `#${c.name}`),
            ...(s.hiddenTextChannels > 0 ? [tr('health_text_hidden', { count: n(s.hiddenTextChannels) })] : []),
          ].join(separator) || '—',
      }),
      h('td', {
        text: `${tr(s.connected ? 'health_connected' : 'health_not_connected')} · ${tr(s.encrypted ? 'health_e2ee' : 'health_not_e2ee')}`,
      }),
      h('td', { text: s.waiting > 0 ? `${n(s.waiting)} (${seconds(s.oldestWaitS)})` : '0' }),
      h('td', { text: s.messages > 0 ? tr('health_heard_of', { heard: n(s.heardWithin), total: n(s.messages) }) : '—' }),
      h('td', { text: seconds(s.p95WaitS) }),
      h('td', {
        text:
          Object.entries(s.recoveries)
            .filter(([, count]) => count > 0)
            .map(([cause, count]) => `${tr(`recovery_${cause}`)} ×${n(count)}`)
            .join(separator) || '—',
      }),
    ),
  );
  const head = [
    'health_channel',
    'health_text_channels',
    'health_connection',
    'health_waiting',
    'health_heard',
    'health_p95',
    'health_recoveries',
  ];
  return h(
    'section',
    { class: 'card', id: 'voice-health' },
    h('h3', { text: tr('health_title') }),
    h('p', { class: 'hint', text: tr('health_hint') }),
    sessions.length
      ? h(
          'table',
          { class: 'health' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              head.map((k) => h('th', { scope: 'col', text: tr(k) })),
            ),
          ),
          h('tbody', {}, rows),
        )
      : h('p', { text: tr('health_none') }),
  );
}
