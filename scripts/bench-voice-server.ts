// Child process of `npm run bench:voice`: the local voice server (TLS voice gateway, UDP, DAVE) in
// a process of its own, so the bot's audio loop and the server that times its packets do not share
// an event loop. Times are epoch milliseconds (performance.timeOrigin + performance.now()), which
// the bench and the bot's process share. Opus frames are not decoded back to PCM here (a silence
// frame still counts as silence): at 200 streams that would take a core of its own. While a load
// run records, packets are only timestamped on arrival and kept (FakeVoiceServer.holdPackets);
// every one is decrypted (transport and DAVE) and checked when the run is reported, so this
// server's own work per packet is not inside the intervals it measures (a Discord voice server runs
// on other machines) and does not take the two cores from the bot while it is timed.
// Commands arrive over IPC as {id, cmd, ...}; each is answered with {id, ...}.
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { startFakeVoiceServer, type ReceivedPacket } from '@yomiage/local-discord';

const epochNow = () => performance.timeOrigin + performance.now();
// 4 MiB of UDP receive buffer (this machine's net.core.rmem_max): a busy moment here loses no packet.
const voice = await startFakeVoiceServer({
  now: epochNow,
  decodeOpus: false,
  maxRetainedPackets: 20_000,
  udpReceiveBufferBytes: 4 * 1024 * 1024,
});
const loopDelay = monitorEventLoopDelay({ resolution: 5 });
/** This server's garbage collection pauses while a run records: they delay the arrival times it takes. */
const gc = { totalMs: 0, maxMs: 0 };
new PerformanceObserver((list) => {
  if (!recording) return;
  for (const entry of list.getEntries()) {
    gc.totalMs += entry.duration;
    gc.maxMs = Math.max(gc.maxMs, entry.duration);
  }
}).observe({ entryTypes: ['gc'] });
/** BENCH_VOICE_HOLD=0: every packet processed as it arrives, as before (to compare the two ways of timing). */
const hold = process.env.BENCH_VOICE_HOLD !== '0';

/** Per guild, while recording: every packet's arrival, and what the call's listeners made of it. */
interface Stream {
  arrivals: number[];
  audible: number;
  e2ee: number;
  plain: number;
  undecryptable: number;
  /** When the bot last said it stopped speaking. */
  speakingOffAt: number;
  /** Packets missing from the RTP sequence (lost between the bot and this server, or never sent). */
  lost: number;
  lastSeq: number;
}
let recording: { since: number; streams: Map<string, Stream> } | undefined;
const watchers = new Set<(p: ReceivedPacket) => void>();
const offWatchers = new Set<(guildId: string, at: number) => void>();

voice.on('packet', (p) => {
  for (const w of watchers) w(p);
  if (!recording || p.receivedAt < recording.since) return;
  let s = recording.streams.get(p.guildId);
  if (!s)
    recording.streams.set(
      p.guildId,
      (s = { arrivals: [], audible: 0, e2ee: 0, plain: 0, undecryptable: 0, speakingOffAt: 0, lost: 0, lastSeq: -1 }),
    );
  s.arrivals.push(p.receivedAt);
  if (s.lastSeq >= 0) s.lost += (p.seq - s.lastSeq - 1) & 0xffff;
  s.lastSeq = p.seq;
  if (!p.silent) s.audible++;
  if (p.undecryptable) s.undecryptable++;
  else if (p.daveFramed) s.e2ee++;
  else if (!p.silent) s.plain++;
});
/** When each guild's bot last said it started speaking. */
const speakingOnAt = new Map<string, number>();
voice.on('speaking', (session, { speaking }) => {
  const at = epochNow();
  if (speaking !== 0) return void speakingOnAt.set(session.serverId, at);
  const s = recording?.streams.get(session.serverId);
  if (s) s.speakingOffAt = at;
  for (const w of offWatchers) w(session.serverId, at);
});

