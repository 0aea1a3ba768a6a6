import type { Client, Guild } from 'discord.js';
import { chooseAccount, type AccountChoice, type AccountFacts } from './account-choice.ts';
import { inviteUrl } from '../invite.ts';

/** Where an extra account stands: logging in for the first time, serving, or unable to log in (retried: account-logins.ts). */
type ExtraState = 'starting' | 'serving' | 'down';

/**
 * The bot's accounts in this process: the main one (slash commands, chat, everything members see
 * written) and the extra ones (EXTRA_DISCORD_TOKENS) that only join voice channels, each a Discord
 * application with its own gateway connection over the same shards. An account is known by its
 * bot user id once logged in. An extra account that cannot log in (a wrong or reset token) is in
 * no account choice until it can again: its place holds a new client at each attempt.
 */
export class BotAccounts {
  readonly main: Client;
  readonly #extras: { client: Client; state: ExtraState }[];
  /** `guildId:accountId` -> the joins in progress that took that account, the latest last (the channel it goes to). */
  readonly #claims = new Map<string, { channelId: string }[]>();

  constructor(main: Client, extras: readonly Client[] = []) {
    this.main = main;
    this.#extras = extras.map((client) => ({ client, state: 'starting' }));
  }

  /** Every account's client, the main one first, then the extras in the operator's order. */
  get clients(): readonly Client[] {
    return [this.main, ...this.#extras.map((e) => e.client)];
  }

  /** The extra accounts' clients and states, in the operator's order. */
  get extras(): readonly { client: Client; state: ExtraState }[] {
    return this.#extras.map((e) => ({ ...e }));
  }

  /** Extra account `index` (0-based in EXTRA_DISCORD_TOKENS) is now `client`, in `state`. */
  setExtra(index: number, client: Client, state: ExtraState): void {
    this.#extras[index] = { client, state };
  }

  /** The main account's bot user id ('' before it logged in). */
  get mainId(): string {
    return this.main.user?.id ?? '';
  }

  /** Whether `userId` is one of the bot's accounts. */
  isOurs(userId: string): boolean {
    return this.clients.some((c) => c.user?.id === userId);
  }

  /** The account with bot user id `accountId`; '' (rows remembered before there were several accounts) is the main one. */
  client(accountId: string): Client | undefined {
    if (accountId === '') return this.main;
    return this.clients.find((c) => c.user?.id === accountId);
  }

  /** The guild as `accountId` sees it (its adapter, its own member and permissions), if it is a member there. */
  guild(accountId: string, guildId: string): Guild | undefined {
    return this.client(accountId)?.guilds.cache.get(guildId);
  }

  /**
   * The account for a join to `targetChannelId` (account-choice.ts) and its reservation, in one
   * step: until `release` (once its join was made or given up), the account counts as in that
   * channel, so a join answered meanwhile neither picks it nor moves it away from whoever took it.
   */
  claim(guildId: string, targetChannelId: string, voice: SessionsView): { choice: AccountChoice; release: () => void } {
    const choice = chooseAccount(this.facts(guildId, voice), targetChannelId);
    if (choice.kind === 'none') return { choice, release: () => {} };
    const key = `${guildId}:${choice.accountId}`;
    const claim = { channelId: targetChannelId };
    this.#claims.set(key, [...(this.#claims.get(key) ?? []), claim]);
    const release = () => {
      const rest = (this.#claims.get(key) ?? []).filter((c) => c !== claim);
      if (rest.length > 0) this.#claims.set(key, rest);
      else this.#claims.delete(key);
    };
    return { choice, release };
  }

  /**
   * What /join's choice needs of each account that serves now (account-choice.ts), in order; an
   * account claimed for a join counts as in its channel.
   */
  facts(guildId: string, voice: SessionsView): AccountFacts[] {
    const serving = [this.main, ...this.#extras.filter((e) => e.state === 'serving').map((e) => e.client)];
    return serving
      .filter((c) => c.user)
      .map((c) => ({
        id: c.user!.id,
        inGuild: c.guilds.cache.has(guildId),
        channelId:
          this.#claims.get(`${guildId}:${c.user!.id}`)?.at(-1)?.channelId ?? voice.ofAccount(guildId, c.user!.id)?.channelId ?? null,
        sessions: voice.countOf(c.user!.id),
      }));
  }

  /** The invite link of `accountId` for the server it is missing from. */
  inviteFor(accountId: string, guildId: string): string | undefined {
    const application = this.client(accountId)?.application;
    return application ? inviteUrl(application.id, guildId) : undefined;
  }
}

/** The voice sessions as the account choice reads them (voice/manager.ts). */
interface SessionsView {
  ofAccount(guildId: string, accountId: string): { channelId: string } | undefined;
  countOf(accountId: string): number;
}
