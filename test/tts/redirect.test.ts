// Redirects on API calls (src/tts/redirect.ts): a same-origin 307/308 is followed with the method,
// headers and body kept; 301/302/303 and any other host fail with a message naming the Location and
// TTS_BASE_URL, and the token goes nowhere else. Over loopback servers, plus the rules as a table.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TtsClient } from '../../src/tts/client.ts';
import { TtsServiceError } from '../../src/tts/errors.ts';
import { judgeRedirect } from '../../src/tts/redirect.ts';
import { DEFAULT_TOKEN, emulatorFixture, recordingLogger, rejection, routeServer } from './helpers.ts';
import { FakeClock } from '../support/clock.ts';

const SAY = { voice: 'ja-JP-Wavenet-B', text: 'こんにちは', speed: 1.2, pitch: 0 };
const JOB = { text: 'これは転送のテストです、よろしく。' };
const JOB_ID = '11111111-2222-4333-8444-555555555555';
const JOB_TOKEN = 'job-token-that-must-stay-home';

/** What the final endpoint saw: method, token header, body. */
interface Seen {
  method: string;
  token: string | undefined;
  jobToken: string | undefined;
  body: string;
}

function redirect(status: number, location: string) {
  return (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(status, { location, 'content-type': 'text/html' });
    res.end(`<a href="${location}">moved</a>`);
  };
}

let home: Awaited<ReturnType<typeof routeServer>>;
let elsewhere: Awaited<ReturnType<typeof routeServer>>;
const seen: Seen[] = [];

/** Records the request, then answers like the service would at the new place. */
function endpoint(answer: (res: ServerResponse) => void) {
  return (req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        token: req.headers.token as string | undefined,
        jobToken: req.headers['x-job-token'] as string | undefined,
        body,
      });
      answer(res);
    });
  };
}

const speechOk = (res: ServerResponse) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ text: SAY.text, url: 'https://storage.googleapis.com/ondoku3/media/a.mp3', pk: 7, share: 1 }));
};
const jobOk = (res: ServerResponse) => {
  res.writeHead(202, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      job_id: JOB_ID,
      job_token: JOB_TOKEN,
      status: 'pending',
      min_poll_after_ms: 1000,
      poll_url: `/api/advanced-tts/jobs/${JOB_ID}/`,
    }),
  );
};
const pollOk = (res: ServerResponse) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ job_id: JOB_ID, status: 'running', poll_after_ms: 3000 }));
};

// Each test gets its own base path on the one server, so the redirect kinds sit side by side.
beforeAll(async () => {
  elsewhere = await routeServer({ '/ja/text_to_speech_api/': endpoint(speechOk) });
  const routes: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {};
  for (const status of [301, 302, 303, 307, 308]) {
    routes[`/s${status}/text_to_speech_api/`] = redirect(status, `/s${status}/ja/text_to_speech_api/`);
    routes[`/s${status}/ja/text_to_speech_api/`] = endpoint(speechOk);
    routes[`/s${status}/api/advanced-tts/`] = redirect(status, `/s${status}/ja/api/advanced-tts/`);
    routes[`/s${status}/ja/api/advanced-tts/`] = endpoint(jobOk);
    routes[`/s${status}/api/advanced-tts/jobs/${JOB_ID}/`] = redirect(status, `/s${status}/ja/api/advanced-tts/jobs/${JOB_ID}/`);
    routes[`/s${status}/ja/api/advanced-tts/jobs/${JOB_ID}/`] = endpoint(pollOk);
  }
  routes['/loop/text_to_speech_api/'] = redirect(307, '/loop/text_to_speech_api/');
  routes['/nolocation/text_to_speech_api/'] = (_req, res) => {
    res.statusCode = 302;
    res.end();
  };
  routes['/query/text_to_speech_api/'] = redirect(302, '/query/ja/text_to_speech_api/?sig=abcdef123456');
  home = await routeServer(routes);
  // Routes that need the other server's address.
  routes['/away/text_to_speech_api/'] = redirect(307, `${elsewhere.url}/ja/text_to_speech_api/`);
  routes['/away/api/advanced-tts/jobs/' + JOB_ID + '/'] = redirect(308, `${elsewhere.url}/ja/api/advanced-tts/jobs/${JOB_ID}/`);
  const localhost = home.url.replace('127.0.0.1', 'localhost');
  routes['/otherhost/text_to_speech_api/'] = redirect(308, `${localhost}/s308/ja/text_to_speech_api/`);
});
afterAll(async () => {
  await home.close();
  await elsewhere.close();
});

