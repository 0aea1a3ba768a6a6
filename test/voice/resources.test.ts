// A voice worker's first clip plays without waiting for an ffmpeg process: @discordjs/voice's
// createAudioResource builds its transformer graph on first use in a thread, and that runs
// `ffmpeg -h` synchronously, stopping every call of the worker for 50-200 ms. The bot's clips are
// Opus packets already (cached Ogg Opus, or an MP3 decoded in process), so they need none of it.
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { audioFor } from '@yomiage/tts-emulator';
import { mp3ToOggOpus } from '../../src/audio/transcode.ts';

const dir = mkdtempSync(join(tmpdir(), 'yomiage-first-clip-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the first clip a voice thread plays', () => {
  it('a cached clip and a cache miss each play every packet, and nothing asks ffmpeg anything', async () => {
    const { bytes: mp3 } = await audioFor({ kind: 'standard', text: 'はじめの一言です', voice: 'v1', speed: 1, pitch: 0 });
    const oggPath = join(dir, 'clip.ogg');
    writeFileSync(oggPath, await mp3ToOggOpus(mp3));
    const thread = new Worker(new URL('../support/first-clip-thread.ts', import.meta.url), { workerData: { oggPath, mp3 } });
    const [report] = (await once(thread, 'message')) as [{ asked: number; packets: Record<string, number> }];
    await thread.terminate();
    // 8 characters at 0.12 s each: about 0.96 s, 48 packets of 20 ms (give or take the edges).
    expect(report.packets.ogg).toBeGreaterThan(40);
    expect(report.packets['mp3-in-process']).toBeGreaterThan(40);
    expect(report.asked).toBe(0);
  });
});
