/**
 * A small multipart/form-data parser (RFC 7578) for the bodies @discordjs/rest sends with files:
 * `files[N]` parts plus one `payload_json` part. Busboy is not installed; undici's FormData
 * serialisation is plain multipart with CRLF line breaks.
 */

export interface UploadedFile {
  /** The form field, e.g. `files[0]`. */
  field: string;
  /** The filename from Content-Disposition. */
  name: string;
  contentType: string;
  data: Buffer;
}

export interface MultipartBody {
  fields: Record<string, string>;
  files: UploadedFile[];
}

export type MultipartResult = { ok: true; value: MultipartBody } | { ok: false; error: string };

/** Extracts the boundary from a multipart Content-Type header, or undefined. */
export function multipartBoundary(contentType: string | undefined): string | undefined {
  if (!contentType || !/^multipart\/form-data/i.test(contentType)) return undefined;
  const match = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return match?.[1] ?? match?.[2];
}

const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');

/** Parses a multipart/form-data body; returns an error result instead of throwing. */
export function parseMultipart(body: Buffer, boundary: string): MultipartResult {
  const delimiter = Buffer.from(`--${boundary}`);
  const fields: Record<string, string> = {};
  const files: UploadedFile[] = [];
  let pos = body.indexOf(delimiter);
  if (pos === -1) return { ok: false, error: 'boundary not found' };
  for (;;) {
    pos += delimiter.length;
    // "--" right after a delimiter closes the body.
    if (body[pos] === 0x2d && body[pos + 1] === 0x2d) break;
    if (!body.subarray(pos, pos + 2).equals(CRLF)) return { ok: false, error: 'malformed delimiter line' };
    pos += 2;
    const headerEnd = body.indexOf(HEADER_END, pos);
    if (headerEnd === -1) return { ok: false, error: 'unterminated part headers' };
    const headers = parseHeaders(body.subarray(pos, headerEnd).toString('utf8'));
    const dataStart = headerEnd + HEADER_END.length;
    const next = body.indexOf(Buffer.concat([CRLF, delimiter]), dataStart);
    if (next === -1) return { ok: false, error: 'unterminated part' };
    const data = body.subarray(dataStart, next);
    const disposition = headers['content-disposition'];
    if (!disposition) return { ok: false, error: 'part without Content-Disposition' };
    const name = dispositionParam(disposition, 'name');
    if (name === undefined) return { ok: false, error: 'part without a name' };
    const filename = dispositionParam(disposition, 'filename');
    if (filename === undefined) {
      fields[name] = data.toString('utf8');
    } else {
      files.push({
        field: name,
        name: filename,
        contentType: headers['content-type'] ?? 'application/octet-stream',
        data: Buffer.from(data),
      });
    }
    pos = next + CRLF.length;
  }
  return { ok: true, value: { fields, files } };
}

function parseHeaders(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of text.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return headers;
}

// undici percent-encodes `"`, CR and LF inside quoted names (WHATWG multipart encoding rules).
function dispositionParam(disposition: string, param: string): string | undefined {
  const match = new RegExp(`;\\s*${param}="((?:[^"\\\\]|\\\\.)*)"`, 'i').exec(disposition);
  if (!match?.[1] && match?.[1] !== '') return undefined;
  return match[1].replace(/%22/g, '"').replace(/%0D/gi, '\r').replace(/%0A/gi, '\n').replace(/\\(.)/g, '$1');
}
