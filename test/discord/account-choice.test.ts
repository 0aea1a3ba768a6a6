import type { Client } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { BotAccounts } from '../../src/discord/voice-control/accounts.ts';
import { chooseAccount, type AccountFacts } from '../../src/discord/voice-control/account-choice.ts';

// Which bot account answers /join (GIVEN/THEN): an account is in one voice channel per server.
const TARGET = 'vc-target';
const account = (id: string, over: Partial<AccountFacts> = {}): AccountFacts => ({
  id,
  inGuild: true,
  channelId: null,
  sessions: 0,
  ...over,
});

describe('GIVEN a /join in a voice channel', () => {
  it('THEN an account already in that channel stays there, whatever else is free', () => {
    const accounts = [account('main'), account('extra', { channelId: TARGET, sessions: 5 })];
    expect(chooseAccount(accounts, TARGET)).toEqual({ kind: 'there', accountId: 'extra' });
  });

  it('THEN a free account of the server joins: never one in another voice channel there, nor one not in the server', () => {
    const accounts = [account('main', { channelId: 'vc-a' }), account('absent', { inGuild: false }), account('extra')];
    expect(chooseAccount(accounts, TARGET)).toEqual({ kind: 'join', accountId: 'extra' });
  });

  it('THEN among free accounts the least busy (sessions in every server); ties go to the operator order, main first', () => {
    expect(
      chooseAccount([account('main', { sessions: 3 }), account('e1', { sessions: 1 }), account('e2', { sessions: 1 })], TARGET),
    ).toEqual({
      kind: 'join',
      accountId: 'e1',
    });
    expect(chooseAccount([account('main', { sessions: 1 }), account('e1', { sessions: 1 })], TARGET)).toEqual({
      kind: 'join',
      accountId: 'main',
    });
  });

  it('THEN with no account free and one not in the server, none joins and that one is named for its invite link', () => {
    const accounts = [account('main', { channelId: 'vc-a' }), account('e1', { channelId: 'vc-b' }), account('e2', { inGuild: false })];
    expect(chooseAccount(accounts, TARGET)).toEqual({ kind: 'none', inviteAccountId: 'e2' });
  });

  it('THEN with every account in the server busy, none joins and there is nobody to invite', () => {
    const accounts = [account('main', { channelId: 'vc-a' }), account('e1', { channelId: 'vc-b' })];
    expect(chooseAccount(accounts, TARGET)).toEqual({ kind: 'none', inviteAccountId: null });
  });

  it('THEN a bot with a single account moves it from its channel, as before there were extra accounts', () => {
    expect(chooseAccount([account('main', { channelId: 'vc-a' })], TARGET)).toEqual({
      kind: 'move',
      accountId: 'main',
      fromChannelId: 'vc-a',
    });
  });
});

describe('GIVEN joins answered at the same time (BotAccounts.claim)', () => {
  const GUILD = 'g1';
  const client = (id: string) => ({ user: { id }, guilds: { cache: new Map([[GUILD, {}]]) } }) as unknown as Client;
  const accounts = new BotAccounts(client('main'), [client('extra')]);
  accounts.setExtra(0, client('extra'), 'serving'); // logged in (an extra account starts as 'starting')
  // No voice session yet: each join is still connecting.
  const noSessions = { ofAccount: () => undefined, countOf: () => 0 };

  it('THEN the second takes another account: the first one is reserved from the moment it was chosen', () => {
    const first = accounts.claim(GUILD, 'vc-a', noSessions);
    const second = accounts.claim(GUILD, 'vc-b', noSessions);
    expect([first.choice, second.choice]).toEqual([
      { kind: 'join', accountId: 'main' },
      { kind: 'join', accountId: 'extra' },
    ]);
    // A third, to a third channel, finds none free (nothing to invite), rather than moving either.
    expect(accounts.claim(GUILD, 'vc-c', noSessions).choice).toEqual({ kind: 'none', inviteAccountId: null });
    // One to a channel already taken joins the account that took it; ending first, it does not free that account.
    const along = accounts.claim(GUILD, 'vc-a', noSessions);
    expect(along.choice).toEqual({ kind: 'there', accountId: 'main' });
    along.release();
    expect(accounts.claim(GUILD, 'vc-c', noSessions).choice).toEqual({ kind: 'none', inviteAccountId: null });
    first.release();
    second.release();
  });

  it('THEN a released reservation (the join made or given up) frees the account again', () => {
    const taken = accounts.claim(GUILD, 'vc-a', noSessions);
    taken.release();
    expect(accounts.claim(GUILD, 'vc-b', noSessions).choice).toEqual({ kind: 'join', accountId: 'main' });
  });
});
