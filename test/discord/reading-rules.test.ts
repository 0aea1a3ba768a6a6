import { describe, expect, it } from 'vitest';
import { READING_DEFAULTS, type ReadingSettings } from '../../src/domain/reading.ts';
import { whyNotRead, type MessageAuthor, type ReadingPolicy } from '../../src/domain/reading-rules.ts';

// Whose messages auto-read reads, as a pure rule (GIVEN/THEN).
const VOICE = 'vc1';
const member = (over: Partial<MessageAuthor> = {}): MessageAuthor => ({
  id: 'u1',
  bot: false,
  webhookId: null,
  roleIds: new Set(),
  voiceChannelId: null,
  ...over,
});
const policy = (reading: Partial<ReadingSettings> = {}, over: Partial<ReadingPolicy> = {}): ReadingPolicy => ({
  reading: { guildId: 'g', ...READING_DEFAULTS, updatedAt: null, ...reading },
  allowedBots: [],
  neverRoles: [],
  muted: false,
  selfId: 'me',
  botVoiceChannelId: VOICE,
  roleExists: () => true,
  ...over,
});

describe('GIVEN the defaults', () => {
  it('THEN a member is read, a bot and a webhook are not, nor the bot itself', () => {
    expect(whyNotRead(member(), policy())).toBeUndefined();
    expect(whyNotRead(member({ id: 'b1', bot: true }), policy())).toBe('bot');
    expect(whyNotRead(member({ id: 'w1', bot: true, webhookId: 'w1', roleIds: null }), policy())).toBe('bot');
    expect(whyNotRead(member({ id: 'me', bot: true }), policy({ bots: 'all' }))).toBe('self');
  });
  it('THEN a muted member is not read', () => {
    expect(whyNotRead(member(), policy({}, { muted: true }))).toBe('muted');
  });
});

describe('GIVEN bots: listed', () => {
  it('THEN only the allowed bot or webhook is read', () => {
    const p = policy({ bots: 'listed' }, { allowedBots: ['b1', 'w1'] });
    expect(whyNotRead(member({ id: 'b1', bot: true }), p)).toBeUndefined();
    expect(whyNotRead(member({ id: 'w1', bot: true, webhookId: 'w1', roleIds: null }), p)).toBeUndefined();
    expect(whyNotRead(member({ id: 'b2', bot: true }), p)).toBe('bot');
  });
  it('THEN the list means nothing while bots are off', () => {
    expect(whyNotRead(member({ id: 'b1', bot: true }), policy({ bots: 'off' }, { allowedBots: ['b1'] }))).toBe('bot');
  });
});

describe('GIVEN roles', () => {
  it('THEN a never-read role wins, and a required role shuts out those without it', () => {
    expect(whyNotRead(member({ roleIds: new Set(['r1']) }), policy({}, { neverRoles: ['r1'] }))).toBe('never_role');
    expect(whyNotRead(member(), policy({ requiredRoleId: 'r2' }))).toBe('required_role');
    expect(whyNotRead(member({ roleIds: new Set(['r2']) }), policy({ requiredRoleId: 'r2' }))).toBeUndefined();
  });
  it('THEN a required role that was deleted no longer shuts everyone out', () => {
    expect(whyNotRead(member(), policy({ requiredRoleId: 'gone' }, { roleExists: (id) => id !== 'gone' }))).toBeUndefined();
  });
  it('THEN roles do not apply to an allowed bot', () => {
    expect(whyNotRead(member({ id: 'b1', bot: true }), policy({ bots: 'all', requiredRoleId: 'r2' }))).toBeUndefined();
  });
});

describe('GIVEN in-voice on', () => {
  it("THEN only members in the bot's voice channel are read, and the rule waits while the bot is in none", () => {
    expect(whyNotRead(member({ voiceChannelId: VOICE }), policy({ requireInVoice: true }))).toBeUndefined();
    expect(whyNotRead(member({ voiceChannelId: 'other' }), policy({ requireInVoice: true }))).toBe('not_in_voice');
    expect(whyNotRead(member(), policy({ requireInVoice: true }))).toBe('not_in_voice');
    expect(whyNotRead(member(), policy({ requireInVoice: true }, { botVoiceChannelId: null }))).toBeUndefined();
  });
});
