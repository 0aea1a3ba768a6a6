import { ChannelType, PermissionFlagsBits, type Guild, type PermissionsBitField } from 'discord.js';
import { memberCanView } from '../audience/visibility.ts';
import type { SessionFigures, SessionHealth } from '../../ops/session-health.ts';
import type { SpeechScheduler } from '../../speech/queue/scheduler.ts';
import { voiceAudience } from '../../speech/queue/utterance.ts';
import type { Usage } from '../../billing/policy.ts';
import type { RateKind } from '../../tts/limiter/limiter.ts';
import type { WindowLook } from '../../tts/limiter/fair.ts';
import type { SessionConnection, SessionInfo, VoiceManager } from '../../voice/manager.ts';
import type { FateRecord, MessageFates } from './fates.ts';
import type { ContentVerdict, MessageContentWatch } from './message-content.ts';

// What /diagnose looks at, gathered as plain data (commands/diagnose/ words it): the bot's
// permissions where it reads and speaks, whether message content arrives, each account's voice
// connection and its end-to-end encryption, the queue waiting for each call and how well each
// call heard its chat lately, the shared rate window, the characters left, and what became of the
// member's own recent messages. A member sees what concerns them; Manage Server sees the server.

/** The bot's permissions /diagnose checks in a text channel, each of which some feature needs. */
const TEXT_PERMISSIONS = ['ViewChannel', 'SendMessages', 'AttachFiles', 'ReadMessageHistory'] as const;
/** ...and in a voice channel (a stage's "speak" is Request to Speak or Mute Members, as /join decides). */
const VOICE_PERMISSIONS = ['ViewChannel', 'Connect', 'Speak'] as const;
type TextPermission = (typeof TEXT_PERMISSIONS)[number];
type VoicePermission = (typeof VOICE_PERMISSIONS)[number];

/** How a text channel is read now. */
type ChannelReading =
  /** In the voice session of `voiceChannelId` (bound with /join, its voice channel's own chat, or an auto-read channel). */
  | { read: 'voice'; voiceChannelId: string }
  /** Its messages' audio is posted as MP3 files (no voice session reads it). */
  | { read: 'mp3' }
  /** Not read. */
  | { read: 'no' };

/** One listening session as /diagnose shows it. */
export interface SessionView {
  channelId: string;
  accountId: string;
  /** The main account (the one with the commands), else an extra one. */
  main: boolean;
  /**
   * The text channels read in the call (src/domain/read-channels.ts): those the asking member may
   * view, in order, and how many others (never named to someone who cannot view them).
   */
  textChannels: { shown: string[]; hidden: number };
  /** In a stage's audience: connected but not heard. */
  suppressed: boolean;
  connection: SessionConnection | undefined;
  /** Messages accepted and not yet delivered, and when the longest-waiting one arrived. */
  backlog: { waiting: number; oldestAt: number | null };
  health: SessionFigures;
  /** Recoveries of this session's voice connection by cause, where the voice layer counts them. */
  recoveries?: Readonly<Record<string, number>>;
}

export interface DiagnosisReport {
  at: number;
  channelId: string;
  reading: ChannelReading;
  /** The bot's permissions here that are missing. */
  textMissing: TextPermission[];
  /** The voice channel it reads in here (else the member's), with what it lacks there. */
  voice: { channelId: string; stage: boolean; missing: VoicePermission[] } | null;
  content: ContentVerdict;
  /** The session reading this channel, or the one in the member's voice channel. */
  session: SessionView | null;
  member: { chars: Usage; recent: FateRecord[] };
  /** Manage Server: every session of the server, the rate windows and the server's characters. */
  server?: { sessions: SessionView[]; rate: Partial<Record<RateKind, WindowLook>>; chars: Usage };
}

/** What /diagnose is asked about: where, by whom, and the bot's permissions there as Discord sent them. */
interface DiagnoseAsked {
  guild: Guild;
  channelId: string;
  /** A thread's parent (a thread is read for its parent with /reading threads). */
  parentId: string | null;
  userId: string;
  admin: boolean;
  /** The bot's permissions in the channel, from the interaction (null: compute them from the cache). */
  appPermissions: Readonly<PermissionsBitField> | null;
}

interface DiagnosisDeps {
  voice: VoiceManager;
  scheduler: Pick<SpeechScheduler, 'stats'>;
  budget: { usage(scope: { guildId: string; userId?: string }): Promise<Usage> };
  /** Where a channel's messages are read now (the auto-reader's own rule). */
  scopeOf(guildId: string, channelId: string, parentId: string | null): { session: SessionInfo | undefined } | null;
  fates: MessageFates;
  content: MessageContentWatch;
  health: SessionHealth;
  rateWindow(kind: RateKind): Promise<WindowLook | undefined>;
  now(): number;
  /** The main account's user id. */
  mainAccountId(): string | undefined;
  /** The voice layer's recoveries of a session by cause (none counted yet: undefined). */
  recoveries?: (guildId: string, channelId: string) => Readonly<Record<string, number>> | undefined;
}

/** The member's recent messages /diagnose lists. */
const RECENT = 5;

/** Gathers what /diagnose shows; also holds the records "Why wasn't this read?" answers from. */
export class Diagnosis {
  readonly #deps: DiagnosisDeps;

  constructor(deps: DiagnosisDeps) {
    this.#deps = deps;
  }

  get fates(): MessageFates {
    return this.#deps.fates;
  }

