import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadMigrations, openDatabase, type Db } from '../../src/db/database.ts';
import { VoiceSessionStore } from '../../src/db/voice-sessions.ts';

// What a restart rejoins: one row per listening session (an account in a voice channel), several
// per server, one voice channel per account and server.
const dirs: string[] = [];
const open: Db[] = [];
afterEach(() => {
  for (const db of open.splice(0)) db.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function openAt(upTo?: number): { db: Db; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'voice-sessions-'));
  dirs.push(dir);
  const file = join(dir, 'bot.sqlite3');
  const migrations = loadMigrations().filter((m) => upTo === undefined || m.version <= upTo);
  const db = openDatabase(file, { migrations });
  open.push(db);
  return { db, file };
}

describe('voice sessions remembered for a restart', () => {
  it('GIVEN two accounts in two voice channels of one server THEN both are remembered; moving an account replaces its row', async () => {
    const store = new VoiceSessionStore(openAt().db);
    await store.save({ guildId: 'g1', voiceChannelId: 'vc-a', textChannelIds: ['tc-a'], accountId: 'main' });
    await store.save({ guildId: 'g1', voiceChannelId: 'vc-b', textChannelIds: ['tc-b'], accountId: 'extra' });
    expect(store.list().map((s) => [s.voiceChannelId, s.accountId, s.textChannelId])).toEqual([
      ['vc-a', 'main', 'tc-a'],
      ['vc-b', 'extra', 'tc-b'],
    ]);
    // Someone moved the extra account to a third channel: one row for it, naming the new channel.
    await store.save({ guildId: 'g1', voiceChannelId: 'vc-c', textChannelIds: ['tc-b'], accountId: 'extra' });
    expect(store.list().map((s) => [s.voiceChannelId, s.accountId])).toEqual([
      ['vc-a', 'main'],
      ['vc-c', 'extra'],
    ]);
    // /leave in one channel forgets that session only.
    await store.forget('g1', 'vc-a');
    expect(store.list().map((s) => s.voiceChannelId)).toEqual(['vc-c']);
  });

  it('GIVEN a row remembered before there were several accounts THEN after the upgrade it is the main account\'s (account "")', () => {
    const { db, file } = openAt(12);
    db.prepare(`INSERT INTO voice_sessions (guild_id, voice_channel_id, text_channel_id, updated_at) VALUES ('g1', 'vc', 'tc', 5)`).run();
    db.close();
    open.pop();
    const upgraded = openDatabase(file);
    open.push(upgraded);
    expect(new VoiceSessionStore(upgraded).list()).toEqual([
      { guildId: 'g1', voiceChannelId: 'vc', accountId: '', textChannelId: 'tc', alsoRead: [], updatedAt: 5 },
    ]);
  });

  it('GIVEN a call reading several text channels THEN all are remembered in their order; one taken out, or none, is remembered too', async () => {
    const store = new VoiceSessionStore(openAt().db);
    const read = () => store.list().map((s) => [s.textChannelId, ...s.alsoRead]);
    await store.save({ guildId: 'g1', voiceChannelId: 'vc', textChannelIds: ['tc-a', 'tc-b', 'tc-c'], accountId: 'main' });
    expect(read()).toEqual([['tc-a', 'tc-b', 'tc-c']]);
    // The first one stopped: the next is first now.
    await store.save({ guildId: 'g1', voiceChannelId: 'vc', textChannelIds: ['tc-b', 'tc-c'], accountId: 'main' });
    expect(read()).toEqual([['tc-b', 'tc-c']]);
    await store.save({ guildId: 'g1', voiceChannelId: 'vc', textChannelIds: [], accountId: 'main' });
    expect(store.list()).toMatchObject([{ textChannelId: null, alsoRead: [] }]);
  });

  it('GIVEN a row of one text channel written before a call read several THEN after the upgrade it reads that one channel', () => {
    const { db, file } = openAt(18);
    db.prepare(
      `INSERT INTO voice_sessions (guild_id, voice_channel_id, account_id, text_channel_id, updated_at) VALUES ('g1', 'vc', 'main', 'tc', 5)`,
    ).run();
    db.close();
    open.pop();
    const upgraded = openDatabase(file);
    open.push(upgraded);
    expect(new VoiceSessionStore(upgraded).list()).toMatchObject([{ voiceChannelId: 'vc', textChannelId: 'tc', alsoRead: [] }]);
    // Not an array: refused by the table, nothing half-written.
    expect(() => upgraded.prepare(`UPDATE voice_sessions SET also_read = '{"a":1}'`).run()).toThrow(/CHECK/);
  });
});
