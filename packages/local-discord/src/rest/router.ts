/**
 * REST routing for the local Discord: routes are `METHOD /path/:param` patterns over the path after
 * `/api/v10`, each answering a status and a JSON body (or one of Discord's JSON errors).
 */
import { API_ERRORS, type ApiError } from '../errors.ts';
import type { FakeBot } from '../types.ts';
import type { UploadedFile } from './body.ts';

export interface RequestContext {
  params: Record<string, string>;
  query: URLSearchParams;
  /** JSON body or multipart payload_json. */
  json: unknown;
  files: UploadedFile[];
  /** The bot whose token authorised the request (the main bot on routes without `auth`). */
  bot: FakeBot;
  /** An application/x-www-form-urlencoded body (OAuth2's token endpoints). */
  form?: Record<string, string>;
  /** The raw Authorization header (OAuth2's Basic client authentication). */
  authorization?: string;
}

export type RouteResult = { status: number; body?: unknown } | ApiError;

type Handler = (ctx: RequestContext) => RouteResult;

interface Route {
  method: string;
  segments: string[];
  auth: boolean;
  handler: Handler;
}

export function ok(body: unknown, status = 200): RouteResult {
  return { status, body };
}

export const NO_CONTENT: RouteResult = { status: 204 };

export class Router {
  readonly #routes: Route[] = [];
  readonly #bot: (authorization: string | undefined) => FakeBot | undefined;
  readonly #mainBot: FakeBot;

  /** `bot`: the bot an `Authorization: Bot <token>` header names, which routes with `auth` require. */
  constructor(bot: (authorization: string | undefined) => FakeBot | undefined, mainBot: FakeBot) {
    this.#bot = bot;
    this.#mainBot = mainBot;
  }

  /** Adds a route; `auth: false` for the interaction endpoints, which Discord authorises by their token. */
  on(method: string, path: string, handler: Handler, auth = true): void {
    this.#routes.push({ method, segments: path.split('/').slice(1), auth, handler });
  }

  /** Runs the first route matching `method` and the decoded path `segments`; 404 when none does. */
  route(
    method: string,
    segments: readonly string[],
    authorization: string | undefined,
    ctx: Omit<RequestContext, 'params' | 'bot'>,
  ): RouteResult {
    for (const route of this.#routes) {
      if (route.method !== method || route.segments.length !== segments.length) continue;
      const params = matchSegments(route.segments, segments);
      if (!params) continue;
      const bot = route.auth ? this.#bot(authorization) : this.#mainBot;
      if (!bot) return API_ERRORS.unauthorized;
      return route.handler({ ...ctx, params, bot, ...(authorization === undefined ? {} : { authorization }) });
    }
    return API_ERRORS.notFound;
  }
}

function matchSegments(pattern: readonly string[], actual: readonly string[]): Record<string, string> | undefined {
  const params: Record<string, string> = {};
  for (const [i, part] of pattern.entries()) {
    const value = actual[i] as string;
    if (part.startsWith(':')) params[part.slice(1)] = value;
    else if (part !== value) return undefined;
  }
  return params;
}
