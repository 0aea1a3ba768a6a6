import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

// Unexpected errors are posted to the operator's ERROR_WEBHOOK_URL (a Discord webhook,
// or anything taking a JSON POST), each distinct error (same type, same place in the stack) at most once an
// hour, with how often it happened meanwhile (errorKey says what "the same" is). A report is built from the log line the error was
// written as, after the logger's serializer and secret scrubbing (src/util/log.ts): it can hold
// only what the logs hold (never a token or a message's text), plus guild and channel ids.
// The webhook URL is a secret too: it is never logged, and never part of an error message.

/** One pino record as written (a JSON line). */
interface LogRecord {
  level?: number;
  msg?: string;
  err?: { type?: string; message?: string; code?: string | number; stack?: string; status?: number };
  guildId?: string;
  channelId?: string;
  shardProcess?: number;
}

interface ErrorReporterOptions {
  url: string;
  /** At most one report per distinct error in this time. Default one hour. */
  intervalMs?: number;
  now?: () => number;
  /** A report could not be posted: only an HTTP status or an error code (the caller logs it, without the URL). */
  onFailure?: (problem: { status?: number; code?: string }) => void;
  /** Deadline of one POST. */
  timeoutMs?: number;
}

const ERROR_REPORT_DEFAULTS = {
  intervalMs: 3_600_000,
  now: Date.now,
  onFailure: () => {},
  timeoutMs: 10_000,
} as const satisfies Required<Omit<ErrorReporterOptions, 'url'>>;

/** pino levels: 50 error, 60 fatal. */
const ERROR_LEVEL = 50;
const MAX_CONTENT = 1_900;
const MAX_KEYS = 1_000;

/** Posts unexpected errors to a webhook, deduplicated by stack. */
export class ErrorReporter {
  readonly #url: URL;
  readonly #options: Required<Omit<ErrorReporterOptions, 'url'>>;
  /** Per distinct error: when it was last posted and how often it happened since. */
  readonly #seen = new Map<string, { postedAt: number; since: number }>();
  readonly #inFlight = new Set<Promise<void>>();

  constructor(options: ErrorReporterOptions) {
    this.#url = new URL(options.url);
    this.#options = {
      ...ERROR_REPORT_DEFAULTS,
      ...Object.fromEntries(Object.entries(options).filter(([k, v]) => k !== 'url' && v !== undefined)),
    };
  }

  /** Looks at one written log line; an error record (with an error object) may become a report. */
  consider(line: string): void {
    // Cheap filter first: most lines are info.
    if (!line.includes('"err"') || !/"level":(5|6)\d/.test(line)) return;
    let record: LogRecord;
    try {
      record = JSON.parse(line) as LogRecord;
    } catch {
      return;
    }
    if ((record.level ?? 0) >= ERROR_LEVEL && record.err && typeof record.err === 'object') this.report(record);
  }

  /** Reports `record` unless the same error was posted within the interval (then it is counted). */
  report(record: LogRecord): void {
    const key = errorKey(record);
    const now = this.#options.now();
    const seen = this.#seen.get(key);
    if (seen && now - seen.postedAt < this.#options.intervalMs) {
      seen.since += 1;
      return;
    }
    const repeats = seen?.since ?? 0;
    this.#seen.set(key, { postedAt: now, since: 0 });
    this.#prune(now);
    const post = this.#post(render(record, repeats)).finally(() => this.#inFlight.delete(post));
    this.#inFlight.add(post);
  }

  /** Resolves once every report started so far was posted or failed (a shutdown waits for it). */
  async flush(): Promise<void> {
    await Promise.all([...this.#inFlight]);
  }

  #prune(now: number): void {
    if (this.#seen.size <= MAX_KEYS) return;
    for (const [key, seen] of this.#seen) if (now - seen.postedAt >= this.#options.intervalMs) this.#seen.delete(key);
  }

  #post(payload: object): Promise<void> {
    const body = JSON.stringify(payload);
    const send = this.#url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<void>((resolve) => {
      const req = send(
        this.#url,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
          timeout: this.#options.timeoutMs,
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            if (status < 200 || status >= 300) this.#options.onFailure({ status });
            resolve();
          });
          res.on('error', () => resolve());
        },
      );
      // Only a code: a network error's message can name the host and path of the URL.
      req.on('timeout', () => req.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })));
      req.on('error', (error: NodeJS.ErrnoException) => {
        this.#options.onFailure({ code: error.code ?? 'request_failed' });
        resolve();
      });
      req.end(body);
    });
  }
}

/**
 * Same type, code and place = the same error, whatever its message says (ids, counts). The place
 * is the top frames in our own code: frames of libraries and of Node vary with the async path
 * that led there (the same await can resume from different callers), ours do not.
 */
function errorKey(record: LogRecord): string {
  const err = record.err ?? {};
  const frames = (err.stack ?? '')
    .split('\n')
    .filter((l) => /^\s+at /.test(l))
    .map((l) => l.trim().replace(/^at (async )?/, ''));
  const own = frames.filter((f) => !f.includes('/node_modules/') && !/\(?node:/.test(f) && !f.includes('<anonymous>'));
  const place = own.length > 0 ? own.slice(0, 5) : frames.slice(0, 3);
  return [err.type ?? 'Error', String(err.code ?? ''), ...(place.length > 0 ? place : [record.msg ?? '', err.message ?? ''])].join('\n');
}

/** The webhook payload (Discord's shape: `content`; no one is pinged). */
function render(record: LogRecord, repeats: number): object {
  const err = record.err ?? {};
  const where = [
    record.guildId ? `guild ${record.guildId}` : undefined,
    record.channelId ? `channel ${record.channelId}` : undefined,
    record.shardProcess !== undefined ? `process ${record.shardProcess}` : undefined,
  ].filter(Boolean);
  const head = [
    `**yomiage: ${record.level === 60 ? 'fatal' : 'error'}** ${record.msg ?? ''}`.trim(),
    `${err.type ?? 'Error'}${err.code !== undefined ? ` [${err.code}]` : ''}: ${err.message ?? ''}`,
    where.length > 0 ? where.join(', ') : undefined,
    repeats > 0 ? `${repeats} more time(s) since the last report of this error` : undefined,
  ].filter((l): l is string => l !== undefined);
  const frames = (err.stack ?? '')
    .split('\n')
    .filter((l) => /^\s+at /.test(l))
    .slice(0, 12)
    .join('\n');
  let content = head.join('\n');
  if (frames) content += `\n\`\`\`\n${frames.slice(0, Math.max(0, MAX_CONTENT - content.length - 10))}\n\`\`\``;
  return { content: content.slice(0, 2_000), allowed_mentions: { parse: [] } };
}

/** A pino destination that writes to `out` and lets `reporter` look at each line. */
export function reportingDestination(
  out: { write(line: string): unknown },
  reporter: Pick<ErrorReporter, 'consider'>,
): { write(line: string): void } {
  return {
    write(line: string) {
      out.write(line);
      reporter.consider(line);
    },
  };
}
