/** POST /text_to_speech_api/ (spec: Standard speech request and response, Notice responses). */
import { audioHash, type AudioInput } from './audio.ts';
import { header, type Reply, type RequestContext } from './http.ts';
import { NOTICE_TEXT, STANDARD_ERRORS } from './messages.ts';
import { standardError } from './replies.ts';
import type { ServiceState } from './service.ts';
import { codePointLength, parseJsonBody, validateStandard } from './validate.ts';

/** The voice notice audio is read in. */
const NOTICE_VOICE = 'ja-JP-Wavenet-B';

export async function standardSpeech(service: ServiceState, ctx: RequestContext): Promise<Reply> {
  if (ctx.method !== 'POST') return { status: 405, headers: { Allow: 'POST' } };
  // Every request is counted, authenticated or not (spec: Limits, per client IP, shared across tokens).
  const rate = service.standardRate.take(ctx.ip ?? 'unresolved', service.now());
  if (!rate.ok) {
    const reset_in = Math.max(1, Math.ceil(rate.retryInMs / 1000));
    return standardError(429, STANDARD_ERRORS.rateLimited, { reset_in });
  }
  const token = header(ctx.req, 'token');
  if (token === undefined || token.length !== 64) return standardError(400, STANDARD_ERRORS.tokenMissing);
  const account = service.accounts.byToken(token);
  if (!account) return standardError(400, STANDARD_ERRORS.tokenMismatch);
  const parsed = parseJsonBody(ctx.raw);
  const checked = validateStandard(parsed.ok ? parsed.value : undefined, service.voices);
  if (!checked.ok) return standardError(400, checked.error);

  const input: AudioInput = { kind: 'standard', ...checked.value };
  const hash = audioHash(input);
  if (service.options.synthesisDelayMs > 0) await service.options.sleep(service.options.synthesisDelayMs);
  const seen = account.history.get(hash);
  if (seen !== undefined) {
    // Served from the account's history: not charged again (as the service documents).
    await service.audio.bytes(input);
    return standardOk(service, input, seen, 1);
  }
  const chars = codePointLength(input.text);
  if (account.remaining < chars) return notice(service);
  service.charge(account, chars);
  try {
    await service.audio.bytes(input);
  } catch (error) {
    service.refund(account, chars);
    throw error;
  }
  const pk = service.nextPk();
  account.history.set(hash, pk);
  return standardOk(service, input, pk, 1);
}

function standardOk(service: ServiceState, input: AudioInput, pk: number, share: number): Reply {
  const hash = service.audio.register(input);
  return { status: 200, json: { text: input.text, url: `${service.publicBase}/media/${hash}.mp3`, pk, share } };
}

/** Spec: Notice responses. HTTP 200, the notice's own text and audio, share 0, nothing charged. */
async function notice(service: ServiceState): Promise<Reply> {
  const input: AudioInput = { kind: 'standard', text: NOTICE_TEXT, voice: NOTICE_VOICE, speed: 1, pitch: 0 };
  await service.audio.bytes(input);
  service.noticePk ??= service.nextPk();
  service.counters.notices++;
  return { ...standardOk(service, input, service.noticePk, 0), code: 'notice' };
}
