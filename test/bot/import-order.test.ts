import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// File uploads failed in the started bot because importing the TTS client replaced
// the dispatcher discord.js's REST sends through. The test runner loads node:http first, which
// hides that, so each case runs in a fresh child process importing in production order.
const CHILD = fileURLToPath(new URL('../support/import-order-child.ts', import.meta.url));
const run = promisify(execFile);

async function child(
  mode: string,
): Promise<{ ok: boolean; error?: string; answer?: { multipart: boolean; bytes: number }; slotUnchanged: boolean }> {
  const { stdout } = await run(process.execPath, ['--experimental-strip-types', CHILD, mode], { timeout: 20_000 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!);
}

describe('HTTP clients cannot change each other (production import order)', () => {
  it('discord.js uploads a file after every bot module, the TTS client included, was imported', async () => {
    const result = await child('plain');
    expect(result.error).toBeUndefined();
    expect(result.ok).toBe(true);
    expect(result.answer?.multipart).toBe(true);
    // Importing the bot wrote nothing into the process-wide undici dispatcher slot.
    expect(result.slotUnchanged).toBe(true);
  });

  it("the bot's REST agent keeps uploads working even when another library replaces the global dispatcher", async () => {
    // The control first: such a dispatcher does break a REST client without an agent of its own.
    const control = await child('hostile-plain');
    expect(control.ok).toBe(false);
    expect(control.error).toContain('FormData');
    const result = await child('hostile');
    expect(result.error).toBeUndefined();
    expect(result.ok).toBe(true);
  });
});
