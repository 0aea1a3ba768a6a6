/**
 * Request bodies as @discordjs/rest sends them: JSON, or multipart/form-data with `files[N]` parts
 * and one `payload_json` part (https://discord.com/developers/docs/reference#uploading-files).
 * Multipart is parsed by Node's own `Response#formData()`.
 */
import { API_ERRORS, type ApiError } from '../errors.ts';

export interface UploadedFile {
  /** The form field, e.g. `files[0]`. */
  field: string;
  /** The filename from Content-Disposition. */
  name: string;
  contentType: string;
  data: Buffer;
}

/** A parsed body: the JSON (or payload_json), the files, and what the request log shows. */
type ParsedBody =
  { ok: true; json: unknown; files: UploadedFile[]; logged: unknown; form?: Record<string, string> } | { ok: false; error: ApiError };

/** Form fields that carry credentials: the request log shows them as `***`. */
const SECRET_FIELDS = new Set(['client_secret', 'code', 'code_verifier', 'refresh_token', 'token', 'access_token']);

/** Parses a request body by its Content-Type; an error result (never a throw) when it is malformed. */
export async function parseBody(raw: Buffer, contentType: string | undefined): Promise<ParsedBody> {
  if (raw.length === 0) return { ok: true, json: undefined, files: [], logged: undefined };
  if (contentType !== undefined && /^multipart\/form-data/i.test(contentType)) return parseMultipart(raw, contentType);
  // OAuth2's token endpoints take forms (RFC 6749); their secrets never reach the request log.
  if (contentType !== undefined && /^application\/x-www-form-urlencoded/i.test(contentType)) {
    const form = Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
    return { ok: true, json: undefined, files: [], logged: maskSecretFields(form), form };
  }
  if (contentType?.startsWith('application/json')) {
    try {
      const json: unknown = JSON.parse(raw.toString('utf8'));
      return { ok: true, json, files: [], logged: json };
    } catch {
      return { ok: false, error: API_ERRORS.invalidJson };
    }
  }
  return { ok: true, json: undefined, files: [], logged: raw.toString('utf8') };
}

/** `body` with its credential fields shown as `***` (OAuth2 requests, whatever their content type). */
export function maskSecretFields(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  return Object.fromEntries(Object.entries(body).map(([k, v]) => [k, SECRET_FIELDS.has(k) ? '***' : v]));
}

async function parseMultipart(raw: Buffer, contentType: string): Promise<ParsedBody> {
  let form: FormData;
  try {
    form = await new Response(raw, { headers: { 'content-type': contentType } }).formData();
  } catch {
    return { ok: false, error: API_ERRORS.invalidMultipart };
  }
  const files: UploadedFile[] = [];
  let payloadText: string | undefined;
  for (const [field, value] of form) {
    if (typeof value === 'string') {
      if (field === 'payload_json') payloadText = value;
      continue;
    }
    files.push({
      field,
      name: value.name,
      contentType: value.type || 'application/octet-stream',
      data: Buffer.from(await value.arrayBuffer()),
    });
  }
  let json: unknown;
  try {
    json = payloadText === undefined ? {} : JSON.parse(payloadText);
  } catch {
    return { ok: false, error: API_ERRORS.invalidJson };
  }
  return { ok: true, json, files, logged: { payload_json: json, files } };
}
