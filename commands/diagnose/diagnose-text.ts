import type { DiagnosisReport, SessionView } from '../../src/discord/diagnosis/diagnosis.ts';
import { FATE_DEFAULTS } from '../../src/discord/diagnosis/fates.ts';
import { formatDate, t, type Lang, type MessageKey } from '../../src/i18n/texts.ts';
import type { Usage } from '../../src/billing/policy.ts';
import type { WindowLook } from '../../src/tts/limiter/fair.ts';
import { VOICE_RECOVERY_CAUSES, type VoiceRecoveryCause } from '../../src/voice/session.ts';
import { describeFate, messageLink, shownTime, type FateWording } from './fate-text.ts';

// /diagnose's answer in words: one line per check, ✅ when it is fine, ❌ with what it breaks when
// it is not, so a member sees at a glance why the bot is silent. Fits one Discord message.

/** Discord's limit for a message's content. */
const MAX_CONTENT = 2000;
/** A session's details under it: an ideographic space, which Discord keeps at a line's start. */
const INDENT = '\u3000';

/** The report as the lines of /diagnose's answer. */
export function diagnosisText(report: DiagnosisReport, guildId: string, w: FateWording): string {
  const { lang, names } = w;
  const lines: string[] = [t(lang, 'diagnose.title', { channel: `<#${report.channelId}>` })];
  const r = report.reading;
  if (r.read === 'voice') lines.push(t(lang, 'diagnose.reading_voice', { voice: `<#${r.voiceChannelId}>` }));
  else if (r.read === 'mp3') lines.push(t(lang, 'diagnose.reading_mp3'));
  else lines.push(t(lang, 'diagnose.reading_no', { join: names.join ?? '/join', autoread: names.autoread ?? '/autoread' }));
  lines.push(
    ...missingLines(
      lang,
      `<#${report.channelId}>`,
      report.textMissing.map((p) => `diagnose.perm_${p}` as MessageKey),
    ),
  );
  if (report.voice) {
    const stage = report.voice.stage;
    const keys = report.voice.missing.map(
      (p) => (p === 'Speak' && stage ? 'diagnose.vperm_Speak_stage' : `diagnose.vperm_${p}`) as MessageKey,
    );
    lines.push(...missingLines(lang, `<#${report.voice.channelId}>`, keys));
  } else lines.push(t(lang, 'diagnose.no_voice'));
  const c = report.content;
  if (c.state === 'arriving') lines.push(t(lang, 'diagnose.content_ok', { when: shownTime(c.lastAt, 'R') }));
  else if (c.state === 'missing') lines.push(t(lang, 'diagnose.content_missing', { count: c.blanked, when: shownTime(c.since, 'R') }));
  else lines.push(t(lang, 'diagnose.content_unknown'));
  if (report.session) lines.push(...sessionLines(lang, report.session, report.at));
  lines.push(charsLine(lang, 'diagnose.chars_member', report.member.chars));
  lines.push(t(lang, 'diagnose.recent'));
  const hours = FATE_DEFAULTS.keepMs / 3_600_000;
  if (report.member.recent.length === 0) lines.push(t(lang, 'diagnose.recent_none', { hours }));
  for (const f of report.member.recent)
    lines.push(`・${messageLink(guildId, f.channelId, f.messageId)} ${describeFate(f, { ...w, own: true })}`);
  const server = report.server;
  if (server) {
    lines.push('', t(lang, 'diagnose.server'));
    if (server.sessions.length === 0) lines.push(t(lang, 'diagnose.sessions_none'));
    for (const s of server.sessions) lines.push(...sessionLines(lang, s, report.at));
    lines.push(...rateLines(lang, server.rate, report.at, names.narrate ?? '/narrate'));
    lines.push(charsLine(lang, 'diagnose.chars_server', server.chars));
  } else lines.push('', t(lang, 'diagnose.admins_see_more'));
  return fit(lines);
}

/** ✅ all there, or ❌ and one line per missing permission saying what it breaks. */
function missingLines(lang: Lang, channel: string, missing: MessageKey[]): string[] {
  if (missing.length === 0) return [t(lang, 'diagnose.perms_ok', { channel })];
  return [t(lang, 'diagnose.perms_missing', { channel }), ...missing.map((key) => `・${t(lang, key)}`)];
}

