import { EventEmitter } from 'node:events';
import { createReadStream, readdirSync, readlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import {
  AudioPlayerStatus,
  NetworkingStatusCode,
  VoiceConnectionDisconnectReason,
  VoiceConnectionStatus,
  type AudioPlayer,
  type DiscordGatewayAdapterCreator,
  type VoiceConnection,
  type VoiceConnectionState,
} from '@discordjs/voice';
import prism from 'prism-media';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/util/log.ts';
import { GuildVoiceSession, type VoiceSessionPolicy } from '../../src/voice/session.ts';
import { ffmpeg } from '@yomiage/local-discord/test/voice/helpers';

// The session against the real @discordjs/voice connection and player, stepped by hand (as the
// library's own tests step `_stepPrepare`): the gateway adapter never answers, the test sets the
// connection's state, and a stand-in for the networking layer records each Opus frame the player
// prepares. Timers are fake, so waits of seconds (grace, backoff, DAVE) take no time.

/** @discordjs/voice's Opus silence frame, sent after a resource ends (5 of them). */
const SILENCE = Buffer.from([0xf8, 0xff, 0xfe]);

/** The voice networking layer as the connection uses it once Ready; records the frames it is given. */
class SteppedNetworking extends EventEmitter {
  readonly frames: Buffer[] = [];
  readonly state: {
    code: NetworkingStatusCode.Ready;
    connectionData: { connectedClients: Set<string> };
    dave?: { protocolVersion: number; session?: { ready: boolean } };
  };

  constructor(call: { others?: string[]; dave?: { protocolVersion: number; ready: boolean } } = {}) {
    super();
    this.state = { code: NetworkingStatusCode.Ready, connectionData: { connectedClients: new Set(call.others ?? []) } };
    if (call.dave) this.state.dave = { protocolVersion: call.dave.protocolVersion, session: { ready: call.dave.ready } };
  }

  prepareAudioPacket(frame: Buffer): Buffer {
    this.frames.push(frame);
    return frame;
  }

  dispatchAudio(): boolean {
    return true;
  }

  setSpeaking(): void {}

  destroy(): void {}

  /** Frames with sound (not the silence the player sends around a resource). */
  get sound(): Buffer[] {
    return this.frames.filter((f) => !f.equals(SILENCE));
  }
}

let dir: string;
/** A 0.1 s Ogg Opus clip (as the cache makes) and its Opus frames, read back from the file. */
let clip: { oggPath: string; frames: Buffer[] };
let logs: { level: number; msg: string }[];
let session: GuildVoiceSession | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'voice-session-'));
  const oggPath = join(dir, 'clip.ogg');
  await ffmpeg([
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:duration=0.1',
    '-ar',
    '48000',
    '-ac',
    '2',
    '-c:a',
    'libopus',
    '-b:a',
    '64k',
    oggPath,
  ]);
  const frames: Buffer[] = [];
  await pipeline(createReadStream(oggPath), new prism.opus.OggDemuxer(), async (packets: AsyncIterable<Buffer>) => {
    for await (const packet of packets) frames.push(packet);
  });
  clip = { oggPath, frames };
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});
beforeEach(() => {
  // setImmediate stays real: it lets file reads complete between cycles (the library's own loop
  // runs on setTimeout, so it only moves when a test advances the clock).
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
  logs = [];
});
afterEach(() => {
  session?.destroy();
  session = undefined;
  vi.useRealTimers();
});

/** A session whose main gateway takes payloads while `gatewayUp()` says so, and never answers. */
function start(policy: VoiceSessionPolicy = {}, gatewayUp = () => true): GuildVoiceSession {
  const adapterCreator: DiscordGatewayAdapterCreator = () => ({ sendPayload: () => gatewayUp(), destroy() {} });
  const logger = createLogger({
    level: 'info',
    destination: { write: (line: string) => void logs.push(JSON.parse(line) as { level: number; msg: string }) },
  });
  session = new GuildVoiceSession({
    guildId: `g${Math.random()}`,
    channelId: 'c1',
    textChannelId: null,
    adapterCreator,
    logger,
    ...policy,
  });
  return session;
}

/** Moves the real connection to `status`, keeping its adapter and the player's subscription. */
function setConnection(connection: VoiceConnection, status: VoiceConnectionStatus, extra: Record<string, unknown> = {}): void {
  const { adapter, subscription } = connection.state as { adapter: unknown; subscription?: unknown };
  connection.state = { status, adapter, subscription, ...extra } as unknown as VoiceConnectionState;
}

const ready = (s: GuildVoiceSession, networking: SteppedNetworking) =>
  setConnection(s.connection, VoiceConnectionStatus.Ready, { networking });

