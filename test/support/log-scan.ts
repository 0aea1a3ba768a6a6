/**
 * A log destination that keeps every line, and a scanner for what must never be in a log line:
 * given secret values, Discord webhook URLs that still carry their token, and payloads (a run of
 * base64 or of binary over 256 bytes, a JSON-serialised Buffer).
 */

export interface CapturedLog {
  lines: string[];
  write(line: string): void;
  /** Parsed records (every line is one JSON object). */
  records(): Array<Record<string, unknown> & { msg?: string; level: number }>;
}

export function captureLog(): CapturedLog {
  const lines: string[] = [];
  return {
    lines,
    write: (line) => void lines.push(line),
    records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown> & { msg?: string; level: number }),
  };
}

const PAYLOAD_BYTES = 256;
/** Base64 / base64url, as text: a run longer than 256 characters is a payload, not a field. */
const BASE64_RUN = new RegExp(`[A-Za-z0-9+/_-]{${PAYLOAD_BYTES},}`);
/** A JSON byte array (what `Buffer.toJSON` turns a file into). */
const BYTE_ARRAY = new RegExp(`(?:\\b\\d{1,3},){${PAYLOAD_BYTES - 1},}\\d{1,3}\\b`);
/** A webhook URL or path that still carries a token (the serializer writes `:token`). */
const WEBHOOK_WITH_TOKEN = /\/(?:webhooks|interactions)\/\d+\/(?!:token\b)[\w.-]{20,}/;

/** Characters that do not occur in text: C0/C1 controls (but tab, newline), U+FFFD from bad UTF-8. */
function binaryish(c: number): boolean {
  return (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) || (c >= 0x7f && c <= 0x9f) || c === 0xfffd;
}

/** Whether `text` holds binary: a window of 256 characters of which more than 1 in 8 are binary-ish. */
function holdsBinary(text: string): boolean {
  if (text.length < PAYLOAD_BYTES) return false;
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    if (binaryish(text.charCodeAt(i))) count++;
    if (i >= PAYLOAD_BYTES && binaryish(text.charCodeAt(i - PAYLOAD_BYTES))) count--;
    if (i >= PAYLOAD_BYTES - 1 && count > PAYLOAD_BYTES / 8) return true;
  }
  return false;
}

function walkStrings(value: unknown, visit: (s: string) => void): void {
  if (typeof value === 'string') visit(value);
  else if (Array.isArray(value)) value.forEach((v) => walkStrings(v, visit));
  else if (value && typeof value === 'object') Object.values(value).forEach((v) => walkStrings(v, visit));
}

/** Every finding in `lines`: which rule, and where (never the secret itself). */
export function scanLog(lines: readonly string[], secrets: Record<string, readonly string[]>): string[] {
  const findings: string[] = [];
  for (const [n, line] of lines.entries()) {
    const where = `line ${n + 1} (${line.length} chars, ${String((JSON.parse(line) as { msg?: unknown }).msg)})`;
    for (const [kind, values] of Object.entries(secrets)) {
      for (const secret of values) if (secret && line.includes(secret)) findings.push(`${where}: ${kind}`);
    }
    if (WEBHOOK_WITH_TOKEN.test(line)) findings.push(`${where}: webhook or interaction URL with its token`);
    if (BASE64_RUN.test(line)) findings.push(`${where}: a base64 run over ${PAYLOAD_BYTES} characters`);
    if (BYTE_ARRAY.test(line)) findings.push(`${where}: a byte array over ${PAYLOAD_BYTES} bytes`);
    walkStrings(JSON.parse(line), (s) => {
      if (holdsBinary(s)) findings.push(`${where}: binary over ${PAYLOAD_BYTES} bytes`);
    });
  }
  return findings;
}
