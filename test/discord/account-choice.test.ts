import { describe, expect, it } from 'vitest';
import { chooseAccount, type AccountFacts } from '../../src/discord/interactions/account-choice.ts';

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
