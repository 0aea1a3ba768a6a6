/** POST /api/advanced-tts/ (spec: Advanced job creation, Authentication 1-3). */
import type { AccountState } from './accounts.ts';
import { header, parseCookies, type Reply, type RequestContext } from './http.ts';
import { advancedError, forbiddenHtml } from './replies.ts';
import type { ServiceState } from './service.ts';
import { codePointLength, parseJsonBody, validateAdvanced } from './validate.ts';

export function createJob(service: ServiceState, ctx: RequestContext): Reply {
  if (ctx.method !== 'POST') return { status: 405, headers: { Allow: 'POST' } };
  const auth = authenticate(service, ctx);
  if ('reply' in auth) return auth.reply;
  const { account } = auth;
  const now = service.now();
  // Counted per client IP (spec: Limits); a token request whose IP is unknown is counted per user.
  const rate = service.advancedRate.take(ctx.ip ?? `user:${account.userId}`, now);
  if (!rate.ok) {
    const retry_after = Math.max(1, Math.ceil(rate.retryInMs / 1000));
    return advancedError('rate_limited', { retry_after }, { 'Retry-After': String(retry_after) });
  }
  const parsed = parseJsonBody(ctx.raw);
  if (!parsed.ok) return advancedError('invalid_json');
  const checked = validateAdvanced(parsed.value, { plan: account.plan, blockList: service.options.blockList });
  if (!checked.ok) return advancedError(checked.error.code, {}, {}, checked.error.message);

  const request = checked.value;
  const chars = codePointLength(request.text);
  if (account.remaining < chars) return advancedError('quota_exceeded', { available: account.remaining });
  // Charged at creation; given back if the job fails (see README).
  service.charge(account, chars);
  const job = service.jobs.create({
    userId: account.userId,
    accountToken: account.token,
    audio: { kind: 'advanced', ...request },
    chars,
    now,
  });
  service.counters.jobsCreated++;
  service.planned.jobCreationsPerUserMinute.record(account.userId, now);
  service.planned.jobCreationsPerUserHour.record(account.userId, now);
  return {
    status: 202,
    json: {
      job_id: job.id,
      job_token: job.token,
      status: job.state.status,
      min_poll_after_ms: service.options.jobs.minPollAfterMs,
      poll_url: `/api/advanced-tts/jobs/${job.id}/`,
    },
  };
}

/** Spec: Authentication 3. Token header, else a logged-in session passing the CSRF checks. */
function authenticate(service: ServiceState, ctx: RequestContext): { account: AccountState } | { reply: Reply } {
  const token = header(ctx.req, 'token');
  if (token !== undefined) {
    const account = token.length === 64 ? service.accounts.byToken(token) : undefined;
    return account ? { account } : { reply: advancedError('invalid_token') };
  }
  const cookies = parseCookies(header(ctx.req, 'cookie'));
  const session = cookies.sessionid === undefined ? undefined : service.accounts.bySession(cookies.sessionid);
  if (!session) {
    if (ctx.ip === null) return { reply: advancedError('client_ip_unresolved') };
    return { reply: forbiddenHtml('not_logged_in') };
  }
  const csrf = cookies.csrftoken;
  if (!csrf || header(ctx.req, 'x-csrftoken') !== csrf || !refererOk(service, header(ctx.req, 'referer'))) {
    return { reply: forbiddenHtml('csrf') };
  }
  return { account: session };
}

/** The Referer must be the advanced-speech page: {base_url}/<locale>/advanced-tts-beta/. */
function refererOk(service: ServiceState, referer: string | undefined): boolean {
  if (!referer) return false;
  return [service.publicBase, service.baseUrl].some((base) => {
    if (!referer.startsWith(`${base}/`)) return false;
    return /^[A-Za-z]{2}(?:[-_][A-Za-z0-9]{2,8})?\/advanced-tts-beta\/(?:[?#].*)?$/.test(referer.slice(base.length + 1));
  });
}
