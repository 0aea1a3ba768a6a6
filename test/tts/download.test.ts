import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TtsClient } from '../../src/tts/client.ts';
import { DOWNLOAD_DEFAULTS, downloadAudio, looksLikeMp3, refuseReason, type DownloadOptions } from '../../src/tts/download.ts';
import { TtsError } from '../../src/tts/errors.ts';
import { FAKE_MP3, ID3_MP3, routeServer } from './helpers.ts';
import { FakeClock } from '../support/clock.ts';

let srv: Awaited<ReturnType<typeof routeServer>>;

beforeAll(async () => {
  srv = await routeServer({
    '/ok.mp3': (_req, res) => res.end(FAKE_MP3),
    '/id3.mp3': (_req, res) => res.end(ID3_MP3),
    '/to-ok': (_req, res) => {
      res.writeHead(302, { location: '/ok.mp3' });
      res.end();
    },
    '/to-evil': (_req, res) => {
      res.writeHead(302, { location: 'https://evil.example.com/a.mp3' });
      res.end();
    },
    '/to-http-google': (_req, res) => {
      res.writeHead(301, { location: 'http://storage.googleapis.com/ondoku3/a.mp3' });
      res.end();
    },
    '/loop': (_req, res) => {
      res.writeHead(307, { location: '/loop' });
      res.end();
    },
    // No Content-Length: the cap must be enforced while streaming.
    '/big-chunked': (_req, res) => {
      res.write(FAKE_MP3);
      const chunk = Buffer.alloc(16 * 1024, 0x55);
      let n = 0;
      const more = () => {
        while (n++ < 64) if (!res.write(chunk)) return res.once('drain', more);
        res.end();
      };
      more();
    },
    '/big-declared': (_req, res) => {
      res.writeHead(200, { 'content-length': String(5 * 1024 * 1024) });
      res.write(FAKE_MP3);
      // never finishes on purpose: the declared length alone must be refused
    },
    '/page.html': (_req, res) => {
      res.setHeader('content-type', 'audio/mpeg'); // lying content type: the bytes decide
      res.end('<html><body>notice</body></html>');
    },
    '/gone.mp3': (_req, res) => {
      res.statusCode = 403;
      res.end('expired');
    },
  });
});
afterAll(() => srv.close());

function opts(over: Partial<DownloadOptions> = {}): DownloadOptions {
  return {
    ...DOWNLOAD_DEFAULTS,
    allowHosts: [...DOWNLOAD_DEFAULTS.allowHosts],
    allowLoopback: true,
    maxBytes: 64 * 1024,
    timeoutMs: 5000,
    ...over,
  };
}

async function refusal(p: Promise<unknown>): Promise<TtsError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(TtsError);
  return e as TtsError;
}

