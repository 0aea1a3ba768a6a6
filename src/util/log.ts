import pino from 'pino';

export type Logger = pino.Logger;

/** Keys whose values are secrets wherever they appear in a log record. */
const SECRET_KEYS = ['token', 'jobToken', 'job_token', 'authorization', 'Authorization', 'cookie', 'password', 'secret'];

/**
 * Structured logger (pino) that never writes a secret: known secret keys are redacted at any
 * depth, and the values of the given secrets (the service token, the Discord token) are scrubbed
 * from every string in the record, messages and error stacks included.
 */
export function createLogger(options: { level?: string; secrets?: string[]; destination?: pino.DestinationStream } = {}): Logger {
  const secrets = (options.secrets ?? []).filter((s) => s.length >= 8);
  const scrub = (text: string) => secrets.reduce((out, secret) => out.split(secret).join('[REDACTED]'), text);
  return pino(
    {
      level: options.level ?? 'info',
      redact: { paths: [...SECRET_KEYS, ...SECRET_KEYS.map((k) => `*.${k}`), ...SECRET_KEYS.map((k) => `*.*.${k}`)], censor: '[REDACTED]' },
      hooks: {
        // Last line of defence: whatever was serialised, no known secret value leaves the process.
        streamWrite: secrets.length ? scrub : undefined,
      },
    },
    options.destination,
  );
}

/** A logger that discards everything (tests, tools). */
export const silentLogger: Logger = pino({ level: 'silent' });
