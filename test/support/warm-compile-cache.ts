/**
 * Vitest's global setup (vitest.config.ts). On a fresh checkout Node's compile cache is empty, and a
 * process writes what it compiled only when it exits normally (the bot also once it is started): the
 * workers (ten) and the first child bots, all starting at once, would each compile discord.js and the
 * sources again (about 0.5 s of CPU each). One process loading what the bot loads, first, writes the
 * cache they all read. Nothing when the cache is already there; how fast processes load, nothing of
 * what they do.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const ROOT = join(import.meta.dirname, '..', '..');

export default async function warmCompileCache(): Promise<void> {
  const dir = process.env.NODE_COMPILE_CACHE;
  if (!dir || (existsSync(dir) && readdirSync(dir).length > 0)) return;
  const bot = pathToFileURL(join(ROOT, 'src', 'bot.ts')).href;
  const script = `import { flushCompileCache } from 'node:module'; await import(${JSON.stringify(bot)}); flushCompileCache();`;
  // Only ever a speed-up: a bot that cannot even be imported fails its own tests, with their messages.
  await promisify(execFile)(process.execPath, ['--experimental-strip-types', '--input-type=module', '--eval', script], {
    cwd: ROOT,
    env: process.env,
    timeout: 30_000,
  }).catch(() => {});
}