function client(base: string) {
  seen.length = 0;
  const logger = recordingLogger();
  const clock = new FakeClock({ autoAdvance: true });
  return {
    client: new TtsClient({ token: DEFAULT_TOKEN, baseUrl: `${home.url}${base}`, clock, logger, requestTimeoutMs: 5000 }),
    logger,
    clock,
  };
}

describe('a same-host 307/308 is followed with the method, token and body kept', () => {
  it.each([307, 308])('standard speech, HTTP %s', async (status) => {
    const { client: c, logger } = client(`/s${status}`);
    const r = await c.speak(SAY);
    expect(r.pk).toBe(7);
    expect(home.hits.get(`/s${status}/text_to_speech_api/`)).toBeGreaterThan(0);
    expect(seen).toEqual([{ method: 'POST', token: DEFAULT_TOKEN, jobToken: undefined, body: JSON.stringify(SAY) }]);
    // The operator is told where the service moved, without any secret.
    const warn = logger.lines.find((l) => l.includes('redirected'));
    expect(warn).toContain(`/s${status}/ja/text_to_speech_api/`);
    expect(logger.lines.join('\n')).not.toContain(DEFAULT_TOKEN);
  });

  it.each([307, 308])('job creation, HTTP %s', async (status) => {
    const { client: c } = client(`/s${status}`);
    const job = await c.createJob(JOB);
    expect(job.jobId).toBe(JOB_ID);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: 'POST', token: DEFAULT_TOKEN });
    expect(JSON.parse(seen[0]!.body)).toMatchObject(JOB);
  });

  it.each([307, 308])('polling (GET), HTTP %s, with the job token', async (status) => {
    const { client: c } = client(`/s${status}`);
    const p = await c.pollJob(JOB_ID, JOB_TOKEN);
    expect(p.status).toBe('running');
    expect(seen).toEqual([{ method: 'GET', token: undefined, jobToken: JOB_TOKEN, body: '' }]);
  });
});

