import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { audioFor, startEmulator, type Emulator } from '../src/index.ts';
import { ffmpegPath } from '@yomiage/media';
import { advanced, call, fastOptions, okAdvanced, okStandard, poll, standard } from './support.ts';
import { FakeClock } from '../../../test/support/clock.ts';

const run = promisify(execFile);
const clock = new FakeClock();
const TTL = 10 * 60_000;
let emu: Emulator;
let dir: string;

beforeAll(async () => {
  emu = await startEmulator(
    fastOptions(clock, { signedUrlTtlMs: TTL, jobs: { pendingMs: 0, runningMs: 0, minPollAfterMs: 0, pollAfterMs: 0 } }),
  );
  dir = await mkdtemp(join(tmpdir(), 'emulator-audio-'));
});
beforeEach(async () => {
  emu.reset();
  await clock.advance(24 * 60 * 60 * 1000); // empty rate windows
});
afterAll(async () => {
  await emu.close();
  await rm(dir, { recursive: true, force: true });
});

async function download(url: string): Promise<Buffer> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

let n = 0;
/** ffprobe's view of an MP3: codec, sample rate, channels and duration in seconds. */
async function probe(bytes: Buffer) {
  const file = join(dir, `a${n++}.mp3`);
  await writeFile(file, bytes);
  const { stdout } = await run('ffprobe', [
    '-v',
    'error',
    '-show_entries',
    'stream=codec_name,sample_rate,channels:format=duration',
    '-of',
    'json',
    file,
  ]);
  const info = JSON.parse(stdout) as {
    streams: { codec_name: string; sample_rate: string; channels: number }[];
    format: { duration: string };
  };
  const s = info.streams[0]!;
  return { codec: s.codec_name, sampleRate: Number(s.sample_rate), channels: s.channels, duration: Number(info.format.duration), file };
}

async function meanVolume(file: string): Promise<number> {
  const { stderr } = await run(ffmpegPath(), ['-hide_banner', '-i', file, '-af', 'volumedetect', '-f', 'null', '-']);
  return Number(/mean_volume: (-?[\d.]+) dB/.exec(stderr)![1]);
}

async function standardAudio(body: Record<string, unknown>) {
  const res = await standard(emu, { ...okStandard, ...body });
  expect(res.status).toBe(200);
  return { url: res.json.url as string, bytes: await download(res.json.url) };
}

async function advancedUrl(body: Record<string, unknown> = okAdvanced): Promise<string> {
  const job = await advanced(emu, body);
  expect(job.status).toBe(202);
  const done = await poll(emu, job.json.poll_url, { jobToken: job.json.job_token });
  expect(done.json.status).toBe('succeeded');
  return done.json.url;
}

