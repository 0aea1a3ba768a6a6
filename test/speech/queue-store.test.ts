import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { SpeechScheduler, type ReadyUtterance } from '../../src/speech/queue.ts';
import { PendingUtteranceStore } from '../../src/speech/queue-store.ts';
import { FakeSynth, ManualClock, msg, until } from './queue-fakes.ts';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('PendingUtteranceStore (clean shutdown and restart)', () => {
  it('GIVEN a scheduler closed with unspoken items THEN after a restart they are spoken in order and the text leaves the database', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'queue-store-'));
    dirs.push(dir);
    const file = join(dir, 'bot.sqlite');
    const clock = new ManualClock();

    const before = new SpeechScheduler({ synthesize: new FakeSynth({ manual: true }), clock });
    before.enqueue(msg('g1', 'a', 'first', { kind: 'say', meta: { messageId: 'm1' } }));
    before.enqueue(msg('g1', 'b', 'narrated', { kind: 'narrate', advanced: { voice: 'Ruby', tone: 'calm', seed: 3 } }));
    before.enqueue(msg('g2', 'c', 'other guild', { lang: 'en' }));
    before.enqueue(msg('g1', 'a', 'second'));
    const db1 = openDatabase(file);
    expect(await new PendingUtteranceStore(db1, { clock }).save(before.close())).toBe(4);
    db1.close();

    const db2 = openDatabase(file);
    const store = new PendingUtteranceStore(db2, { clock });
    const g2Only = await store.take((g) => g === 'g2');
    expect(g2Only.map((u) => u.text)).toEqual(['other guild']);
    const restored = await store.take();
    expect(restored.map((u) => u.text)).toEqual(['first', 'narrated', 'second']);
    expect(restored[0]!.meta).toEqual({ messageId: 'm1' });
    expect(restored[1]!.advanced).toEqual({ voice: 'Ruby', tone: 'calm', seed: 3 });
    expect(await store.take()).toEqual([]);
    expect(db2.prepare('SELECT COUNT(*) AS n FROM pending_utterances').get()).toEqual({ n: 0 });

    const after = new SpeechScheduler({ synthesize: new FakeSynth(), clock });
    const seen: ReadyUtterance[] = [];
    after.setSink('g1', async (r) => void seen.push(r));
    after.restore(restored);
    await until(() => seen.length === 3);
    expect(seen.map((r) => r.items[0]!.text)).toEqual(['first', 'narrated', 'second']);
    expect(seen[1]!.items[0]!.kind).toBe('narrate');
    db2.close();
  });
});