  /**
   * A message recorded as arriving blank has text now that Discord sends it whole (a message
   * command's target): proof that message content is withheld, unless that is known already.
   */
  confirmBlank(): void {
    if (this.#deps.content.verdict().state !== 'missing') this.#deps.content.note('blanked', this.#deps.now());
  }

  /** How channel `channelId` (a thread: of `parentId`) is read now. */
  reading(guildId: string, channelId: string, parentId: string | null): ChannelReading {
    const scope = this.#deps.scopeOf(guildId, channelId, parentId);
    if (!scope) return { read: 'no' };
    return scope.session ? { read: 'voice', voiceChannelId: scope.session.channelId } : { read: 'mp3' };
  }

  async report(asked: DiagnoseAsked): Promise<DiagnosisReport> {
    const { guild, channelId, userId } = asked;
    const d = this.#deps;
    const now = d.now();
    const reading = this.reading(guild.id, channelId, asked.parentId);
    const memberVoice = guild.voiceStates.cache.get(userId)?.channelId ?? null;
    const sessionInfo =
      (reading.read === 'voice' ? d.voice.at(guild.id, reading.voiceChannelId) : undefined) ??
      (memberVoice ? d.voice.at(guild.id, memberVoice) : undefined);
    const voiceChannelId = sessionInfo?.channelId ?? memberVoice;
    const member = guild.members.cache.get(userId);
    // The text channels a call reads are named only to a member who may view them (one unknown here views none).
    const canView = (id: string) => {
      const channel = guild.channels.cache.get(id);
      return channel !== undefined && member !== undefined && memberCanView(channel, member);
    };
    const [chars, server] = await Promise.all([
      d.budget.usage({ guildId: guild.id, userId }),
      asked.admin ? this.#server(guild, canView) : undefined,
    ]);
    return {
      at: now,
      channelId,
      reading,
      textMissing: this.#textMissing(guild, channelId, asked.appPermissions),
      voice: voiceChannelId ? this.#voiceMissing(guild, voiceChannelId, sessionInfo?.accountId) : null,
      content: d.content.verdict(),
      session: sessionInfo ? this.#view(guild.id, sessionInfo, now, canView) : null,
      member: { chars, recent: d.fates.recentOf(guild.id, userId, RECENT) },
      ...(server ? { server } : {}),
    };
  }

  /**
   * Every listening session of the server now (the dashboard's health card, an admin's /diagnose);
   * the text channels each reads are named where `canView` says the reader may view them, else counted.
   */
  sessions(guildId: string, canView: (channelId: string) => boolean = () => false): SessionView[] {
    const now = this.#deps.now();
    return this.#deps.voice.sessions(guildId).map((s) => this.#view(guildId, s, now, canView));
  }

  async #server(guild: Guild, canView: (channelId: string) => boolean): Promise<NonNullable<DiagnosisReport['server']>> {
    const d = this.#deps;
    const [standard, advanced, chars] = await Promise.all([
      d.rateWindow('standard').catch(() => undefined),
      d.rateWindow('advanced').catch(() => undefined),
      d.budget.usage({ guildId: guild.id }),
    ]);
    return {
      sessions: this.sessions(guild.id, canView),
      rate: { ...(standard ? { standard } : {}), ...(advanced ? { advanced } : {}) },
      chars,
    };
  }

  #view(guildId: string, s: SessionInfo, now: number, canView: (channelId: string) => boolean): SessionView {
    const stats = this.#deps.scheduler.stats(voiceAudience(s.channelId));
    const recoveries = this.#deps.recoveries?.(guildId, s.channelId);
    return {
      channelId: s.channelId,
      accountId: s.accountId,
      main: s.accountId === this.#deps.mainAccountId(),
      textChannels: {
        shown: s.textChannelIds.filter((id) => canView(id)),
        hidden: s.textChannelIds.filter((id) => !canView(id)).length,
      },
      suppressed: s.suppressed,
      connection: this.#deps.voice.connection(guildId, s.channelId),
      backlog: { waiting: stats.queued + stats.synthesizing + stats.ready, oldestAt: stats.oldestAt },
      health: this.#deps.health.of(guildId, s.channelId, now),
      ...(recoveries ? { recoveries } : {}),
    };
  }

  /** The text permissions the bot lacks in `channelId`: as Discord sent them with the interaction, else from the cache. */
  #textMissing(guild: Guild, channelId: string, sent: Readonly<PermissionsBitField> | null): TextPermission[] {
    const me = guild.members.me;
    const has = sent ?? (me ? guild.channels.cache.get(channelId)?.permissionsFor(me) : undefined);
    // A thread: sending there is Send Messages in Threads, which the bot's role has with Send Messages by default.
    return TEXT_PERMISSIONS.filter((p) => !has?.has(PermissionFlagsBits[p]));
  }

  /** What the account that reads (or would join) `channelId` lacks there, as the gateway's cache says. */
  #voiceMissing(guild: Guild, channelId: string, accountId: string | undefined): NonNullable<DiagnosisReport['voice']> {
    const channel = guild.channels.cache.get(channelId);
    const member = (accountId ? guild.members.cache.get(accountId) : undefined) ?? guild.members.me;
    const stage = channel?.type === ChannelType.GuildStageVoice;
    const has = channel && member ? channel.permissionsFor(member) : undefined;
    const speaks = stage
      ? (has?.has(PermissionFlagsBits.RequestToSpeak) ?? false) || (has?.has(PermissionFlagsBits.MuteMembers) ?? false)
      : (has?.has(PermissionFlagsBits.Speak) ?? false);
    const missing = VOICE_PERMISSIONS.filter((p) => (p === 'Speak' ? !speaks : !has?.has(PermissionFlagsBits[p])));
    return { channelId, stage, missing };
  }
}
