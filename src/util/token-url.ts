import { z } from 'zod';

/** 127.0.0.0/8, ::1 or localhost, as `new URL().hostname` spells them. */
function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/**
 * A URL a token travels to (the bot token, the TTS token, a webhook's own token in its path):
 * https, or plain http only to this machine, where nobody on the network reads it. `what` follows
 * "must be an http(s) URL" in the message.
 */
export const tokenUrl = (what = '') =>
  z
    .url({ protocol: /^https?$/, error: `must be an http(s) URL${what}` })
    // Only plain http is this check's business (z.url reports the rest).
    .refine((v) => !URL.canParse(v) || new URL(v).protocol !== 'http:' || isLoopbackHost(new URL(v).hostname), {
      error: 'must be https: a token is sent to it, and plain http is allowed only to a loopback host (127.0.0.0/8, ::1, localhost)',
    });
