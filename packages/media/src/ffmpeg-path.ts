import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * The ffmpeg binary to run: the configured one (by default the FFMPEG_PATH environment variable),
 * else ffmpeg-static's download when it is present (an optional dependency whose install-time
 * download can fail), else `ffmpeg` on PATH. The bot transcodes with it and the emulator encodes
 * espeak-ng's reading with it, so both find the same binary on one machine.
 */
export function ffmpegPath(configured: string | undefined = process.env.FFMPEG_PATH): string {
  if (configured) return configured;
  try {
    const bundled = require('ffmpeg-static') as string | null;
    if (bundled && existsSync(bundled)) return bundled;
  } catch {
    // optional dependency not installed
  }
  return 'ffmpeg';
}
