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

/** The billing period's characters as /usage shows them: used of the limit, a bar per day and per channel, the biggest spenders. */
export function usageCard(u, server) {
  const dayLabel = new Intl.DateTimeFormat(state.lang === 'ja' ? 'ja-JP' : 'en-US', { month: 'numeric', day: 'numeric', timeZone: 'UTC' });
  const max = Math.max(1, ...u.days.map((d) => d.chars));
  const bars = h(
    'ol',
    { class: 'bars', 'aria-label': tr(server ? 'usage_by_day_server' : 'usage_by_day_member') },
    u.days.map((d) => {
      const bar = h('span', { class: 'day-bar' });
      bar.style.setProperty('--h', `${Math.round((d.chars / max) * 100)}%`);
      return h(
        'li',
        { title: `${dayLabel.format(d.dayStart)}: ${n(d.chars)}` },
        bar,
        h('span', { class: 'sr', text: `${dayLabel.format(d.dayStart)}: ${n(d.chars)}` }),
      );
    }),
  );
  const period = `${dayLabel.format(u.period.start)} – ${dayLabel.format(u.period.end - 86_400_000)}`;
  return h(
    'section',
    { class: 'card' },
    h('h3', { text: tr(server ? 'usage_server' : 'usage_mine') }),
    h('p', { text: tr('usage_line', { used: n(u.usage.used), limit: n(u.usage.limit) }) }),
    h('p', { class: 'hint', text: tr('usage_period', { period }) }),
    bars,
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

export function auditLog(entries, channels, roles, members) {
  const member = (id) => members.find((m) => m.id === id)?.name ?? id;
  const role = (id) => `@${roles.find((r) => r.id === id)?.name ?? id}`;
  const channel = (id) => `#${channels.find((c) => c.id === id)?.name ?? id}`;
  if (entries.length === 0) return h('section', { class: 'card' }, h('p', { text: tr('audit_empty') }));
  const when = new Intl.DateTimeFormat(state.lang === 'ja' ? 'ja-JP' : 'en-US', { dateStyle: 'short', timeStyle: 'short' });
  const fields = (d) =>
    Object.entries(d)
      .map(([k, v]) => `${k} = ${k.endsWith('RoleId') && v ? role(v) : k.endsWith('ChannelId') && v ? channel(v) : (v ?? '-')}`)
      .join(', ');
  const what = (e) => {
    const d = e.detail;
    if (e.action === 'dictionary.add') return tr('action_dictionary_add', d);
    if (e.action === 'dictionary.remove') return tr('action_dictionary_remove', d);
    if (e.action === 'dictionary.import') return tr('action_dictionary_import', d);
    if (e.action === 'mute' || e.action === 'unmute') return tr(`action_${e.action}`, { member: member(d.memberId) });
    if (e.action === 'controls') return tr('action_controls', { fields: fields(d) });
    if (e.action === 'reading') return tr('action_reading', { fields: fields(d) });
    if (e.action.startsWith('reading.')) return tr(`action_${e.action.replaceAll('.', '_')}`, { id: d.botId, role: role(d.roleId) });
    if (e.action === 'roles.set') return tr('action_roles_set', { role: role(d.roleId), chars: n(d.chars) });
    if (e.action === 'roles.remove') return tr('action_roles_remove', { role: role(d.roleId) });
    if (e.action === 'autoread.add') return tr('action_autoread_add', { channel: channel(d.channelId) });
    if (e.action === 'autoread.remove') return tr('action_autoread_remove', { channel: channel(d.channelId) });
    return tr('action_settings', { fields: fields(d) });
  };
  return h(
    'section',
    { class: 'card' },
    h('h3', { text: tr('tab_audit') }),
    h(
      'div',
      { class: 'scroll' },
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
              h('td', { text: when.format(e.at) }),
              h('td', { text: `${e.name} (${tr(e.via === 'dashboard' ? 'via_dashboard' : 'via_command')})` }),
              h('td', { text: what(e) }),
            ),
          ),
        ),
      ),
    ),
  );
}

/** Each voice channel read now (GET /guilds/:id/health): connected and encrypted, what waits, how much was heard within 20 s lately. */
export function healthCard(sessions) {
  const seconds = (s) => (s === null ? '—' : tr('health_seconds', { seconds: s }));
  const rows = sessions.map((s) =>
    h(
      'tr',
      {},
      h('td', { text: `🔊 ${s.name ?? tr('health_channel_hidden')}${s.main ? '' : ` (${tr('health_extra')})`}` }),
      h('td', {
        text: `${tr(s.connected ? 'health_connected' : 'health_not_connected')} · ${tr(s.encrypted ? 'health_e2ee' : 'health_not_e2ee')}`,
      }),
      h('td', { text: s.waiting > 0 ? `${n(s.waiting)} (${seconds(s.oldestWaitS)})` : '0' }),
      h('td', { text: s.messages > 0 ? tr('health_heard_of', { heard: n(s.heardWithin), total: n(s.messages) }) : '—' }),
      h('td', { text: seconds(s.p95WaitS) }),
      h('td', {
        text:
          Object.entries(s.recoveries)
            .map(([cause, count]) => `${cause} ${n(count)}`)
            .join(', ') || '—',
      }),
    ),
  );
  const head = ['health_channel', 'health_connection', 'health_waiting', 'health_heard', 'health_p95', 'health_recoveries'];
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
