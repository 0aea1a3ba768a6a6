import { DiscordAPIError, HTTPError, RateLimitError } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { TtsServiceError } from '../../src/tts/errors.ts';
import { createLogger, redactRoutes, serializeError } from '../../src/util/log.ts';
import { captureLog, scanLog } from '../support/log-scan.ts';

// The one error serializer, checked on the error shapes discord.js really throws.
// The constructor arguments are those of @discordjs/rest 2.x (handleErrors in its Shared.ts).
const TOKEN = 'aW50ZXJhY3Rpb246MTIzNDU2Nzg5MDEyMzQ1Njc4OTA6c2VjcmV0';
const MP3 = Buffer.concat([Buffer.from('ID3'), Buffer.alloc(3_000, 0xab)]);
const base = 'https://discord.com/api/v10';

function webhook404() {
  return new DiscordAPIError(
    { message: 'Unknown Webhook', code: 10015 },
    10015,
    404,
    'PATCH',
    `${base}/webhooks/1200000000000000001/${TOKEN}/messages/%40original`,
    {
      files: [{ name: 'speech.mp3', data: MP3 }],
      body: { content: 'x', attachments: [{ id: 0, filename: 'speech.mp3' }] },
    },
  );
}

function logged(run: (logger: ReturnType<typeof createLogger>) => void, secrets: string[] = []) {
  const log = captureLog();
  run(createLogger({ level: 'trace', secrets, destination: log }));
  return log;
}

describe('serializeError', () => {
  it('keeps name, code, status, method and the route, never the URL token or the request body', () => {
    const out = serializeError(webhook404());
    expect(out).toMatchObject({
      type: 'DiscordAPIError[10015]',
      message: 'Unknown Webhook',
      code: 10015,
      status: 404,
      method: 'PATCH',
      route: '/api/v10/webhooks/1200000000000000001/:token/messages/@original',
    });
    expect(Object.keys(out)).not.toContain('requestBody');
    expect(Object.keys(out)).not.toContain('rawError');
    expect(JSON.stringify(out)).not.toContain(TOKEN);
  });

  it('replaces the token of an interaction callback (HTTPError) and drops the query', () => {
    const error = new HTTPError(
      500,
      'Internal Server Error',
      'POST',
      `${base}/interactions/1574145837209092097/${TOKEN}/callback?with_response=false`,
      { files: undefined, body: { type: 5 } },
    );
    expect(serializeError(error)).toMatchObject({
      type: 'HTTPError',
      status: 500,
      method: 'POST',
      route: '/api/v10/interactions/1574145837209092097/:token/callback',
    });
  });

  it("never copies a RateLimitError's major parameter or hash (both hold the webhook token)", () => {
    const error = new RateLimitError({
      timeToReset: 1_000,
      limit: 5,
      method: 'PATCH',
      hash: `abc:1200000000000000001/${TOKEN}`,
      url: `${base}/webhooks/1200000000000000001/${TOKEN}`,
      route: '/webhooks/:id/:token',
      majorParameter: `1200000000000000001/${TOKEN}`,
      global: false,
      retryAfter: 1_000,
      sublimitTimeout: 0,
      scope: 'user',
    });
    const out = serializeError(error);
    expect(out).toMatchObject({
      method: 'PATCH',
      route: '/api/v10/webhooks/1200000000000000001/:token',
      retryAfter: 1_000,
      global: false,
      scope: 'user',
    });
    expect(JSON.stringify(out)).not.toContain(TOKEN);
  });

  it('follows causes and AggregateError members, each the same way', () => {
    const wrapped = new Error('delivery failed', { cause: webhook404() });
    const out = serializeError(new AggregateError([wrapped, webhook404()], 'all failed'));
    expect(out.type).toBe('AggregateError');
    expect(out.errors).toHaveLength(2);
    expect(out).toMatchObject({
      errors: [{ message: 'delivery failed', cause: { code: 10015, route: expect.stringContaining(':token') } }, { status: 404 }],
    });
    expect(JSON.stringify(out)).not.toContain(TOKEN);
  });

  it('keeps the token-free context of our own errors', () => {
    const out = serializeError(
      new TtsServiceError('internal_error', {
        endpoint: 'standard',
        status: 500,
        attempts: 4,
        causeInfo: { name: 'SocketError', code: 'UND_ERR_SOCKET' },
      }),
    );
    expect(out).toMatchObject({
      type: 'TtsServiceError',
      code: 'internal_error',
      status: 500,
      context: { endpoint: 'standard', attempts: 4, causeInfo: { code: 'UND_ERR_SOCKET' } },
    });
  });

  it('serializes a thrown non-error value without inventing fields', () => {
    expect(serializeError('plain reason')).toEqual({ type: 'string', message: 'plain reason' });
  });
});

