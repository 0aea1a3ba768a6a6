/**
 * `npm run playground`: the bot in a local server with a web page, no Discord account needed.
 * PLAYGROUND_PORT picks the page's port (default 8788; 0 for any free one). Prints one URL; Ctrl-C
 * stops everything (the bot first, cleanly). Everything listens on 127.0.0.1 only.
 */
import { z } from 'zod';
import { startPlayground } from './playground.ts';

const configSchema = z.object({
  PLAYGROUND_PORT: z.coerce.number().int().min(0).max(65_535).default(8788),
  /** The emulator's audio (auto: espeak-ng when it is installed, else tones). */
  EMULATOR_SPEECH: z.enum(['auto', 'espeak', 'tones']).default('auto'),
});

const parsed = configSchema.safeParse(Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== '')));
if (!parsed.success) {
  console.error(`playground: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  process.exit(2);
}
const config = parsed.data;

let playground;
try {
  playground = await startPlayground({
    port: config.PLAYGROUND_PORT,
    speech: config.EMULATOR_SPEECH,
    progress: (line) => console.log(`playground: ${line}`),
  });
} catch (error) {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE')
    console.error(`playground: port ${config.PLAYGROUND_PORT} is in use; set PLAYGROUND_PORT to another one (0: any free port)`);
  else console.error(`playground: could not start: ${(error as Error).message}`);
  process.exit(1);
}

const audio = playground.emulator.speech === 'espeak' ? 'espeak-ng reads the text' : 'tones: install espeak-ng to hear the words';
console.log(`playground: ready (audio: ${audio}); Ctrl-C stops it`);
console.log(`\n  Open ${playground.url}\n`);

let stopping = false;
playground.bot.on('status', (status, detail) => {
  if (status !== 'exited' || stopping) return;
  console.error(
    `playground: the bot exited (${detail?.signal ?? `code ${detail?.code}`}); its last words: ${playground.bot.stderr().trim().slice(-1000) || JSON.stringify(playground.bot.logs.slice(-3))}`,
  );
});

const stop = (signal: string) => {
  if (stopping) return;
  stopping = true;
  console.log(`playground: ${signal}: stopping`);
  playground.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));