/** One session: its connection and encryption, the text channels it reads, what waits, and how well it heard its chat lately. */
function sessionLines(lang: Lang, s: SessionView, now: number): string[] {
  const status = s.connection?.status;
  const state = s.suppressed
    ? t(lang, 'diagnose.state_suppressed')
    : t(lang, status ? (`diagnose.state_${status}` as MessageKey) : 'diagnose.state_gone');
  const e2ee = t(lang, s.connection?.privacyCode ? 'diagnose.dave_on' : 'diagnose.dave_off');
  const lines = [t(lang, 'diagnose.session', { voice: `<#${s.channelId}>`, account: `<@${s.accountId}>`, state, e2ee })];
  const { shown, hidden } = s.textChannels;
  if (shown.length + hidden > 0) {
    const channels = [
      ...shown.map((id) => `<#${id}>`),
      ...(hidden > 0 ? [t(lang, 'diagnose.session_channels_hidden', { count: hidden })] : []),
    ];
    lines.push(`${INDENT}${t(lang, 'diagnose.session_channels', { channels: channels.join(lang === 'ja' ? '、' : ', ') })}`);
  }
  const b = s.backlog;
  lines.push(
    b.waiting > 0 && b.oldestAt !== null
      ? `${INDENT}${t(lang, 'diagnose.backlog', { count: b.waiting, seconds: Math.max(0, Math.round((now - b.oldestAt) / 1000)) })}`
      : `${INDENT}${t(lang, 'diagnose.backlog_none')}`,
  );
  const h = s.health;
  lines.push(
    h.messages > 0
      ? `${INDENT}${t(lang, 'diagnose.health', {
          heard: h.heardWithin,
          total: h.messages,
          p95: h.p95WaitMs === null ? '—' : (h.p95WaitMs / 1000).toFixed(1),
        })}`
      : `${INDENT}${t(lang, 'diagnose.health_none')}`,
  );
  const recoveries = Object.entries(s.recoveries ?? {}).filter(([, n]) => n > 0);
  if (recoveries.length > 0)
    lines.push(
      `${INDENT}${t(lang, 'diagnose.recoveries', { list: recoveries.map(([cause, n]) => recoveryText(lang, cause, n)).join(lang === 'ja' ? '、' : ', ') })}`,
    );
  return lines;
}

function rateLines(lang: Lang, rate: Partial<Record<'standard' | 'advanced', WindowLook>>, now: number, narrate: string): string[] {
  if (!rate.standard) return [t(lang, 'diagnose.rate_unknown')];
  const next = (w: WindowLook) => (w.nextFreeAt <= now ? t(lang, 'diagnose.rate_now') : shownTime(w.nextFreeAt, 'R'));
  const left = (w: WindowLook) => Math.max(0, w.limit - w.used);
  const lines = [t(lang, 'diagnose.rate', { left: left(rate.standard), limit: rate.standard.limit, next: next(rate.standard) })];
  if (rate.advanced)
    lines.push(
      `${INDENT}${t(lang, 'diagnose.rate_advanced', { narrate, left: left(rate.advanced), limit: rate.advanced.limit, next: next(rate.advanced) })}`,
    );
  return lines;
}

function charsLine(lang: Lang, key: 'diagnose.chars_member' | 'diagnose.chars_server', u: Usage): string {
  return t(lang, key, { left: Math.max(0, u.limit - u.used), limit: u.limit, resets: formatDate(lang, u.resetsAt) });
}

/** The lines within Discord's limit: whole lines, the last ones left out (with …) when they do not fit. */
function fit(lines: readonly string[]): string {
  let out = '';
  for (const line of lines) {
    const next = out ? `${out}\n${line}` : line;
    if (next.length > MAX_CONTENT - 2) return `${out}\n…`;
    out = next;
  }
  return out;
}

/** One cause of recovery and its count, in the words the dashboard uses too ("再参加 ×2"). */
function recoveryText(lang: Lang, cause: string, count: number): string {
  return `${(VOICE_RECOVERY_CAUSES as readonly string[]).includes(cause) ? t(lang, `dashboard.recovery_${cause as VoiceRecoveryCause}`) : cause} ×${count}`;
}
