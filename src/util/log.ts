import pino from 'pino';

export type Logger = pino.Logger;

/** The part of a logger that library code calls (a pino Logger fits; tests pass a recorder). */
export interface LogSink {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** Keys whose values are secrets wherever they appear in a log record. */
const SECRET_KEYS = ['token', 'jobToken', 'job_token', 'authorization', 'Authorization', 'cookie', 'password', 'secret'];

/**
 * Discord REST paths whose segment after the id is a token: interaction callbacks
 * (`/interactions/{id}/{token}/callback`) and webhooks, interaction webhooks included
 * (`/webhooks/{app}/{token}/messages/@original`), whatever host or prefix is in front.
 */
const TOKEN_IN_PATH = /(\/(?:interactions|webhooks)\/[^/\s"'\\]+\/)[^/?#\s"'\\\])>,;]+/g;

/** `text` with the token of every Discord interaction or webhook path replaced by `:token`. */
export function redactRoutes(text: string): string {
  return text.replace(TOKEN_IN_PATH, '$1:token');
}

/** Own properties never copied from an error: they hold URLs, request bodies, files or headers. */
const UNSAFE_KEY =
  /^(?:url|uri|href|headers?|body|files?|data|raw\w*|hash|majorparameter|request(?:body|data|options)?|response|options|config|socket)$|url$|token|secret|password|cookie|authori[sz]ation/i;
const MAX_STRING = 2_000;
const MAX_DEPTH = 4;
const MAX_ERRORS = 10;

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/** Records this module produced, so serializing twice (formatter, then pino's `err`) is a no-op. */
const serialized = new WeakSet<object>();

function isErrorLike(value: unknown): value is Error {
  if (value instanceof Error) return true;
  if (typeof value !== 'object' || value === null || serialized.has(value)) return false;
  const v = value as { message?: unknown; stack?: unknown };
  return typeof v.message === 'string' && typeof v.stack === 'string';
}

function safeString(text: string): string {
  const scrubbed = redactRoutes(text);
  return scrubbed.length > MAX_STRING ? `${scrubbed.slice(0, MAX_STRING)}…` : scrubbed;
}

/** A primitive worth keeping as it is (strings are scrubbed and shortened). */
function safePrimitive(value: unknown): string | number | boolean | undefined {
  if (typeof value === 'string') return safeString(value);
  if (typeof value === 'number' || typeof value === 'boolean') return value;
  if (typeof value === 'bigint') return value.toString();
  return undefined;
}

/** The route of a request URL: path only (no host, no query), every token replaced. */
function routeOf(url: unknown): string | undefined {
  const text = url instanceof URL ? url.href : typeof url === 'string' ? url : undefined;
  if (!text) return undefined;
  const path = text.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '').split(/[?#]/)[0]!;
  let decoded = path;
  try {
    decoded = decodeURIComponent(path); // discord.js sends `@original` as `%40original`
  } catch {
    // keep it encoded
  }
  return redactRoutes(decoded || '/');
}

/**
 * Copies the safe primitive fields of an error (or of a small plain object in it, two levels down:
 * a TtsError's `context` and its `causeInfo`, a refusal's numbers).
 */
function safeFields(source: object, depth: number): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const [key, value] of Object.entries(source)) {
    if (UNSAFE_KEY.test(key)) continue;
    if (depth === 0 && (key === 'cause' || key === 'errors' || key === 'stack' || key === 'message' || key === 'name')) continue;
    const primitive = safePrimitive(value);
    if (primitive !== undefined) out[key] = primitive;
    else if (
      depth < 2 &&
      value &&
      typeof value === 'object' &&
      !Array.isArray(value) &&
      !isErrorLike(value) &&
      !ArrayBuffer.isView(value)
    ) {
      const nested = safeFields(value, depth + 1);
      if (Object.keys(nested).length > 0) out[key] = nested;
    }
  }
  return out;
}

/**
 * The one serializer for errors in logs: type, message, stack, code, HTTP status,
 * method and the route with every token replaced, the error's own small scalar fields (a
 * TtsError's context, a refusal's numbers), `cause` and AggregateError `errors` the same way.
 * Never a request body, files, headers, URL query or raw response: discord.js's DiscordAPIError
 * and HTTPError carry `url` (with the interaction token) and `requestBody.files` (the MP3).
 */
export function serializeError(error: unknown, depth = 0): Record<string, Json> {
  if (!isErrorLike(error)) {
    const primitive = safePrimitive(error);
    return { type: typeof error, message: primitive === undefined ? typeof error : String(primitive) };
  }
  const e = error as Error & Record<string, unknown>;
  const out: Record<string, Json> = {
    // `name` is a getter on some classes (DiscordAPIError[10015], RateLimitError[route]).
    type: safeString(typeof e.name === 'string' ? e.name : 'Error'),
    message: safeString(String(e.message)),
    ...safeFields(e, 0),
  };
  const code = safePrimitive(e.code);
  if (code !== undefined) out.code = code;
  const status = e.status ?? e.statusCode ?? (e.context as { status?: unknown } | undefined)?.status;
  if (typeof status === 'number') out.status = status;
  if (typeof e.method === 'string') out.method = e.method.slice(0, 16);
  const route = routeOf(e.url) ?? (typeof e.route === 'string' ? redactRoutes(e.route) : undefined);
  if (route) out.route = route;
  if (typeof e.stack === 'string') out.stack = safeString(e.stack);
  if (depth < MAX_DEPTH) {
    if (e.cause !== undefined) out.cause = serializeError(e.cause, depth + 1);
    if (Array.isArray(e.errors)) out.errors = e.errors.slice(0, MAX_ERRORS).map((inner) => serializeError(inner, depth + 1));
  }
  serialized.add(out);
  return out;
}

/** `value` with every error-like thing in it, at any key and depth, replaced by its serialization. */
function serializeErrorsIn(value: unknown, depth: number): unknown {
  if (isErrorLike(value)) return serializeError(value);
  if (depth >= MAX_DEPTH || typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) return value;
  if (Array.isArray(value)) {
    let changed = false;
    const mapped = value.map((item) => {
      const next = serializeErrorsIn(item, depth + 1);
      if (next !== item) changed = true;
      return next;
    });
    return changed ? mapped : value;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) return value;
  let copy: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    const next = serializeErrorsIn(item, depth + 1);
    if (next !== item) (copy ??= { ...value })[key] = next;
  }
  return copy ?? value;
}

/**
 * Structured logger (pino) that never writes a secret or a payload: every error anywhere in a
 * record goes through `serializeError`, known secret keys are redacted at any depth, and, as the
 * last line of defence, the values of the given secrets (the service token, the Discord token)
 * and the tokens in Discord interaction/webhook paths are scrubbed from every line written.
 */
export function createLogger(options: { level?: string; secrets?: string[]; destination?: pino.DestinationStream } = {}): Logger {
  const secrets = (options.secrets ?? []).filter((s) => s.length >= 8);
  const scrub = (text: string) => redactRoutes(secrets.reduce((out, secret) => out.split(secret).join('[REDACTED]'), text));
  const logger = pino(
    {
      level: options.level ?? 'info',
      redact: { paths: SECRET_KEYS.flatMap((k) => [k, `*.${k}`, `*.*.${k}`, `*.*.*.${k}`]), censor: '[REDACTED]' },
      // pino applies serializers to top-level keys only; the log formatter reaches the rest.
      serializers: { err: (value: unknown) => (isErrorLike(value) ? serializeError(value) : value) },
      formatters: { log: (record) => serializeErrorsIn(record, 0) as Record<string, unknown> },
      hooks: { streamWrite: scrub },
    },
    options.destination,
  );
  // Child bindings skip the log formatter; children inherit this `child` (pino: Object.create).
  type ChildFn = (this: unknown, bindings: pino.Bindings, childOptions?: unknown) => unknown;
  const childOf = logger.child as unknown as ChildFn;
  const child: ChildFn = function (this: unknown, bindings, childOptions) {
    return childOf.call(this, serializeErrorsIn(bindings, 0) as pino.Bindings, childOptions);
  };
  logger.child = child as unknown as typeof logger.child;
  return logger;
}