describe('audio files', () => {
  it('standard audio is a real MP3: MPEG-2 Layer III, 24000 Hz, mono, clearly above silence', async () => {
    const { bytes } = await standardAudio({ text: '音声ファイルの形式を確かめます' });
    // Frame sync 0xFFF, version bits 10 (MPEG-2), layer bits 01 (Layer III).
    expect(bytes[0]).toBe(0xff);
    expect(bytes[1]! & 0xfe).toBe(0xf2);
    const info = await probe(bytes);
    expect(info).toMatchObject({ codec: 'mp3', sampleRate: 24000, channels: 1 });
    expect(await meanVolume(info.file)).toBeGreaterThan(-30);
  });

  it('advanced audio has the same format', async () => {
    const info = await probe(await download(await advancedUrl()));
    expect(info).toMatchObject({ codec: 'mp3', sampleRate: 24000, channels: 1 });
  });

  it('identical requests give identical bytes and URL, equal to audioFor() and stable across emulator instances', async () => {
    const a = await standardAudio({ text: '同じ入力は同じ音声' });
    const b = await standardAudio({ text: '同じ入力は同じ音声' });
    expect(b.url).toBe(a.url);
    expect(b.bytes.equals(a.bytes)).toBe(true);
    const expected = await audioFor({ kind: 'standard', ...okStandard, text: '同じ入力は同じ音声' });
    expect(a.url.endsWith(`/media/${expected.hash}.mp3`)).toBe(true);
    expect(expected.bytes.equals(a.bytes)).toBe(true);

    const other = await startEmulator(fastOptions(new FakeClock()));
    try {
      const res = await standard(other, { ...okStandard, text: '同じ入力は同じ音声' });
      expect(new URL(res.json.url).pathname).toBe(new URL(a.url).pathname);
      expect((await download(res.json.url)).equals(a.bytes)).toBe(true);
    } finally {
      await other.close();
    }
  });

  it('files made at the same time share the one in-process encoder without mixing: each equals the file made alone', async () => {
    const a = { kind: 'standard', ...okStandard, text: '同時に作る一つ目' } as const;
    const b = { kind: 'standard', ...okStandard, text: '同時に作る二つ目は少し長めの文章です', pitch: 3 } as const;
    const [a1, b1, a2] = await Promise.all([audioFor(a), audioFor(b), audioFor(a)]);
    expect(a2.bytes.equals(a1.bytes)).toBe(true);
    expect(b1.bytes.equals(a1.bytes)).toBe(false);
    expect(b1.bytes.equals((await audioFor(b)).bytes)).toBe(true);
  });

  it('voice and pitch shape the audio', async () => {
    const base = await standardAudio({ text: '声の違い' });
    const voice = await standardAudio({ text: '声の違い', voice: 'en-US-Wavenet-A' });
    const pitch = await standardAudio({ text: '声の違い', pitch: 5 });
    expect(voice.bytes.equals(base.bytes)).toBe(false);
    expect(pitch.bytes.equals(base.bytes)).toBe(false);
  });

  it('duration grows with the text and shrinks with speed', async () => {
    const short = await probe((await standardAudio({ text: 'あいうえおかきくけこ' })).bytes);
    const long = await probe((await standardAudio({ text: 'あいうえおかきくけこ'.repeat(3) })).bytes);
    const fast = await probe((await standardAudio({ text: 'あいうえおかきくけこ'.repeat(3), speed: 2 })).bytes);
    expect(short.duration).toBeGreaterThan(0.9);
    expect(long.duration).toBeGreaterThan(short.duration * 2.5);
    expect(fast.duration).toBeLessThan(long.duration * 0.6);
    expect(fast.duration).toBeGreaterThan(long.duration * 0.4);
  });

  it("secondsPerChar sets the tones' length: a quarter of it makes a clip a quarter as long, never under 0.6 s", async () => {
    const text = 'あいうえおかきくけこ'.repeat(3);
    const quick = await startEmulator({ secondsPerChar: 0.03 });
    try {
      const get = async (body: Record<string, unknown>) => {
        const res = await standard(quick, { ...okStandard, ...body });
        expect(res.status).toBe(200);
        return probe(await download(res.json.url as string));
      };
      const normal = await probe((await standardAudio({ text })).bytes);
      const short = await get({ text });
      expect(short.duration).toBeGreaterThan(normal.duration * 0.2);
      expect(short.duration).toBeLessThan(normal.duration * 0.3);
      expect((await get({ text: 'あい' })).duration).toBeGreaterThan(0.55);
    } finally {
      await quick.close();
    }
  });

  it('HEAD gives the headers only; other methods get 405', async () => {
    const { url, bytes } = await standardAudio({ text: 'ヘッド' });
    const head = await fetch(url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(bytes.length));
    expect((await call(emu, 'POST', new URL(url).pathname)).status).toBe(405);
  });
});

describe('audio URLs', () => {
  it('an unknown media name is 404', async () => {
    expect((await fetch(`${emu.baseUrl}/media/${'0'.repeat(56)}.mp3`)).status).toBe(404);
    expect((await fetch(`${emu.baseUrl}/media/short.mp3`)).status).toBe(404);
  });

  it('a signed URL works until it expires, then is refused with 403', async () => {
    const url = await advancedUrl({ ...okAdvanced, text: '期限付きのURLを試します' });
    await clock.advance(TTL - 2_000);
    expect((await fetch(url)).status).toBe(200);
    await clock.advance(2_000);
    const expired = await fetch(url);
    expect(expired.status).toBe(403);
    expect(await expired.text()).toMatch(/ExpiredToken/);
  });

  it('polling again after expiry gives a fresh signed URL for the same audio', async () => {
    const body = { ...okAdvanced, text: '新しい署名付きURLをもらいます' };
    const job = await advanced(emu, body);
    const first = (await poll(emu, job.json.poll_url, { jobToken: job.json.job_token })).json.url as string;
    const bytes = await download(first);
    await clock.advance(TTL + 1_000);
    expect((await fetch(first)).status).toBe(403);
    const fresh = (await poll(emu, job.json.poll_url, { jobToken: job.json.job_token })).json.url as string;
    expect(fresh).not.toBe(first);
    expect((await download(fresh)).equals(bytes)).toBe(true);
  });

  it('a tampered signature or expiry is refused with 403', async () => {
    const url = new URL(await advancedUrl({ ...okAdvanced, text: '署名を改ざんしてみます' }));
    const badSig = new URL(url);
    badSig.searchParams.set('sig', '0'.repeat(64));
    expect((await fetch(badSig)).status).toBe(403);
    const later = new URL(url);
    later.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 86_400));
    expect((await fetch(later)).status).toBe(403);
    const bare = new URL(url);
    bare.search = '';
    expect((await fetch(bare)).status).toBe(403);
    // Advanced audio is not in the public bucket.
    expect((await fetch(`${emu.baseUrl}/media/${url.pathname.split('/').pop()}`)).status).toBe(404);
  });

  it('publicBaseUrl changes the base of the audio URLs', async () => {
    const other = await startEmulator(fastOptions(new FakeClock(), { publicBaseUrl: 'http://tts.example.test:9000/' }));
    try {
      const res = await standard(other, okStandard);
      expect(res.json.url).toMatch(/^http:\/\/tts\.example\.test:9000\/media\/[0-9a-f]{56}\.mp3$/);
    } finally {
      await other.close();
    }
  });
});
