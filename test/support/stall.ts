/**
 * Keeps this thread busy `busyMs` out of every `everyMs`, a stand-in for a main thread busy with
 * other work (a burst of events, a large guild's GUILD_CREATE, a chart). `npm run bench:voice`
 * (scripts/bench-voice-bot.ts) and the voice worker test (through stall-main.ts) use it to show
 * that packets do not wait for it.
 */
export interface Stall {
  busyMs: number;
  everyMs: number;
}

/** `STALL_MAIN`'s form (stall-main.ts), "busyMs/everyMs" (say "50/500"); undefined when unset or malformed. */
export function parseStall(spec: string | undefined): Stall | undefined {
  const match = /^(\d+)\/(\d+)$/.exec(spec?.trim() ?? '');
  if (!match) return undefined;
  const stall = { busyMs: Number(match[1]), everyMs: Number(match[2]) };
  return stall.busyMs > 0 && stall.everyMs > stall.busyMs ? stall : undefined;
}

/** Starts stalling this thread; returns the function that stops it. */
export function stallEvery(stall: Stall, onStall?: (startedAt: number, endedAt: number) => void): () => void {
  const timer = setInterval(() => {
    const startedAt = performance.now();
    const end = startedAt + stall.busyMs;
    while (performance.now() < end) {
      // busy on purpose
    }
    onStall?.(startedAt, performance.now());
  }, stall.everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