describe('download guard', () => {
  it('GIVEN an MP3 on the allowed loopback host THEN the bytes are returned', async () => {
    const buf = await downloadAudio(`${srv.url}/ok.mp3`, opts(), { clock: new FakeClock({ autoAdvance: true }) });
    expect(buf.equals(FAKE_MP3)).toBe(true);
    const id3 = await downloadAudio(`${srv.url}/id3.mp3`, opts(), { clock: new FakeClock({ autoAdvance: true }) });
    expect(id3.subarray(0, 3).toString()).toBe('ID3');
  });

  it('GIVEN a redirect within the allowed hosts THEN it is followed', async () => {
    const buf = await downloadAudio(`${srv.url}/to-ok`, opts(), { clock: new FakeClock({ autoAdvance: true }) });
    expect(buf.equals(FAKE_MP3)).toBe(true);
  });

  it('GIVEN a host not on the list THEN refused before any request', async () => {
    const e = await refusal(downloadAudio('https://evil.example.com/a.mp3', opts(), { clock: new FakeClock({ autoAdvance: true }) }));
    expect(e.code).toBe('download_refused');
    expect(e.message).toContain('evil.example.com');
  });

  it('GIVEN loopback without allowLoopback THEN refused without a request', async () => {
    const before = srv.hits.get('/ok.mp3') ?? 0;
    const e = await refusal(
      downloadAudio(`${srv.url}/ok.mp3`, opts({ allowLoopback: false }), { clock: new FakeClock({ autoAdvance: true }) }),
    );
    expect(e.code).toBe('download_refused');
    expect(srv.hits.get('/ok.mp3') ?? 0).toBe(before);
  });

  it('GIVEN a redirect to a non-listed host THEN refused', async () => {
    const e = await refusal(downloadAudio(`${srv.url}/to-evil`, opts(), { clock: new FakeClock({ autoAdvance: true }) }));
    expect(e.code).toBe('download_refused');
    expect(e.context.host).toBe('evil.example.com');
  });

  it('GIVEN a redirect to plain http on a listed host THEN refused (https required)', async () => {
    const e = await refusal(downloadAudio(`${srv.url}/to-http-google`, opts(), { clock: new FakeClock({ autoAdvance: true }) }));
    expect(e.code).toBe('download_refused');
    expect(e.message).toContain('https required');
  });

  it('GIVEN a redirect loop THEN refused after the hop limit', async () => {
    const before = srv.hits.get('/loop') ?? 0;
    const e = await refusal(downloadAudio(`${srv.url}/loop`, opts({ maxRedirects: 3 }), { clock: new FakeClock({ autoAdvance: true }) }));
    expect(e.code).toBe('download_refused');
    expect((srv.hits.get('/loop') ?? 0) - before).toBe(4);
  });

  it('GIVEN a body over the cap without Content-Length THEN refused while streaming', async () => {
    const e = await refusal(
      downloadAudio(`${srv.url}/big-chunked`, opts({ maxBytes: 64 * 1024 }), { clock: new FakeClock({ autoAdvance: true }) }),
    );
    expect(e.code).toBe('download_refused');
    expect(e.message).toMatch(/larger than/);
  });

  it('GIVEN a declared length over the cap THEN refused at once', async () => {
    const e = await refusal(
      downloadAudio(`${srv.url}/big-declared`, opts({ maxBytes: 64 * 1024 }), { clock: new FakeClock({ autoAdvance: true }) }),
    );
    expect(e.code).toBe('download_refused');
  });

  it('GIVEN a non-MP3 body THEN refused', async () => {
    const e = await refusal(downloadAudio(`${srv.url}/page.html`, opts(), { clock: new FakeClock({ autoAdvance: true }) }));
    expect(e.code).toBe('download_refused');
    expect(e.message).toMatch(/not MP3/);
  });

  it('GIVEN a 403 (expired signed URL) THEN download_failed without retries', async () => {
    const before = srv.hits.get('/gone.mp3') ?? 0;
    const e = await refusal(downloadAudio(`${srv.url}/gone.mp3`, opts(), { clock: new FakeClock({ autoAdvance: true }) }));
    expect(e.code).toBe('download_failed');
    expect(e.context.status).toBe(403);
    expect((srv.hits.get('/gone.mp3') ?? 0) - before).toBe(1);
  });

  it('GIVEN a client THEN its base URL host is allowed, and other hosts are not', async () => {
    const client = new TtsClient({
      token: 'x'.repeat(64),
      baseUrl: srv.url,
      clock: new FakeClock({ autoAdvance: true }),
      download: { allowLoopback: true },
    });
    expect(client.options.download.allowHosts).toEqual(['storage.googleapis.com', '127.0.0.1']);
    expect((await client.download(`${srv.url}/ok.mp3`)).length).toBe(FAKE_MP3.length);
    expect((await refusal(client.download('https://example.com/a.mp3'))).code).toBe('download_refused');
  });
});

describe('looksLikeMp3 / refuseReason (pure)', () => {
  it('GIVEN frame sync or ID3 THEN MP3; GIVEN text or a reserved header THEN not', () => {
    expect(looksLikeMp3(FAKE_MP3)).toBe(true);
    expect(looksLikeMp3(ID3_MP3)).toBe(true);
    expect(looksLikeMp3(Buffer.from('<html>'))).toBe(false);
    expect(looksLikeMp3(Buffer.from([0xff, 0xf3, 0xf4, 0x00]))).toBe(false); // bitrate index 15
    expect(looksLikeMp3(Buffer.alloc(0))).toBe(false);
  });
  it('GIVEN URLs THEN only listed https hosts (and loopback when allowed) pass', () => {
    const p = { allowHosts: ['storage.googleapis.com'], allowLoopback: false };
    expect(refuseReason(new URL('https://storage.googleapis.com/ondoku3/media/a.mp3'), p)).toBeUndefined();
    expect(refuseReason(new URL('https://STORAGE.googleapis.com/a.mp3'), p)).toBeUndefined();
    expect(refuseReason(new URL('http://storage.googleapis.com/a.mp3'), p)).toMatch(/https/);
    expect(refuseReason(new URL('https://storage.googleapis.com.evil.com/a.mp3'), p)).toMatch(/allow-list/);
    expect(refuseReason(new URL('http://127.0.0.1:9/a.mp3'), p)).toBe('scheme http: is not allowed (https required)');
    expect(refuseReason(new URL('http://127.0.0.1:9/a.mp3'), { ...p, allowLoopback: true })).toBeUndefined();
    expect(refuseReason(new URL('http://[::1]:9/a.mp3'), { ...p, allowLoopback: true })).toBeUndefined();
    expect(refuseReason(new URL('http://10.0.0.1/a.mp3'), { ...p, allowLoopback: true })).toBe(
      'scheme http: is not allowed (https required)',
    );
    expect(refuseReason(new URL('file:///etc/passwd'), { ...p, allowLoopback: true })).toBe('scheme file: is not allowed (https required)');
  });
});
