/**
 * Which bot account answers a /join: a pure function of facts read from Discord and the voice
 * sessions (voice-control.ts reads them). A Discord account is in at most one voice channel per
 * server, so a server reads several voice channels at once through several accounts
 * (EXTRA_DISCORD_TOKENS), each a Discord application invited to the server.
 */

/** One bot account as the rule needs it, in the order the operator listed them (the main account first). */
export interface AccountFacts {
  /** The account's bot user id. */
  id: string;
  /** The account is a member of the server. */
  inGuild: boolean;
  /** The voice channel it is in in this server, or null. */
  channelId: string | null;
  /** Its voice sessions in every server together: how busy it is. */
  sessions: number;
}

/** What /join does. */
export type AccountChoice =
  /** An account is already in the target channel: it stays (the text channel is bound to it). */
  | { kind: 'there'; accountId: string }
  /** A free account joins: present in the server, in none of its voice channels, the least busy. */
  | { kind: 'join'; accountId: string }
  /** The only account there is moves from the channel it is in (the playback rule decides whether it may). */
  | { kind: 'move'; accountId: string; fromChannelId: string }
  /** No account is free here: `inviteAccountId` is one not yet in the server (its invite link is the answer), or null. */
  | { kind: 'none'; inviteAccountId: string | null };

/**
 * GIVEN the accounts and the target voice channel THEN the account for it: the one already there;
 * else the least busy free account of the server (ties: the operator's order, the main account
 * first); else, with a single account, that one moves (the only way one account reads elsewhere);
 * else none, naming an account that could be invited.
 */
export function chooseAccount(accounts: readonly AccountFacts[], targetChannelId: string): AccountChoice {
  const there = accounts.find((a) => a.inGuild && a.channelId === targetChannelId);
  if (there) return { kind: 'there', accountId: there.id };
  const free = accounts.filter((a) => a.inGuild && a.channelId === null);
  if (free.length > 0) {
    const least = free.reduce((best, a) => (a.sessions < best.sessions ? a : best));
    return { kind: 'join', accountId: least.id };
  }
  const [only] = accounts;
  if (accounts.length === 1 && only?.inGuild && only.channelId !== null)
    return { kind: 'move', accountId: only.id, fromChannelId: only.channelId };
  return { kind: 'none', inviteAccountId: accounts.find((a) => !a.inGuild)?.id ?? null };
}
