/**
 * The error answers of the emulated service, shaped as the spec's Errors section gives them, and
 * the answers of injected faults (which default to those same shapes).
 */
import type { Reply } from './http.ts';
import { ADVANCED_ERRORS, FORBIDDEN_HTML, POLL_ERRORS, STANDARD_ERRORS, jobFailureMessage, type AdvancedErrorCode } from './messages.ts';
import type { Fault, Target } from './types.ts';

/** A standard endpoint error: `{error}` with the spec's exact English message. */
export function standardError(status: number, error: string, extra: Record<string, unknown> = {}): Reply {
  return { status, json: { error, ...extra }, code: error };
}

/** An advanced creation error: `{code, error}` with the code's status and Japanese message. */
export function advancedError(
  code: AdvancedErrorCode,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
  message?: string,
): Reply {
  const { status, error } = ADVANCED_ERRORS[code];
  const json: Record<string, unknown> = { code, error: message ?? error, ...extra };
  if (code === 'unsupported_location') json.error_code = 'UNSUPPORTED_LOCATION';
  return { status, json, headers, code };
}

export function pollError(code: keyof typeof POLL_ERRORS): Reply {
  const { status, error } = POLL_ERRORS[code];
  return { status, json: { code, error }, code };
}

/** Session authentication failures answer with Django's HTML 403 page. */
export function forbiddenHtml(code: 'csrf' | 'not_logged_in'): Reply {
  return { status: 403, text: FORBIDDEN_HTML, contentType: 'text/html; charset=utf-8', code };
}

/** Errors of the audio bucket, shaped like Cloud Storage's XML errors. */
export function storageError(status: number, code: string, message: string): Reply {
  const text = `<?xml version='1.0' encoding='UTF-8'?><Error><Code>${code}</Code><Message>${message}</Message></Error>`;
  return { status, text, contentType: 'application/xml; charset=UTF-8', code };
}

/** What a target answers when its handler throws. */
export function internalError(target: Target | 'other'): Reply {
  if (target === 'standard') return standardError(500, STANDARD_ERRORS.internal);
  if (target === 'advanced' || target === 'poll') return advancedError('internal_error');
  return { status: 500 };
}

/**
 * The response of an injected fault. An undefined body means "what the service sends with that
 * status", when the spec defines one; null means no body; a string is sent as HTML.
 */
export function faultReply(f: Fault): Reply {
  const headers = { ...f.headers };
  const body = f.body !== undefined ? f.body : f.code !== undefined ? codeBody(f.code) : defaultFaultBody(f.target, f.status);
  if (body === null || body === undefined) return { status: f.status, headers, code: 'fault' };
  if (typeof body === 'string') return { status: f.status, text: body, contentType: 'text/html; charset=utf-8', headers, code: 'fault' };
  if (f.status === 429 && f.target === 'advanced' && !Object.keys(headers).some((h) => h.toLowerCase() === 'retry-after')) {
    const retryAfter = (body as { retry_after?: unknown }).retry_after;
    if (typeof retryAfter === 'number') headers['Retry-After'] = String(retryAfter);
  }
  const code = typeof (body as { code?: unknown }).code === 'string' ? (body as { code: string }).code : 'fault';
  return { status: f.status, json: body, headers, code };
}

/** The spec's JSON body for an advanced or polling error code (unknown codes get a generic message). */
function codeBody(code: string): Record<string, unknown> {
  if (code in ADVANCED_ERRORS)
    return advancedError(code as AdvancedErrorCode, code === 'rate_limited' ? { retry_after: 1 } : {}).json as Record<string, unknown>;
  if (code in POLL_ERRORS) return pollError(code as keyof typeof POLL_ERRORS).json as Record<string, unknown>;
  return { code, error: jobFailureMessage(code) };
}

function defaultFaultBody(target: Target, status: number): unknown {
  if (target === 'standard') {
    if (status === 429) return { error: STANDARD_ERRORS.rateLimited, reset_in: 1 };
    if (status >= 500) return { error: STANDARD_ERRORS.internal };
    return null;
  }
  if (target === 'audio') return null;
  if (status === 403) return target === 'poll' ? codeBody('forbidden') : FORBIDDEN_HTML;
  if (status === 404 && target === 'poll') return codeBody('not_found');
  if (status === 429) return codeBody('rate_limited');
  if (status === 503) return codeBody('tts_retry_exhausted');
  if (status >= 500) return codeBody('internal_error');
  return null;
}
