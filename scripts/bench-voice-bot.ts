// Child process of `npm run bench:voice`: the real bot, alone in its process so its resident
// memory can be measured. Configured by the environment (like `npm start`) plus BENCH_PLAYBACK
// ('cached' | 'mp3'); answers {cmd: 'rss'} over IPC with process.memoryUsage().rss after a GC.
import { loadConfig } from '../src/config.ts';
import { createBot } from '../src/discord/bot.ts';
import { createLogger } from '../src/util/log.ts';

const config = loadConfig();
const logger = createLogger({ level: config.logLevel, secrets: [config.discord.token, config.tts.token] });
const playback = process.env.BENCH_PLAYBACK === 'mp3' ? 'mp3' : 'cached';
const bot = await createBot({ config, logger, voice: { playback } });
await bot.start();

const gc = (globalThis as { gc?: () => void }).gc;
process.on('message', (message: { cmd: string }) => {
  if (message.cmd === 'rss') {
    gc?.();
    gc?.();
    process.send?.({ rss: process.memoryUsage().rss, voiceGuilds: bot.context.voice.size });
  } else if (message.cmd === 'stop') {
    void bot.stop().then(() => process.exit(0));
  }
});
process.send?.({ ready: true });
