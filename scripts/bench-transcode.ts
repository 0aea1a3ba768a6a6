// CPU per cache transcode (MP3 to Ogg Opus): the bot's in-process conversion against the ffmpeg
// command it replaced (one ffmpeg started per clip). Linux: children's CPU read from /proc/self/stat.
// Usage: npm run bench:transcode [-- --runs 40]
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ffmpegPath } from '@yomiage/media';
import { mp3ToOggOpus } from '../src/audio/transcode.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '40' } } });
const runs = Number(values.runs);
const TICK_MS = 10; // USER_HZ 100

/** CPU of this process (ms) and of its waited-for children (ms). */
function cpu(): { self: number; children: number } {
  const u = process.cpuUsage();
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  // After the command name: state is field 3, so cutime (16) and cstime (17) are at 13 and 14.
  return { self: (u.user + u.system) / 1000, children: (Number(fields[13]) + Number(fields[14])) * TICK_MS };
}

// The command src/audio/transcode.ts ran before the conversion moved in-process.
// prettier-ignore
const FFMPEG_ARGS = [
  '-hide_banner', '-loglevel', 'error', '-i', 'pipe:0', '-vn', '-map_metadata', '-1',
  '-af', 'silenceremove=start_periods=1:start_threshold=-50dB',
  '-ac', '2', '-ar', '48000', '-c:a', 'libopus', '-b:a', '64k', '-application', 'audio', '-f', 'ogg', 'pipe:1',
];

const dir = mkdtempSync(join(tmpdir(), 'bench-transcode-'));
try {
  for (const seconds of [1, 3, 10]) {
    const file = join(dir, `${seconds}.mp3`);
    // The service's shape: 24 kHz mono MP3 at 160 kbit/s.
    // prettier-ignore
    execFileSync(ffmpegPath(), ['-v', 'error', '-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}`,
      '-ar', '24000', '-ac', '1', '-b:a', '160k', file]);
    const mp3 = readFileSync(file);
    await mp3ToOggOpus(mp3); // the decoder's WebAssembly compiled once per process, as in the bot

    let t0 = cpu();
    for (let i = 0; i < runs; i++) await mp3ToOggOpus(mp3);
    let t1 = cpu();
    const inProcess = (t1.self - t0.self) / runs;

    t0 = cpu();
    for (let i = 0; i < runs; i++) spawnSync(ffmpegPath(), FFMPEG_ARGS, { input: mp3, maxBuffer: 64 * 1024 * 1024 });
    t1 = cpu();
    const ffmpeg = (t1.children - t0.children + (t1.self - t0.self)) / runs;
    console.log(`${seconds} s clip: in-process ${inProcess.toFixed(1)} ms CPU, ffmpeg ${ffmpeg.toFixed(1)} ms CPU (n=${runs})`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