/** One 20 ms cycle of the library's audio loop (`audioCycleStep`), after the streams had a chance to deliver data. */
async function cycle(player: AudioPlayer): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  // The clip is read in one chunk: once it is readable (Playing), every frame is buffered.
  if (player.state.status === AudioPlayerStatus.Buffering) await new Promise((resolve) => player.once('stateChange', resolve));
  const stepped = player as unknown as { _stepDispatch(): void; _stepPrepare(): void };
  if (!player.checkPlayable()) return;
  stepped._stepDispatch();
  stepped._stepPrepare();
}

/** Steps the player until `settled` settles (at most `max` cycles); resolves with how it settled. */
async function stepUntil(player: AudioPlayer, settled: Promise<void>, max = 200): Promise<{ ok: true } | { ok: false; error: unknown }> {
  let outcome: { ok: true } | { ok: false; error: unknown } | undefined;
  void settled.then(
    () => (outcome = { ok: true }),
    (error: unknown) => (outcome = { ok: false, error }),
  );
  for (let i = 0; i < max && !outcome; i++) await cycle(player);
  for (let i = 0; i < 5 && !outcome; i++) await Promise.resolve();
  if (!outcome) throw new Error(`play() did not settle within ${max} cycles`);
  return outcome;
}

/** The listeners play() may add, to show it leaves none behind. */
const listeners = (s: GuildVoiceSession) => [
  s.player.listenerCount('stateChange'),
  s.player.listenerCount('error'),
  s.listenerCount('stateChange'),
];

describe('GuildVoiceSession.play, stepped', () => {
  it('GIVEN a Ready call WHEN a clip plays THEN every frame goes out in order and play resolves at its end, leaving no listener behind', async () => {
    const s = start();
    const net = new SteppedNetworking();
    ready(s, net);
    const before = listeners(s);
    const outcome = await stepUntil(s.player, s.play({ oggPath: clip.oggPath }, new AbortController().signal));
    expect(outcome).toEqual({ ok: true });
    expect(net.sound).toEqual(clip.frames);
    expect(net.frames.slice(-5)).toEqual(Array(5).fill(SILENCE));
    expect(s.player.state.status).toBe(AudioPlayerStatus.Idle);
    expect(listeners(s)).toEqual(before);
  });

  it('GIVEN /skip mid-clip THEN play resolves at once, the player stops, and no later frame goes out', async () => {
    const s = start();
    const net = new SteppedNetworking();
    ready(s, net);
    const before = listeners(s);
    const skip = new AbortController();
    const playing = s.play({ oggPath: clip.oggPath }, skip.signal);
    for (let i = 0; i < 100 && net.sound.length < 2; i++) await cycle(s.player);
    skip.abort();
    expect(await stepUntil(s.player, playing, 1)).toEqual({ ok: true });
    const sent = net.frames.length;
    for (let i = 0; i < 10; i++) await cycle(s.player);
    expect(net.frames).toHaveLength(sent);
    expect(net.sound.length).toBeLessThan(clip.frames.length);
    expect(s.player.state.status).toBe(AudioPlayerStatus.Idle);
    expect(listeners(s)).toEqual(before);
  });

  it('GIVEN the player errors mid-clip THEN play rejects once, with playback_failed carrying the player error', async () => {
    const s = start();
    const net = new SteppedNetworking();
    ready(s, net);
    const before = listeners(s);
    const playing = s.play({ oggPath: clip.oggPath }, new AbortController().signal);
    for (let i = 0; i < 100 && net.sound.length < 1; i++) await cycle(s.player);
    const state = s.player.state;
    if (state.status === AudioPlayerStatus.Idle) throw new Error('the player stopped early');
    state.resource.playStream.destroy(new Error('corrupt stream'));
    const outcome = await stepUntil(s.player, playing);
    expect(outcome.ok).toBe(false);
    const error = (outcome as { error: { code: string; guildId: string; cause: { message: string } } }).error;
    expect(error).toMatchObject({ name: 'VoiceSessionError', code: 'playback_failed', guildId: s.guildId });
    expect(error.cause.message).toBe('corrupt stream');
    expect(listeners(s)).toEqual(before);
  });

  it('GIVEN the session is destroyed mid-clip THEN play rejects with destroyed', async () => {
    const s = start();
    const net = new SteppedNetworking();
    ready(s, net);
    const playing = s.play({ oggPath: clip.oggPath }, new AbortController().signal);
    for (let i = 0; i < 100 && net.sound.length < 1; i++) await cycle(s.player);
    s.destroy();
    await expect(playing).rejects.toMatchObject({ code: 'destroyed', guildId: s.guildId });
  });

  it('GIVEN /skip while waiting for the connection to be Ready THEN play settles at once without playing anything', async () => {
    const s = start({ readyTimeoutMs: 5_000 });
    const statuses: string[] = [];
    s.player.on('stateChange', (_old, next) => statuses.push(next.status));
    const skip = new AbortController();
    const playing = s.play({ oggPath: clip.oggPath }, skip.signal);
    await vi.advanceTimersByTimeAsync(100);
    skip.abort();
    await expect(playing).resolves.toBeUndefined();
    expect(statuses).toEqual([]);
  });

  it('GIVEN the connection never gets Ready THEN play rejects with not_ready after the ready timeout, having played nothing', async () => {
    const s = start({ readyTimeoutMs: 5_000 });
    const outcome = s.play({ oggPath: clip.oggPath }, new AbortController().signal).then(
      () => 'resolved',
      (error: { code: string }) => error.code,
    );
    await vi.advanceTimersByTimeAsync(4_999);
    expect(await Promise.race([outcome, new Promise((resolve) => setImmediate(() => resolve('waiting')))])).toBe('waiting');
    await vi.advanceTimersByTimeAsync(1);
    expect(await outcome).toBe('not_ready');
    expect(s.player.state.status).toBe(AudioPlayerStatus.Idle);
  });
});

