import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// File uploads failed in the started bot because importing the TTS client replaced
// the dispatcher discord.js's REST sends through. The test runner loads node:http first, which
// hides that, so the cases run in one fresh child process importing in production order.
const CHILD = fileURLToPath(new URL('../support/import-order-child.ts', import.meta.url));
const run = promisify(execFile);

interface Upload {
  ok: boolean;
  error?: string;
  answer?: { multipart: boolean; bytes: number };
}

let result: Promise<{ plain: Upload; hostilePlain: Upload; hostile: Upload; slotUnchanged: boolean }> | undefined;
/** The child's uploads (one process for both tests: a fresh one importing in production order). */
function child() {
  result ??= run(process.execPath, ['--experimental-strip-types', CHILD], { timeout: 20_000 }).then(({ stdout }) =>
    JSON.parse(stdout.trim().split('\n').at(-1)!),
  );
  return result;
}

describe('HTTP clients cannot change each other (production import order)', () => {
  it('discord.js uploads a file after every bot module, the TTS client included, was imported', async () => {
    const { plain, slotUnchanged } = await child();
    expect(plain.error).toBeUndefined();
    expect(plain.ok).toBe(true);
    expect(plain.answer?.multipart).toBe(true);
    // Importing the bot wrote nothing into the process-wide undici dispatcher slot.
    expect(slotUnchanged).toBe(true);
  });

  it("the bot's REST agent keeps uploads working even when another library replaces the global dispatcher", async () => {
    // The control first: such a dispatcher does break a REST client without an agent of its own.
    const { hostilePlain: control, hostile } = await child();
    expect(control.ok).toBe(false);
    expect(control.error).toContain('FormData');
    expect(hostile.error).toBeUndefined();
    expect(hostile.ok).toBe(true);
  });
});
