import { ChannelType, PermissionFlagsBits, type Client, type Guild } from 'discord.js';
import type { Repositories } from '../../db/repositories.ts';
import type { Logger } from '../../util/log.ts';
import { audienceCanView } from '../audience/visibility.ts';
import { guildLang, t, type Lang } from '../../i18n/texts.ts';

/** How long setting or clearing a status may hold up a /leave. */
const STATUS_TIMEOUT_MS = 3_000;
/** Discord's longest voice channel status (PUT /channels/{id}/voice-status). */
const STATUS_MAX = 500;

/**
 * The status naming `named` (channel names, in order) and counting `unnamed` more: the names that
 * do not fit in Discord's 500 characters are counted instead; with none named, no name at all.
 */
export function readingStatus(lang: Lang, named: readonly string[], unnamed: number): string {
  const separator = lang === 'ja' ? '、' : ', ';
  for (let shown = named.length; shown > 0; shown--) {
    const channel = named
      .slice(0, shown)
      .map((name) => `#${name}`)
      .join(separator);
    const more = unnamed + named.length - shown;
    const status = more > 0 ? t(lang, 'voice.status_reading_more', { channel, count: more }) : t(lang, 'voice.status_reading', { channel });
    if (status.length <= STATUS_MAX) return status;
  }
  return t(lang, 'voice.status_reading_unnamed');
}

/**
 * The voice channel status ("📖 #雑談、#ゲーム を読み上げ中") shown under a voice channel while the bot
 * reads text channels there, in the server's language (a channel named only when everyone who
 * sees the voice channel may view it, else counted), and cleared before the bot leaves
 * (Discord asks for Manage Channels to change the status of a channel one is not in). Only where
 * the bot has Set Voice Channel Status: without it nothing is sent and nothing above debug is
 * logged, as a missing nicety is not a fault. Stages have no status (their topic is the stage's).
 */
export class VoiceChannelStatus {
  readonly #clientOf: (accountId: string) => Client | undefined;
  readonly #repos: Pick<Repositories, 'guildSettings'>;
  readonly #logger: Logger;

  constructor(deps: {
    client: Client;
    /** The account in the voice channel sets its status (default: `client` for every account). */
    clientOf?: (accountId: string) => Client | undefined;
    repos: Pick<Repositories, 'guildSettings'>;
    logger: Logger;
  }) {
    this.#clientOf = deps.clientOf ?? (() => deps.client);
    this.#repos = deps.repos;
    this.#logger = deps.logger;
  }

  /** Shows that `textChannelIds` are being read in the voice channel `channelId` (by `accountId`, the account there). */
  async show(guildId: string, channelId: string, textChannelIds: readonly string[], accountId = ''): Promise<void> {
    const guild = this.#clientOf(accountId)?.guilds.cache.get(guildId);
    const texts = textChannelIds.flatMap((id) => guild?.channels.cache.get(id) ?? []);
    if (!guild || texts.length === 0) return;
    const lang = guildLang(this.#repos.guildSettings.get(guildId).locale);
    // Everyone who sees the voice channel sees its status, as a post there: a channel (or thread)
    // not every one of them may view is not named, only counted. A private thread never is (its members alone see it).
    const named = texts.filter((text) => audienceCanView(guild, text, { voiceChannelId: null, postChannelId: channelId }));
    const status = readingStatus(
      lang,
      named.map((text) => text.name),
      texts.length - named.length,
    );
    await this.#put(guild, channelId, status);
  }

  /** Clears the status the bot (`accountId`, the account there) set on `channelId` (call it before leaving). */
  async clear(guildId: string, channelId: string, accountId = ''): Promise<void> {
    const guild = this.#clientOf(accountId)?.guilds.cache.get(guildId);
    if (guild) await this.#put(guild, channelId, '');
  }

  async #put(guild: Guild, channelId: string, status: string): Promise<void> {
    const channel = guild.channels.cache.get(channelId);
    const me = guild.members.me;
    if (channel?.type !== ChannelType.GuildVoice || !me) return;
    if (!channel.permissionsFor(me).has(PermissionFlagsBits.SetVoiceChannelStatus)) {
      this.#logger.debug({ guildId: guild.id, channelId }, 'no Set Voice Channel Status permission; status left alone');
      return;
    }
    // discord.js has no method for this endpoint yet: https://discord.com/developers/docs (PUT /channels/{id}/voice-status).
    await guild.client.rest
      .put(`/channels/${channelId}/voice-status`, { body: { status }, signal: AbortSignal.timeout(STATUS_TIMEOUT_MS) })
      .catch((error: unknown) =>
        this.#logger.debug({ err: error, guildId: guild.id, channelId }, 'could not set the voice channel status'),
      );
  }
}
