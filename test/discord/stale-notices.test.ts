import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../src/db/database.ts';
import { createRepositories, type Repositories } from '../../src/db/repositories.ts';
import { StaleDropNotices } from '../../src/discord/events/stale-drop-notices.ts';
import type { SpeechScheduler } from '../../src/speech/queue/scheduler.ts';
import type { UtteranceInput } from '../../src/speech/queue/utterance.ts';
import type { VoiceManager } from '../../src/voice/manager.ts';
import { createLogger } from '../../src/util/log.ts';

// The spoken stale-drop notice, as a policy: real repositories (SQLite in memory); the
// scheduler and the voice manager are reduced to what the notice uses (what was queued, and
// whether the bot is in voice), since the end-to-end run is test/bot/reading-voice.test.ts.
let db: Db;
let repos: Repositories;
let now = 0;
let queued: UtteranceInput[];
let inVoice: string | undefined;

function notices(minIntervalMs = 30_000): StaleDropNotices {
  const scheduler = {
    enqueue: (u: UtteranceInput) => (queued.push(u), { ok: true, id: String(queued.length), position: 1 }),
  } as unknown as SpeechScheduler;
  // Heard when connected (a speaker, on a stage): the notice is made only then.
  const voice = {
    sessions: () => (inVoice ? [{ channelId: inVoice }] : []),
    isConnected: (_guildId: string, channelId: string) => inVoice === channelId,
  } as unknown as VoiceManager;
  return new StaleDropNotices({ voice, repos, scheduler, logger: createLogger({ level: 'silent' }), now: () => now, minIntervalMs });
}

beforeEach(() => {
  db = openDatabase(':memory:');
  repos = createRepositories(db);
  now = 1_000_000;
  queued = [];
  inVoice = 'vc';
});
afterEach(() => db.close());

describe('GIVEN the bot in voice', () => {
  it('THEN a drop is told in the reading language, charged to the server, as a clip of its own', async () => {
    const n = notices();
    n.onDropped('g1', 3);
    expect(queued).toMatchObject([{ text: '3件省略しました。', userId: 'g1', kind: 'say', channelId: 'vc', meta: { botClip: true } }]);
    await repos.guildSettings.update('g2', { locale: 'en' });
    n.onDropped('g2', 12);
    expect(queued[1]!.text).toBe('Skipped 10 or more messages.');
  });

  it('THEN drops within the interval are carried into the next notice, not told one by one', () => {
    const n = notices(30_000);
    n.onDropped('g1', 1);
    now += 10_000;
    n.onDropped('g1', 2);
    now += 10_000;
    n.onDropped('g1', 1);
    expect(queued.map((u) => u.text)).toEqual(['1件省略しました。']);
    now += 10_001;
    n.onDropped('g1', 1);
    expect(queued.map((u) => u.text)).toEqual(['1件省略しました。', '4件省略しました。']);
  });

  it('THEN nothing is said when the server turned the notice off', async () => {
    await repos.reading.update('g1', { staleNotice: false });
    notices().onDropped('g1', 4);
    expect(queued).toEqual([]);
  });
});

describe('GIVEN two sessions in one server', () => {
  it('THEN a drop is told in the session it was queued for, each session carrying its own count', () => {
    const voice = { sessions: () => [{ channelId: 'vc-a' }, { channelId: 'vc-b' }], isConnected: () => true } as unknown as VoiceManager;
    const scheduler = { enqueue: (u: UtteranceInput) => (queued.push(u), { ok: true }) } as unknown as SpeechScheduler;
    const n = new StaleDropNotices({ voice, repos, scheduler, logger: createLogger({ level: 'silent' }), now: () => now });
    n.onDropped('g1', 2, 'voice:vc-b');
    n.onDropped('g1', 1, 'voice:vc-a');
    expect(queued.map((u) => [u.channelId, u.audience, u.text])).toEqual([
      ['vc-b', 'voice:vc-b', '2件省略しました。'],
      ['vc-a', 'voice:vc-a', '1件省略しました。'],
    ]);
  });
});

describe('GIVEN the bot in no voice channel', () => {
  it('THEN nothing is made (nobody would hear it)', () => {
    inVoice = undefined;
    notices().onDropped('g1', 4);
    expect(queued).toEqual([]);
  });
});