describe('any other redirect fails with a message naming the Location and TTS_BASE_URL', () => {
  it.each([301, 302, 303])('standard speech, HTTP %s: refused, nothing sent to the new place, no retry', async (status) => {
    const { client: c, clock } = client(`/s${status}`);
    const e = await rejection(c.speak(SAY));
    expect(e).toBeInstanceOf(TtsServiceError);
    expect(e.code).toBe('redirect_refused');
    expect(e.kind).toBe('refused');
    expect(e.context).toMatchObject({ endpoint: 'standard', status, attempts: 1 });
    expect(e.message).toBe(
      `The service redirected POST /s${status}/text_to_speech_api/ to ${home.url}/s${status}/ja/text_to_speech_api/ (HTTP ${status}). ` +
        `Not followed: only a 307 or 308 keeps the POST and its body. Set TTS_BASE_URL to ${home.url}/s${status}/ja (now ${home.url}/s${status}).`,
    );
    expect(seen).toEqual([]);
    expect(home.hits.get(`/s${status}/text_to_speech_api/`)).toBeGreaterThan(0);
    expect(clock.sleeps).toEqual([]);
  });

  it.each([301, 302, 303])('job creation, HTTP %s: refused', async (status) => {
    const { client: c } = client(`/s${status}`);
    const e = await rejection(c.createJob(JOB));
    expect(e.code).toBe('redirect_refused');
    expect(e.message).toContain(`to ${home.url}/s${status}/ja/api/advanced-tts/ (HTTP ${status})`);
    expect(e.message).toContain(`Set TTS_BASE_URL to ${home.url}/s${status}/ja`);
    expect(seen).toEqual([]);
  });

  it.each([301, 302])('polling, HTTP %s: refused too (only 307/308 are followed)', async (status) => {
    const { client: c } = client(`/s${status}`);
    const e = await rejection(c.pollJob(JOB_ID, JOB_TOKEN));
    expect(e.code).toBe('redirect_refused');
    expect(e.context).toMatchObject({ endpoint: 'poll', status, jobId: JOB_ID });
    expect(e.message).toContain('only a 307 or 308 keeps the GET');
    expect(seen).toEqual([]);
  });

  it('a 307 to another port: not followed, the token never reaches it', async () => {
    const { client: c } = client('/away');
    const e = await rejection(c.speak(SAY));
    expect(e.code).toBe('redirect_refused');
    expect(e.message).toBe(
      `The service redirected POST /away/text_to_speech_api/ to ${elsewhere.url}/ja/text_to_speech_api/ (HTTP 307). ` +
        `Not followed: the token is only sent to TTS_BASE_URL's own host and scheme. Set TTS_BASE_URL to the service's address (now ${home.url}/away).`,
    );
    expect(elsewhere.hits.size).toBe(0);
  });

  it('a 308 to another host name on the same port: not followed', async () => {
    const { client: c } = client('/otherhost');
    const e = await rejection(c.speak(SAY));
    expect(e.code).toBe('redirect_refused');
    expect(e.message).toContain(`to ${home.url.replace('127.0.0.1', 'localhost')}/s308/ja/text_to_speech_api/ (HTTP 308)`);
    expect(seen).toEqual([]);
  });

  it('a poll redirected to another host keeps its job token home', async () => {
    const { client: c } = client('/away');
    const e = await rejection(c.pollJob(JOB_ID, JOB_TOKEN));
    expect(e.code).toBe('redirect_refused');
    expect(elsewhere.hits.size).toBe(0);
  });

  it('a redirect loop stops after 3 hops', async () => {
    const { client: c } = client('/loop');
    const e = await rejection(c.speak(SAY));
    expect(e.code).toBe('redirect_refused');
    expect(e.message).toContain('more than 3 times');
    expect(home.hits.get('/loop/text_to_speech_api/')).toBe(4);
  });

  it('a redirect without a Location names the status and the setting', async () => {
    const { client: c } = client('/nolocation');
    const e = await rejection(c.speak(SAY));
    expect(e.message).toBe(
      `The service answered POST /nolocation/text_to_speech_api/ with HTTP 302 and no Location. Check TTS_BASE_URL (now ${home.url}/nolocation).`,
    );
  });

  it("a Location's query string is not repeated (it may be a signature)", async () => {
    const { client: c } = client('/query');
    const e = await rejection(c.speak(SAY));
    expect(e.message).toContain(`to ${home.url}/query/ja/text_to_speech_api/?… (HTTP 302)`);
    expect(e.message).not.toContain('abcdef123456');
    expect(e.message).toContain('Check TTS_BASE_URL');
  });
});