/** Open file descriptors of this process that point under `under` (Linux: /proc/self/fd). */
function openFilesUnder(under: string): number {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`).startsWith(under)) n++;
    } catch {
      // closed between the listing and the read
    }
  }
  return n;
}

describe('a name and its line cut short', () => {
  it('GIVEN a two-part clip skipped mid-name, again and again THEN no file of the audio cache stays open (weeks of /skip leak no descriptor)', async () => {
    // Long enough that the name's file is still being read when the skip comes.
    const long = join(dir, 'long-name.ogg');
    await ffmpeg([
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=330:duration=20',
      '-ar',
      '48000',
      '-ac',
      '2',
      '-c:a',
      'libopus',
      '-b:a',
      '64k',
      long,
    ]);
    const s = start();
    const net = new SteppedNetworking();
    ready(s, net);
    const baseline = openFilesUnder(dir);
    for (let round = 0; round < 5; round++) {
      const skip = new AbortController();
      const sent = net.sound.length;
      const playing = s.play({ parts: [{ oggPath: long }, { oggPath: clip.oggPath }] }, skip.signal);
      for (let i = 0; i < 100 && net.sound.length < sent + 2; i++) await cycle(s.player);
      expect(openFilesUnder(dir)).toBeGreaterThan(baseline); // the name is being read
      skip.abort();
      expect(await stepUntil(s.player, playing, 1)).toEqual({ ok: true });
    }
    // Closing a file is asynchronous (libuv's thread pool, slower on a loaded machine): up to 2 s.
    const end = process.hrtime.bigint() + 2_000_000_000n;
    while (openFilesUnder(dir) > baseline && process.hrtime.bigint() < end) await new Promise<void>((resolve) => setImmediate(resolve));
    expect(openFilesUnder(dir)).toBe(baseline);
  });
});

describe('DAVE: the first frames wait until the call can encrypt them', () => {
  it('GIVEN Ready but the bot not yet in the MLS group THEN no frame goes out until the call transitions, then the whole clip does', async () => {
    const s = start();
    const net = new SteppedNetworking({ others: ['listener'], dave: { protocolVersion: 1, ready: false } });
    ready(s, net);
    const playing = s.play({ oggPath: clip.oggPath }, new AbortController().signal);
    for (let i = 0; i < 20; i++) await cycle(s.player);
    expect(net.frames).toEqual([]);
    net.state.dave!.session!.ready = true;
    s.connection.emit('transitioned', 1);
    expect(await stepUntil(s.player, playing)).toEqual({ ok: true });
    expect(net.sound).toEqual(clip.frames);
    expect(logs.filter((l) => l.level >= 40)).toEqual([]);
  });

  it('GIVEN the call never becomes able to encrypt THEN the clip plays anyway after daveReadyTimeoutMs, with a warning', async () => {
    const s = start({ daveReadyTimeoutMs: 3_000 });
    const net = new SteppedNetworking({ others: ['listener'], dave: { protocolVersion: 1, ready: false } });
    ready(s, net);
    const playing = s.play({ oggPath: clip.oggPath }, new AbortController().signal);
    await vi.advanceTimersByTimeAsync(2_900);
    expect(net.frames).toEqual([]);
    await vi.advanceTimersByTimeAsync(100);
    expect(logs.filter((l) => l.level === 40).map((l) => l.msg)).toEqual(['the call cannot encrypt yet (DAVE); playing anyway']);
    expect(await stepUntil(s.player, playing)).toEqual({ ok: true });
    expect(net.sound).toEqual(clip.frames);
  });

  it('GIVEN a call on transport encryption only (DAVE version 0, or DAVE off) THEN nothing waits', async () => {
    for (const call of [{ others: ['listener'], dave: { protocolVersion: 0, ready: false } }, { others: ['listener'] }]) {
      const s = start();
      const net = new SteppedNetworking(call);
      ready(s, net);
      expect(await stepUntil(s.player, s.play({ oggPath: clip.oggPath }, new AbortController().signal))).toEqual({ ok: true });
      expect(net.sound).toEqual(clip.frames);
      s.destroy();
    }
  });
});

describe('rejoining after a disconnect the library does not recover from', () => {
  /** Disconnects `s` (the main gateway dropped the voice state, say) and records when it rejoins. */
  function disconnect(s: GuildVoiceSession): number[] {
    const at: number[] = [];
    const t0 = Date.now();
    const rejoin = s.connection.rejoin.bind(s.connection);
    vi.spyOn(s.connection, 'rejoin').mockImplementation((config) => {
      at.push(Date.now() - t0);
      return rejoin(config);
    });
    setConnection(s.connection, VoiceConnectionStatus.Disconnected, { reason: VoiceConnectionDisconnectReason.EndpointRemoved });
    return at;
  }

  it('GIVEN the gateway cannot take the rejoin THEN attempts wait 2 s, 4 s, 8 s after the grace, and the session ends after the third', async () => {
    let gatewayUp = true;
    const s = start({ reconnectGraceMs: 1_000, rejoinBackoffMs: 2_000, maxRejoins: 3 }, () => gatewayUp);
    ready(s, new SteppedNetworking());
    gatewayUp = false;
    const rejoins = disconnect(s);
    await vi.advanceTimersByTimeAsync(2_999);
    expect(rejoins).toEqual([]); // not at the end of the grace: after a pause
    await vi.advanceTimersByTimeAsync(20_000);
    expect(rejoins).toEqual([3_000, 7_000, 15_000]);
    expect(s.state).toEqual({ status: 'destroyed', reason: 'too many rejoins' });
  });

  it('GIVEN a voice worker whose main gateway reports each rejoin not sent afterwards THEN the same attempts: 2 s, 4 s, 8 s after the grace', async () => {
    const s = start({ reconnectGraceMs: 1_000, rejoinBackoffMs: 2_000, maxRejoins: 3 });
    ready(s, new SteppedNetworking());
    const at: number[] = [];
    const t0 = Date.now();
    const rejoin = s.connection.rejoin.bind(s.connection);
    vi.spyOn(s.connection, 'rejoin').mockImplementation((config) => {
      at.push(Date.now() - t0);
      const sent = rejoin(config);
      // What the worker does when the main thread says the payload was not sent.
      queueMicrotask(() =>
        setConnection(s.connection, VoiceConnectionStatus.Disconnected, { reason: VoiceConnectionDisconnectReason.AdapterUnavailable }),
      );
      return sent;
    });
    setConnection(s.connection, VoiceConnectionStatus.Disconnected, { reason: VoiceConnectionDisconnectReason.EndpointRemoved });
    await vi.advanceTimersByTimeAsync(20_000);
    expect(at).toEqual([3_000, 7_000, 15_000]);
    expect(s.state).toEqual({ status: 'destroyed', reason: 'too many rejoins' });
  });

  it('GIVEN a rejoin that gets the connection Ready again THEN a later disconnect starts the backoff over', async () => {
    const s = start({ reconnectGraceMs: 1_000, rejoinBackoffMs: 2_000 });
    ready(s, new SteppedNetworking());
    const first = disconnect(s);
    await vi.advanceTimersByTimeAsync(3_000);
    expect(first).toEqual([3_000]);
    ready(s, new SteppedNetworking());
    expect(s.state).toEqual({ status: 'ready' });
    vi.restoreAllMocks();
    const second = disconnect(s);
    await vi.advanceTimersByTimeAsync(3_000);
    expect(second).toEqual([3_000]);
  });

  it('GIVEN 4014 (removed from the channel) THEN no rejoin: the session ends after the grace', async () => {
    const s = start({ reconnectGraceMs: 1_000 });
    ready(s, new SteppedNetworking());
    const rejoin = vi.spyOn(s.connection, 'rejoin');
    setConnection(s.connection, VoiceConnectionStatus.Disconnected, {
      reason: VoiceConnectionDisconnectReason.WebSocketClose,
      closeCode: 4014,
    });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(rejoin).not.toHaveBeenCalled();
    expect(s.state).toEqual({ status: 'destroyed', reason: 'disconnected (4014)' });
  });
});
