// Child process of `npm run bench:voice`: the real bot, alone in its process so its resident
// memory and its audio loop can be measured. Configured by the environment (like `npm start`) plus
// BENCH_PLAYBACK ('cached' | 'mp3'). Over IPC it answers {cmd: 'rss'} (after a GC), {cmd: 'load',
// start: true|false} (event-loop delay, CPU, GC pauses and peak RSS between start and stop), and forwards the
// moments of every clip (src/util/moments.ts) as {moment, guildId, at} with `at` in epoch ms, and
// {cmd: 'stall', busyMs, everyMs} keeps its main thread busy that long out of every everyMs (busyMs 0
// stops it): the stressed main thread. VOICE_WORKERS (the environment) says where voice runs.
// BENCH_CLOCK_TRACE_MS=n prints to stderr, every n ms, each voice worker's packet clock since the
// last print (the ticks in which a player stepped: how late, sending and preparing per packet; the
// frames caught up; the worker's GC pauses), asked through the bot's voice manager.
import { subscribe } from 'node:diagnostics_channel';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { loadConfig } from '../src/config.ts';
import { createBot } from '../src/bot.ts';
import { createLogger } from '../src/util/log.ts';
import { moments } from '../src/util/moments.ts';
import { stallEvery } from '../test/support/stall.ts';

const config = loadConfig();
const logger = createLogger({ level: config.logLevel, secrets: [config.discord.token, config.tts.token] });
const playback = process.env.BENCH_PLAYBACK === 'mp3' ? 'mp3' : 'cached';
const bot = await createBot({ config, logger, voice: { playback } });
await bot.start();

const epoch = (at: number) => performance.timeOrigin + at;
for (const [name, channel] of Object.entries(moments)) {
  subscribe(channel.name, (message) => {
    const m = message as { guildId: string; at: number; canEncrypt?: boolean; source?: string };
    process.send?.({ moment: name, guildId: m.guildId, at: epoch(m.at), canEncrypt: m.canEncrypt, source: m.source });
  });
}

const loopDelay = monitorEventLoopDelay({ resolution: 5 });
/** Garbage collection during a load run: total pause time and the longest pause. */
const gcPauses = { total: 0, max: 0 };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    gcPauses.total += entry.duration;
    gcPauses.max = Math.max(gcPauses.max, entry.duration);
  }
}).observe({ entryTypes: ['gc'] });
let load: { cpu: NodeJS.CpuUsage; wall: number; peakRss: number; timer: NodeJS.Timeout } | undefined;

const gc = (globalThis as { gc?: () => void }).gc;
let stopStall: (() => void) | undefined;
process.on('message', (message: { cmd: string; start?: boolean; busyMs?: number; everyMs?: number }) => {
  if (message.cmd === 'stall') {
    stopStall?.();
    stopStall = message.busyMs ? stallEvery({ busyMs: message.busyMs, everyMs: message.everyMs ?? 500 }) : undefined;
    process.send?.({ stall: message.busyMs ?? 0 });
  } else if (message.cmd === 'rss') {
    gc?.();
    gc?.();
    process.send?.({ rss: process.memoryUsage().rss, voiceGuilds: bot.context.voice.size });
  } else if (message.cmd === 'load' && message.start) {
    loopDelay.reset();
    loopDelay.enable();
    gcPauses.total = 0;
    gcPauses.max = 0;
    const state = {
      cpu: process.cpuUsage(),
      wall: performance.now(),
      peakRss: process.memoryUsage().rss,
      timer: setInterval(() => (state.peakRss = Math.max(state.peakRss, process.memoryUsage().rss)), 250),
    };
    load = state;
    process.send?.({ load: 'started' });
  } else if (message.cmd === 'load' && load) {
    loopDelay.disable();
    clearInterval(load.timer);
    const cpu = process.cpuUsage(load.cpu);
    const wall = performance.now() - load.wall;
    process.send?.({
      load: {
        cpuPercent: ((cpu.user + cpu.system) / 1000 / wall) * 100,
        loopDelayP99Ms: loopDelay.percentile(99) / 1e6,
        loopDelayMaxMs: loopDelay.max / 1e6,
        peakRss: Math.max(load.peakRss, process.memoryUsage().rss),
        gcMs: gcPauses.total,
        gcMaxMs: gcPauses.max,
      },
    });
    load = undefined;
  } else if (message.cmd === 'stop') {
    void bot.stop().then(() => process.exit(0));
  }
});
const traceMs = Number(process.env.BENCH_CLOCK_TRACE_MS ?? 0);
if (traceMs > 0) {
  const round = (_k: string, v: unknown) => (typeof v === 'number' ? Math.round(v * 100) / 100 : v);
  setInterval(() => {
    void bot.context.voice.clockTraces().then((traces) => {
      for (const { thread, trace, caughtUp, restarts, gc } of traces)
        if (trace) console.error(`voice worker ${thread} packet clock: ${JSON.stringify({ ...trace, caughtUp, restarts, gc }, round)}`);
    });
  }, traceMs).unref();
}
process.send?.({ ready: true });