/** The first packet of `guildId` after `after` (audible only, with `loud`). */
function firstPacket(guildId: string, after: number, loud: boolean, timeoutMs: number): Promise<number> {
  const seen = voice.packets.find((p) => p.guildId === guildId && p.receivedAt >= after && (!loud || !p.silent));
  if (seen) return Promise.resolve(seen.receivedAt);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      watchers.delete(watch);
      reject(new Error(`no packet from guild ${guildId} within ${timeoutMs} ms`));
    }, timeoutMs);
    const watch = (p: ReceivedPacket) => {
      if (p.guildId !== guildId || p.receivedAt < after || (loud && p.silent)) return;
      clearTimeout(timer);
      watchers.delete(watch);
      resolve(p.receivedAt);
    };
    watchers.add(watch);
  });
}

/**
 * Resolves once every guild in `guildIds` started speaking after `after` and then stopped (op 5:
 * the packets themselves are held while a run records, so they cannot say it).
 */
function streamsEnded(guildIds: string[], after: number, timeoutMs: number): Promise<void> {
  const waiting = new Set(guildIds);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      offWatchers.delete(onOff);
      reject(new Error(`${waiting.size} of ${guildIds.length} streams did not end within ${timeoutMs} ms`));
    }, timeoutMs);
    const onOff = (guildId: string, at: number) => {
      if (at < after || (speakingOnAt.get(guildId) ?? 0) < after) return;
      waiting.delete(guildId);
      if (waiting.size > 0) return;
      clearTimeout(timer);
      offWatchers.delete(onOff);
      resolve();
    };
    offWatchers.add(onOff);
  });
}

type Command =
  | { id: number; cmd: 'listen'; guildId: string; channelId: string; userId: string }
  | { id: number; cmd: 'dave'; guildId: string }
  | { id: number; cmd: 'firstPacket'; guildId: string; after: number; loud: boolean }
  | { id: number; cmd: 'audioEnded'; guildId: string; after: number }
  | { id: number; cmd: 'record'; since: number }
  | { id: number; cmd: 'streamsEnded'; guildIds: string[]; after: number }
  | { id: number; cmd: 'report' }
  | { id: number; cmd: 'stop' };

process.on('message', (message: Command) => {
  const answer = (body: object) => process.send?.({ id: message.id, ...body });
  const fail = (error: unknown) => answer({ error: (error as Error).message });
  switch (message.cmd) {
    case 'listen':
      voice.simulateListener({ guildId: message.guildId, channelId: message.channelId, userId: message.userId });
      return answer({});
    case 'dave':
      return void voice.waitForDave(message.guildId, 30_000).then(() => answer({}), fail);
    case 'firstPacket':
      return void firstPacket(message.guildId, message.after, message.loud, 30_000).then((at) => answer({ at }), fail);
    case 'audioEnded':
      return void voice
        .waitForAudio({ guildId: message.guildId, startedAfter: message.after, timeoutMs: 30_000 })
        .then(() => answer({}), fail);
    case 'record':
      recording = { since: message.since, streams: new Map() };
      if (hold) voice.holdPackets();
      gc.totalMs = gc.maxMs = 0;
      loopDelay.reset();
      loopDelay.enable();
      return answer({});
    case 'streamsEnded':
      return void streamsEnded(message.guildIds, message.after, 120_000).then(() => answer({}), fail);
    case 'report': {
      loopDelay.disable();
      const gcDuringRun = { ...gc };
      // Every packet of the run, decrypted and checked now (recorded above as 'packet' events).
      const processed = voice.releasePackets();
      const streams = Object.fromEntries(recording?.streams ?? []);
      recording = undefined;
      return answer({
        streams,
        loopDelayP99Ms: loopDelay.percentile(99) / 1e6,
        rss: process.memoryUsage().rss,
        rejected: voice.udpStats.rejected,
        gc: gcDuringRun,
        perPacketUs: processed.datagrams > 0 ? (processed.ms * 1000) / processed.datagrams : 0,
      });
    }
    case 'stop':
      // Answered first: the bench waits for the answer, then for the exit.
      return void voice.close().finally(() => {
        answer({});
        process.exit(0);
      });
  }
});
process.send?.({ ready: true, endpoint: voice.endpoint, caCertPem: voice.caCertPem });