describe('createLogger', () => {
  it('serializes an error at `err`, at any other key, nested, and when logged directly', () => {
    const log = logged((logger) => {
      logger.warn({ err: webhook404() }, 'at err');
      logger.warn({ error: webhook404() }, 'at another key');
      logger.warn({ detail: { failures: [webhook404()] } }, 'nested');
      logger.error(webhook404());
      logger.child({ component: 'x' }).trace({ err: webhook404() }, 'child at trace');
    });
    expect(log.lines).toHaveLength(5);
    const records = log.records();
    expect(records[0]!.err).toMatchObject({ status: 404, route: expect.stringContaining('/:token/') });
    expect(records[1]!.error).toMatchObject({ status: 404 });
    expect(records[2]!.detail).toMatchObject({ failures: [{ code: 10015 }] });
    expect(records[3]).toMatchObject({ msg: 'Unknown Webhook', err: { code: 10015 } });
    expect(scanLog(log.lines, { 'interaction token': [TOKEN] })).toEqual([]);
    // A 3 KB attachment used to turn into a 6.8 KB+ line; now the line is about the size of the stack.
    for (const line of log.lines) expect(line.length).toBeLessThan(2_000);
  });

  it('still scrubs the given secret values and token paths from every line, messages included', () => {
    const secret = 'Bot.SeCrEt.VaLuE-123456';
    const log = logged(
      (logger) => {
        logger.info({ note: `token is ${secret}` }, `message with ${secret}`);
        logger.info(`posting to ${base}/webhooks/1/${TOKEN}/messages/@original`);
      },
      [secret],
    );
    expect(log.lines.join('')).not.toContain(secret);
    expect(log.lines.join('')).not.toContain(TOKEN);
    expect(log.lines[1]).toContain('/webhooks/1/:token/messages/@original');
  });

  it("redacts secret keys at depth as before (an utterance's meta.delivery.token too)", () => {
    const log = logged((logger) =>
      logger.info({ delivery: { token: TOKEN }, jobToken: 'x'.repeat(40), item: { meta: { delivery: { token: TOKEN } } } }, 'keys'),
    );
    expect(log.records()[0]).toMatchObject({
      delivery: { token: '[REDACTED]' },
      jobToken: '[REDACTED]',
      item: { meta: { delivery: { token: '[REDACTED]' } } },
    });
  });

  it('serializes an error given as a child logger binding', () => {
    const log = logged((logger) => {
      logger.child({ failure: webhook404() }).warn('bound');
      logger.child({ component: 'voice' }).child({ failure: webhook404() }).warn('bound to a grandchild');
    });
    expect(log.records()[0]).toMatchObject({ failure: { status: 404, route: expect.stringContaining(':token') } });
    expect(log.records()[1]).toMatchObject({ component: 'voice', failure: { status: 404 } });
    expect(scanLog(log.lines, { 'interaction token': [TOKEN] })).toEqual([]);
  });
});

describe('redactRoutes', () => {
  it.each([
    ['/interactions/123/abc.DEF-ghi_jk/callback', '/interactions/123/:token/callback'],
    ['https://discord.com/api/webhooks/123/abcdef', 'https://discord.com/api/webhooks/123/:token'],
    ['"/webhooks/1/tok/messages/@original"', '"/webhooks/1/:token/messages/@original"'],
    ['RateLimitError[/webhooks/:id/:token]', 'RateLimitError[/webhooks/:id/:token]'],
    ['/channels/123/messages', '/channels/123/messages'],
  ])('GIVEN %s THEN %s', (input, expected) => {
    expect(redactRoutes(input)).toBe(expected);
  });
});
