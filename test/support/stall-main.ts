// Preloaded into the bot by a test (NODE_OPTIONS=--import=<this file>, STALL_MAIN="busyMs/everyMs"):
// keeps the bot's main thread busy on purpose, and says when on stdout in the bot's own log format
// ('main thread stalled on purpose', `at` in epoch ms, `ms`), which the test reads with the bot's
// logs. The bot itself knows nothing of it. A preload runs in every thread and process that Node
// starts with these options: only a main thread stalls.
import { isMainThread } from 'node:worker_threads';
import { parseStall, stallEvery } from './stall.ts';

const stall = isMainThread ? parseStall(process.env.STALL_MAIN) : undefined;
if (stall) {
  stallEvery(stall, (startedAt, endedAt) =>
    process.stdout.write(
      `${JSON.stringify({ level: 30, time: Date.now(), msg: 'main thread stalled on purpose', at: performance.timeOrigin + startedAt, ms: endedAt - startedAt })}\n`,
    ),
  );
}