describe('judgeRedirect (the rules as a table)', () => {
  const base = new URL('https://ondoku3.com');
  const from = new URL('https://ondoku3.com/text_to_speech_api/');
  it.each([
    [307, '/ja/text_to_speech_api/', 'https://ondoku3.com/ja/text_to_speech_api/'],
    [308, 'https://ondoku3.com/ja/text_to_speech_api/', 'https://ondoku3.com/ja/text_to_speech_api/'],
    [307, 'ja/x', 'https://ondoku3.com/text_to_speech_api/ja/x'],
  ])('GIVEN HTTP %s to %s THEN follow %s', (status, location, to) => {
    expect(judgeRedirect('POST', from, status, location, base)).toEqual({ follow: new URL(to) });
  });

  it.each([
    [
      301,
      '/ja/text_to_speech_api/',
      'only a 307 or 308 keeps the POST',
      'Set TTS_BASE_URL to https://ondoku3.com/ja (now https://ondoku3.com)',
    ],
    [302, '/ja/text_to_speech_api/', 'only a 307 or 308', 'Set TTS_BASE_URL to https://ondoku3.com/ja'],
    [303, '/done/', 'only a 307 or 308', 'Check TTS_BASE_URL (now https://ondoku3.com)'],
    [302, '/text_to_speech_api/', 'only a 307 or 308', 'Check TTS_BASE_URL (now https://ondoku3.com)'],
    [307, 'https://evil.example/text_to_speech_api/', 'to https://evil.example/text_to_speech_api/ (HTTP 307)', "TTS_BASE_URL's own host"],
    [308, 'http://ondoku3.com/text_to_speech_api/', 'to http://ondoku3.com/text_to_speech_api/', 'own host and scheme'],
    [308, 'https://ondoku3.com:8443/text_to_speech_api/', 'to https://ondoku3.com:8443/', 'own host and scheme'],
    [308, 'https://user:pw@ondoku3.com/text_to_speech_api/', 'to https://ondoku3.com/text_to_speech_api/', 'carries credentials'],
    [302, undefined, 'HTTP 302 and no Location', 'Check TTS_BASE_URL'],
    [307, 'http://[::1', 'an invalid Location', 'Check TTS_BASE_URL'],
  ])('GIVEN HTTP %s to %s THEN refused (%s; %s)', (status, location, part1, part2) => {
    const v = judgeRedirect('POST', from, status, location, base);
    expect('refuse' in v && v.refuse).toContain(part1);
    expect('refuse' in v && v.refuse).toContain(part2);
    expect('refuse' in v && v.refuse).not.toContain('pw@');
  });

  it('GIVEN an http -> https upgrade of the same host THEN refused, naming the https address', () => {
    const v = judgeRedirect(
      'POST',
      new URL('http://ondoku3.com/text_to_speech_api/'),
      308,
      'https://ondoku3.com/text_to_speech_api/',
      new URL('http://ondoku3.com'),
    );
    expect(v).toEqual({ refuse: expect.stringContaining('to https://ondoku3.com/text_to_speech_api/ (HTTP 308)') });
  });
});

describe('against the emulator (fault injection answers with the redirect)', () => {
  let fx: Awaited<ReturnType<typeof emulatorFixture>>;
  beforeAll(async () => {
    fx = await emulatorFixture();
  });
  afterAll(() => fx.emulator.close());

  it('GIVEN a 307 to /ja/text_to_speech_api/ THEN the locale path answers and the audio downloads', async () => {
    const { client: c } = fx.fresh();
    fx.emulator.injectFault({ target: 'standard', count: 1, status: 307, body: null, headers: { Location: '/ja/text_to_speech_api/' } });
    const r = await c.speak({ ...SAY, text: '転送先で読み上げ' });
    expect(r.text).toBe('転送先で読み上げ');
    expect(fx.seen('standard').map((q) => [q.path, q.status])).toEqual([
      ['/text_to_speech_api/', 307],
      ['/ja/text_to_speech_api/', 200],
    ]);
    expect((await c.download(r.url)).length).toBeGreaterThan(100);
  });

  it('GIVEN a 302 THEN redirect_refused and the emulator saw only the first request; nothing charged', async () => {
    const { client: c } = fx.fresh();
    fx.emulator.injectFault({
      target: 'standard',
      count: 1,
      status: 302,
      body: null,
      headers: { Location: `${fx.emulator.baseUrl}/ja/text_to_speech_api/` },
    });
    const e = await rejection(c.speak(SAY));
    expect(e.code).toBe('redirect_refused');
    expect(e.message).toContain(`Set TTS_BASE_URL to ${fx.emulator.baseUrl}/ja (now ${fx.emulator.baseUrl})`);
    expect(fx.seen('standard')).toHaveLength(1);
    expect(fx.emulator.stats().charactersCharged).toBe(0);
  });
});
