import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ErrorReporter, reportingDestination } from '../../src/ops/error-reports.ts';
import { TtsServiceError } from '../../src/tts/errors.ts';
import { createLogger } from '../../src/util/log.ts';
import { startWebhookReceiver } from '../support/ops.ts';

// Error reports over real HTTP to a loopback webhook, with a clock the test moves.
const HOUR = 3_600_000;
let webhook: Awaited<ReturnType<typeof startWebhookReceiver>>;
let now = 0;

beforeAll(async () => {
  webhook = await startWebhookReceiver();
});
afterAll(() => webhook.close());
beforeEach(() => {
  webhook.posts.length = 0;
  now = 1_000_000;
});

/** A logger writing nowhere but into a reporter, as src/main.ts builds it. */
function setup(secrets: string[] = []) {
  const failures: unknown[] = [];
  const reporter = new ErrorReporter({
    url: `${webhook.url}/api/webhooks/1/secret-path`,
    now: () => now,
    onFailure: (p) => failures.push(p),
  });
  const logger = createLogger({ level: 'info', secrets, destination: reportingDestination({ write: () => true }, reporter) });
  return { reporter, logger, failures };
}

/** The same throw site every call: one stack. */
function failAt(message: string): Error {
  return new Error(message);
}

describe('ErrorReporter', () => {
  it('posts an unexpected error once an hour per distinct stack, then says how often it recurred', async () => {
    const { reporter, logger } = setup();
    // One throw site (one stack), other messages and places: at 0, within the hour twice, after it.
    const steps = [
      { advance: 0, message: 'first 123', guildId: '111', posts: 1 },
      { advance: HOUR - 1, message: 'second 456', guildId: '111', posts: 1 },
      { advance: 0, message: 'third 789', guildId: '333', posts: 1 },
      { advance: 2, message: 'fourth', guildId: '111', posts: 2 },
    ];
    for (const step of steps) {
      now += step.advance;
      logger.error({ err: failAt(step.message), guildId: step.guildId, channelId: '222' }, 'auto-read failed');
      await reporter.flush();
      expect(webhook.posts, step.message).toHaveLength(step.posts);
    }
    expect(webhook.posts[1]!.body.content).toContain('2 more time(s)');
    expect(webhook.posts[0]!.body.content).toContain('guild 111, channel 222');
    expect(webhook.posts[0]!.body.content).toContain('first 123');
    expect(webhook.posts[0]!.body.content).toMatch(/```\n\s*at /);
    expect(webhook.posts[0]!.path).toBe('/api/webhooks/1/secret-path');
  });

  it('reports distinct errors separately, and not warnings, info, or error lines without an error', async () => {
    const { reporter, logger } = setup();
    logger.error({ err: new Error('a') }, 'one place');
    logger.error({ err: new TypeError('b') }, 'another place');
    logger.warn({ err: new Error('c') }, 'a warning');
    logger.info({ guildId: '1' }, 'info');
    logger.error({ guildId: '1' }, 'an error line without an error object');
    logger.fatal({ err: new Error('d') }, 'fatal');
    await reporter.flush();
    expect(webhook.posts.map((p) => p.body.content!.split('\n')[0])).toEqual([
      '**yomiage: error** one place',
      '**yomiage: error** another place',
      '**yomiage: fatal** fatal',
    ]);
  });

  it('holds only what the scrubbed log line holds: no token, no interaction token, no request body', async () => {
    const ttsToken = 'T'.repeat(64);
    const { reporter, logger } = setup([ttsToken]);
    const discordish = Object.assign(new Error(`failed with ${ttsToken}`), {
      url: 'https://discord.com/api/v10/interactions/123/aW50ZXJhY3Rpb24tdG9rZW4/callback',
      requestBody: { json: { content: 'the member wrote this' } },
      method: 'POST',
    });
    logger.error({ err: discordish, guildId: '9', channelId: '8' }, 'command failed');
    logger.error({ err: new TtsServiceError('bad_response', { endpoint: 'standard', status: 200, attempts: 1 }) }, 'speech failed');
    await reporter.flush();
    const all = JSON.stringify(webhook.posts);
    expect(webhook.posts).toHaveLength(2);
    for (const secret of [ttsToken, 'aW50ZXJhY3Rpb24tdG9rZW4', 'the member wrote this']) expect(all).not.toContain(secret);
    expect(all).toContain('[REDACTED]');
    expect(webhook.posts[1]!.body.content).toContain('TtsServiceError [bad_response]');
  });

  it('a webhook that fails or is unreachable is told to onFailure with a status or code only, and never throws', async () => {
    const failing = new ErrorReporter({ url: 'http://127.0.0.1:1/api/webhooks/1/secret-path', onFailure: (p) => problems.push(p) });
    const problems: unknown[] = [];
    failing.report({ level: 50, msg: 'x', err: { type: 'Error', message: 'm', stack: 'Error: m\n    at here (file.ts:1:1)' } });
    await failing.flush();
    await vi.waitUntil(async () => problems.length === 1, { timeout: 5_000, interval: 50, message: 'the failure told' });
    expect(problems[0]).toEqual({ code: 'ECONNREFUSED' });
    expect(JSON.stringify(problems)).not.toContain('secret-path');
  });
});
