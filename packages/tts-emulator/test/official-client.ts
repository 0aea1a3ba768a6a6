/**
 * The request shapes of the service's own official client, the WordPress plugin "text-to-speech
 * Ondoku" 1.0.21 (read from the public mirror common-repository/ondoku: `ondokusan.php` sets the
 * URL `https://ondoku3.com/ja/text_to_speech_api/`; `classes/hooks.php` `read_ondoku()` posts a
 * published post's text; `classes/core.php` `token_check()` posts "Hi"; `classes/setting.php`
 * saves speed and pitch with `sanitize_text_field`, so they are strings after the first save and
 * the integers 1 and 0 before it). Both calls go through `wp_remote_post` with `httpversion`
 * '1.0', the headers `token` and `content-Type: application/json;`, and `json_encode` of
 * `{pitch, speed, text, voice}` in that order. Replayed byte by byte over a raw socket, so nothing
 * in between (fetch, undici) normalises the version or the header spelling.
 */
import { connect } from 'node:net';

/** The plugin's API path (ondokusan.php, ONDOKUSAN_API). */
export const PLUGIN_PATH = '/ja/text_to_speech_api/';

/** PHP's json_encode with default flags: non-ASCII as \uXXXX escapes and "/" as "\/". */
export function phpJsonEncode(value: unknown): string {
  return JSON.stringify(value)
    .replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .replaceAll('/', '\\/');
}

/** The plugin's body: keys in its order; speed and pitch as saved by its settings form. */
export function pluginBody(o: { pitch: string | number; speed: string | number; text: string; voice: string }): string {
  return phpJsonEncode({ pitch: o.pitch, speed: o.speed, text: o.text, voice: o.voice });
}

export interface RawResponse {
  /** The status line as sent, e.g. "HTTP/1.1 200 OK". */
  statusLine: string;
  status: number;
  /** Header names lower-cased. */
  headers: Record<string, string>;
  body: string;
  json: any;
}

/**
 * One HTTP/1.0 request written by hand over node:net, read until the server closes the connection
 * (HTTP/1.0 without keep-alive). `headers` are sent exactly as given, in order and spelling.
 */
export function rawHttp10(baseUrl: string, method: string, path: string, headers: [string, string][], body = ''): Promise<RawResponse> {
  const { hostname, port, host } = new URL(baseUrl);
  const payload = Buffer.from(body, 'utf8');
  const lines = [`${method} ${path} HTTP/1.0`, `Host: ${host}`, ...headers.map(([k, v]) => `${k}: ${v}`)];
  if (method !== 'GET' && method !== 'HEAD') lines.push(`Content-Length: ${payload.length}`);
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port) });
    const chunks: Buffer[] = [];
    socket.setTimeout(15_000, () => socket.destroy(new Error('no answer within 15 s')));
    // Write without half-closing: like cURL, keep our side open until the server closes.
    socket.on('connect', () => socket.write(Buffer.concat([head, payload])));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => {
      const raw = Buffer.concat(chunks);
      const split = raw.indexOf('\r\n\r\n');
      if (split < 0) return reject(new Error(`no header end in ${JSON.stringify(raw.toString('latin1'))}`));
      const [statusLine = '', ...headerLines] = raw.subarray(0, split).toString('latin1').split('\r\n');
      const headersOut: Record<string, string> = {};
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        headersOut[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const bodyOut = raw.subarray(split + 4).toString('utf8');
      let json: unknown;
      try {
        json = JSON.parse(bodyOut);
      } catch {
        json = undefined;
      }
      resolve({ statusLine, status: Number(statusLine.split(' ')[1]), headers: headersOut, body: bodyOut, json });
    });
  });
}

/**
 * The headers of the plugin's wp_remote_post: `token` and `content-Type` are the plugin's own
 * (spelling kept), the User-Agent and Accept-Encoding are what WordPress adds to every request.
 */
export function pluginHeaders(token: string): [string, string][] {
  return [
    ['User-Agent', 'WordPress/6.5; https://blog.example'],
    ['Accept', '*/*'],
    ['Accept-Encoding', 'deflate, gzip, br'],
    ['token', token],
    ['content-Type', 'application/json;'],
    ['Connection', 'close'],
  ];
}

/** The plugin's token check (core.php token_check): "Hi" with the saved settings; 400 means a bad token. */
export function pluginTokenCheck(
  baseUrl: string,
  token: string,
  settings: { pitch: string | number; speed: string | number; voice: string },
) {
  return rawHttp10(baseUrl, 'POST', PLUGIN_PATH, pluginHeaders(token), pluginBody({ ...settings, text: 'Hi' }));
}

/** The plugin's call on publishing a post (hooks.php read_ondoku): tags and newlines stripped. */
export function pluginPublish(
  baseUrl: string,
  token: string,
  post: string,
  settings: { pitch: string | number; speed: string | number; voice: string },
) {
  const text = post.replace(/<[^>]*>/g, '').replace(/\r\n|\n|\r/g, '');
  return rawHttp10(baseUrl, 'POST', PLUGIN_PATH, pluginHeaders(token), pluginBody({ ...settings, text }));
}
