/**
 * The /__emulator/ control API (on with the `control` option): the programmatic controls of the
 * running emulator over HTTP, for tests in another process and for trying faults by hand.
 * Documented in this package's README.md; each route mirrors one method of `Emulator`.
 */
import { z } from 'zod';
import type { Reply } from './http.ts';
import type { Emulator, Target } from './types.ts';
import { parseJsonBody } from './validate.ts';

/** What the control API drives: the emulator's own controls, and account upserts. */
export interface ControlTarget extends Pick<
  Emulator,
  'requests' | 'clearRequests' | 'injectFault' | 'setLatency' | 'nextJobs' | 'accounts' | 'stats' | 'reset'
> {
  upsertAccount(patch: { token: string; remaining?: number | undefined; plan?: 'free' | 'paid' | undefined }): {
    userId: string;
    plan: 'free' | 'paid';
    remaining: number;
  };
}

export const TARGETS = ['standard', 'advanced', 'poll', 'audio'] as const satisfies readonly Target[];

const faultSchema = z.object({
  target: z.enum(TARGETS),
  count: z.number().int().min(1),
  status: z.number().int().min(100).max(599),
  body: z.unknown().optional(),
  code: z.string().min(1).optional(),
  headers: z.record(z.string(), z.string()).optional(),
  delayMs: z.number().min(0).optional(),
  chargeFirst: z.boolean().optional(),
});
const latencySchema = z.object({ target: z.enum([...TARGETS, 'all']), ms: z.number().min(0) });
const jobOutcomeSchema = z.object({
  count: z.number().int().min(1).optional(),
  outcome: z.enum(['succeed', 'fail', 'stay_pending', 'timeout']),
  code: z.string().min(1).optional(),
});
const accountSchema = z.object({
  token: z.string().min(1),
  remaining: z.number().int().min(0).optional(),
  plan: z.enum(['free', 'paid']).optional(),
});

type Handler = (target: ControlTarget, raw: string) => Reply;

const DONE: Reply = { status: 200, json: { ok: true } };

/** A route whose JSON body must match `schema`; answers `apply`'s result, or `{ok: true}`. */
function withBody<T>(schema: z.ZodType<T>, apply: (target: ControlTarget, body: T) => unknown): Handler {
  return (target, raw) => {
    const parsed = parseJsonBody(raw);
    const checked = schema.safeParse(parsed.ok ? parsed.value : undefined);
    if (!checked.success) return { status: 400, json: { error: z.prettifyError(checked.error) } };
    return { status: 200, json: apply(target, checked.data) ?? { ok: true } };
  };
}

const ROUTES: Record<string, Handler> = {
  'GET /__emulator/requests': (t) => ({ status: 200, json: t.requests() }),
  'DELETE /__emulator/requests': (t) => {
    t.clearRequests();
    return DONE;
  },
  'POST /__emulator/faults': withBody(faultSchema, (t, f) => t.injectFault(f)),
  'POST /__emulator/latency': withBody(latencySchema, (t, l) => t.setLatency(l.target, l.ms)),
  'POST /__emulator/jobs': withBody(jobOutcomeSchema, (t, o) => t.nextJobs(o)),
  'PUT /__emulator/accounts': withBody(accountSchema, (t, a) => {
    const { userId, plan, remaining } = t.upsertAccount(a);
    return { userId, plan, remaining };
  }),
  'GET /__emulator/accounts': (t) => ({ status: 200, json: t.accounts() }),
  'GET /__emulator/stats': (t) => ({ status: 200, json: t.stats() }),
  'POST /__emulator/reset': (t) => {
    t.reset();
    return DONE;
  },
};

/** Answers one control request (a trailing slash is optional). */
export function controlReply(target: ControlTarget, method: string, path: string, raw: string): Reply {
  const route = `${method} ${path.replace(/\/+$/, '')}`;
  const handler = ROUTES[route];
  return handler ? handler(target, raw) : { status: 404, json: { error: `no control route ${route}` } };
}
