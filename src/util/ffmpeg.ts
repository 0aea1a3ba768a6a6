import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * The ffmpeg binary to run: `FFMPEG_PATH`, else ffmpeg-static's download when it is present (it is
 * an optional dependency whose install-time download can fail), else `ffmpeg` on PATH.
 */
export function ffmpegPath(): string {
  const fromEnv = process.env.FFMPEG_PATH;
  if (fromEnv) return fromEnv;
  try {
    const bundled = require('ffmpeg-static') as string | null;
    if (bundled && existsSync(bundled)) return bundled;
  } catch {
    // optional dependency not installed
  }
  return 'ffmpeg';
}
