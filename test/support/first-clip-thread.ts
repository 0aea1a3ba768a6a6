/**
 * Run as a worker thread by test/voice/resources.test.ts: a thread that has played nothing yet, as a
 * voice worker is when its first call starts. Makes the resource of one cached clip (Ogg Opus) and
 * one cache miss (an MP3 decoded as it plays), reads every packet of both, and reports how often
 * prism-media was asked for ffmpeg's build (each ask runs `ffmpeg -h` synchronously) and how many
 * packets each clip gave.
 */
import { parentPort, workerData } from 'node:worker_threads';
import prism from 'prism-media';

const ffmpeg = prism.FFmpeg as unknown as { getInfo: (...args: unknown[]) => unknown };
const getInfo = ffmpeg.getInfo.bind(ffmpeg);
let asked = 0;
ffmpeg.getInfo = (...args: unknown[]) => {
  asked++;
  return getInfo(...args);
};
const { resourceFor } = await import('../../src/voice/resources.ts');
const { oggPath, mp3 } = workerData as { oggPath: string; mp3: Uint8Array };
const packets: Record<string, number> = {};
for (const clip of [{ oggPath }, { mp3: Buffer.from(mp3) }]) {
  const { resource, source } = await resourceFor(clip, 'cached', '1');
  let n = 0;
  for await (const packet of resource.playStream) if (Buffer.isBuffer(packet) && packet.length > 0) n++;
  packets[source] = n;
}
parentPort!.postMessage({ asked, packets });
