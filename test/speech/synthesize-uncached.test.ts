import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mp3ToOggOpus } from '../../src/audio/transcode.ts';
import { openDatabase, type Db } from '../../src/db/database.ts';
import { CharacterBudget } from '../../src/billing/budget.ts';
import { AudioCache } from '../../src/speech/synthesis/cache.ts';
import { createSynthesizer, type SynthesisRequest, type TtsClientLike } from '../../src/speech/synthesis/synthesize.ts';
import { ffmpegPath } from '@yomiage/media';
import { createLogger } from '../../src/util/log.ts';
import { captureLog } from '../support/log-scan.ts';

// Paid audio is never thrown away, at the synthesizer: the cache's transcode fails (here: past its
// deadline, a real mp3ToOggOpus with no time). The clip is paid, so it comes back uncached, to be played
// from its MP3; a run of the same failure is warned about once. Real cache, real SQLite budget.
let dir: string;
let db: Db;
let mp3: Buffer;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'uncached-'));
  db = openDatabase(join(dir, 'bot.db'));
  // Fixture: a 1 s tone at 24 kHz mono, the service's format (as the service documents it).
  execFileSync(ffmpegPath(), [
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:duration=1',
    '-ar',
    '24000',
    '-ac',
    '1',
    '-b:a',
    '160k',
    join(dir, 'tone.mp3'),
  ]);
  mp3 = readFileSync(join(dir, 'tone.mp3'));
});
afterAll(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const request = (text: string): SynthesisRequest => ({
  guildId: 'g1',
  endpoint: 'standard',
  text,
  voice: 'ja-JP-Wavenet-B',
  speed: 1,
  pitch: 0,
  charges: [{ guildId: 'g1', userId: 'u1', endpoint: 'standard', chars: [...text].length }],
});

describe('synthesizer when the transcode fails', () => {
  it('returns the paid MP3 uncached, commits the characters and warns once for a run of the same failure', async () => {
    const client: TtsClientLike = {
      // Reports the charge as the real client does (src/billing/attempts.ts); each text its own history pk.
      speak: async (req, { billing } = {}) => {
        await billing?.beforeSend?.({ endpoint: 'standard', attempt: 1 });
        const pk = [...req.text].length + req.text.charCodeAt(0);
        billing?.onEvent?.({ kind: 'attempt', endpoint: 'standard', attempt: 1, outcome: 'charged', pk });
        return { url: `http://x/${req.text}.mp3`, pk, text: req.text, substituted: {} };
      },
      narrate: async () => {
        throw new Error('not used');
      },
      download: async () => mp3,
    };
    let transcodes = 0;
    const cache = new AudioCache({
      db,
      dir: join(dir, 'cache'),
      transcode: (input) => {
        transcodes++;
        return mp3ToOggOpus(input, { timeoutMs: -1 });
      },
    });
    const budget = new CharacterBudget({ db });
    const log = captureLog();
    const synth = createSynthesizer({ client, cache, budget, logger: createLogger({ level: 'debug', destination: log }) });
    const warned = () => log.records().filter((r) => r.level === 40);

    const first = await synth.synthesize(request('一つ目'));
    expect(first.mp3?.equals(mp3)).toBe(true);
    expect(await first.cached).toBe(false);
    expect(first.oggPath).toBeUndefined();
    expect(first.durationMs).toBeGreaterThan(900);
    expect(warned()).toHaveLength(1);
    expect(warned()[0]).toMatchObject({ err: { code: 'transcode_timeout' } });

    const second = await synth.synthesize(request('二つ目'));
    expect(second.mp3?.equals(mp3)).toBe(true);
    expect(await second.cached).toBe(false);
    expect(transcodes).toBe(2); // tried again: one file failing says nothing of the next
    expect(warned()).toHaveLength(1);
    expect(log.records().filter((r) => r.msg === 'could not cache the paid audio again (same cause)')).toHaveLength(1);
    // Both clips are committed to the ledger: paid, and delivered.
    expect(await budget.usage({ guildId: 'g1', userId: 'u1' })).toMatchObject({ used: 3 + 3, charged: 3 + 3, reserved: 0 });
  });
});
