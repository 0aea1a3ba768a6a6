// JSON bodies from the service are capped like the audio download: refused past
// MAX_JSON_BYTES, declared or not, and the client stops reading instead of buffering on.
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TtsClient } from '../../src/tts/client.ts';
import { MAX_JSON_BYTES } from '../../src/tts/http.ts';
import { DEFAULT_TOKEN, recordingLimiter, recordingLogger, rejection, routeServer } from './helpers.ts';
import { FakeClock } from '../support/clock.ts';

const REQ = { voice: 'ja-JP-Wavenet-B', text: 'こんにちは', speed: 1, pitch: 0 };
let sentBytes = 0;
/** What the standard endpoint answers in the current test. */
let mode: 'endless' | 'declared' | 'fits' = 'endless';

/** Resolves once the client of the current endless answer has gone (its connection closed). */
let clientGone: Promise<void> = Promise.resolve();

/** Streams JSON-looking bytes until the client goes away (a body with no end). */
function endless(res: ServerResponse): void {
  clientGone = new Promise((resolve) => res.once('close', () => resolve()));
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"text":"');
  const chunk = Buffer.alloc(64 * 1024, 'a');
  const pump = () => {
    while (!res.destroyed && sentBytes < 64 * MAX_JSON_BYTES) {
      sentBytes += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
    res.end('"}');
  };
  pump();
}

let server: Awaited<ReturnType<typeof routeServer>>;
beforeAll(async () => {
  server = await routeServer({
    '/text_to_speech_api/': (_req, res) => {
      if (mode === 'declared') {
        const body = JSON.stringify({ text: 'a'.repeat(MAX_JSON_BYTES), url: 'http://127.0.0.1/x.mp3', pk: 1, share: 1 });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      } else if (mode === 'fits') {
        const body = JSON.stringify({
          text: REQ.text,
          url: 'http://127.0.0.1/x.mp3',
          pk: 7,
          share: 1,
          padding: 'b'.repeat(MAX_JSON_BYTES - 200),
        });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(body);
      } else {
        endless(res);
      }
    },
    '/api/advanced-tts/jobs/j1/': (_req, res) => endless(res),
  });
});
afterAll(() => server.close());

function client(answer: typeof mode): TtsClient {
  mode = answer;
  return new TtsClient({
    token: DEFAULT_TOKEN,
    baseUrl: server.url,
    clock: new FakeClock({ autoAdvance: true }),
    limiter: recordingLimiter(),
    logger: recordingLogger(),
    requestTimeoutMs: 20_000,
    download: { allowLoopback: true },
  });
}

describe('JSON response size cap', () => {
  it('GIVEN a body without Content-Length that never ends THEN bad_response, and reading stops near the cap', async () => {
    sentBytes = 0;
    const e = await rejection(client('endless').speak(REQ));
    expect(e.code).toBe('bad_response');
    expect(e.message).toContain(`${MAX_JSON_BYTES} bytes`);
    // The server stops once the client has gone: far below what it would have sent.
    await clientGone;
    expect(sentBytes).toBeLessThan(16 * MAX_JSON_BYTES);
  });

  it('GIVEN a Content-Length over the cap THEN bad_response without reading the body', async () => {
    const e = await rejection(client('declared').speak(REQ));
    expect(e.code).toBe('bad_response');
    expect(e.context).toMatchObject({ endpoint: 'standard', status: 200 });
  });

  it('GIVEN a poll answer without end THEN bad_response', async () => {
    sentBytes = 0;
    const e = await rejection(client('endless').pollJob('j1', 'job-token-for-j1'));
    expect(e.code).toBe('bad_response');
    expect(e.message).toContain(`${MAX_JSON_BYTES} bytes`);
    await clientGone;
    expect(sentBytes).toBeLessThan(16 * MAX_JSON_BYTES);
  });

  it('GIVEN a body just under the cap THEN it is read as usual', async () => {
    const r = await client('fits').speak(REQ);
    expect(r.pk).toBe(7);
  });
});
