import type { Client } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { Audiences, type AudiencesDeps } from '../../src/discord/audience/audiences.ts';
import { SpeechDelivery, type DeliveryDeps } from '../../src/discord/delivery/delivery.ts';
import type { UtteranceMeta } from '../../src/discord/delivery/meta.ts';
import { t } from '../../src/i18n/texts.ts';
import { type ReadyUtterance, textAudience, type Utterance, voiceAudience } from '../../src/speech/queue/utterance.ts';
import type { ReadyAudio } from '../../src/speech/synthesis/synthesize.ts';
import { VoiceSessionError } from '../../src/voice/errors.ts';
import { unhandledRejections } from '../support/rejections.ts';

// Where delivery decides voice or file, and the rule that keeps one channel's text out of another:
// a batch merged for a voice session that can no longer be played there (the bot left) is never
// attached in one of its channels. Collaborators are small fakes recording what
// would reach Discord.

const GUILD = 'g1';

interface Options {
  connected: boolean;
  /** Channels someone now in the call cannot view. */
  hiddenFromCall?: string[];
  /** Channels that post MP3s. */
  mp3Channels?: string[];
  /** Called while a file is being sent (a delete arriving during the upload). */
  duringSend?: () => void;
  /** What playing in voice fails with (the voice layer's error). */
  playError?: unknown;
}

function setup(options: Options) {
  const posted: Array<{ channelId: string; reply?: string }> = [];
  const told: Array<{ channelId: string; messageId?: string; kind: string; content: string }> = [];
  const played: string[] = [];
  const removed: string[] = [];
  /** The final answers of replies to /say and /narrate. */
  const finished: string[] = [];
  const settled: Array<{ id: string; delivered: boolean }> = [];
  const channel = (channelId: string) => ({
    isSendable: () => true,
    send: async (body: { reply?: { messageReference: string } }) => {
      options.duringSend?.();
      posted.push({ channelId, ...(body.reply ? { reply: body.reply.messageReference } : {}) });
      return { delete: async () => void removed.push(channelId) };
    },
  });
  const base = {
    client: { channels: { fetch: async (id: string) => channel(id) }, guilds: { cache: new Map() } } as unknown as Client,
    voice: {
      isConnected: (_guildId: string, channelId: string) => options.connected && channelId === 'vc1',
      sessions: () => (options.connected ? [{ channelId: 'vc1', suppressed: false }] : []),
      boundTo: () => undefined,
      at: () => undefined,
      play: async (guildId: string) => {
        played.push(guildId);
        if (options.playError !== undefined) throw options.playError;
      },
    },
    replies: { finish: async (_owner: unknown, _meta: unknown, body: { content: string }) => (finished.push(body.content), true) },
    notices: {
      tellAuthor: async (to: { channelId: string; messageId?: string }, kind: string, content: string) =>
        void told.push({ ...to, kind, content }),
    },
    jobs: { settle: async (outcomes: typeof settled) => void settled.push(...outcomes) },
    logger: { warn() {}, error() {}, info() {}, debug() {} },
    listenersCanView: (_guildId: string, channelId: string) => !(options.hiddenFromCall ?? []).includes(channelId),
    postsAudio: (_guildId: string, channelId: string) => (options.mp3Channels ?? []).includes(channelId),
  };
  const audiences = new Audiences(base as unknown as AudiencesDeps);
  const deps = { ...base, audiences } as unknown as DeliveryDeps;
  return { delivery: new SpeechDelivery(deps), audiences, posted, told, played, removed, finished, settled };
}

let n = 0;
function message(channelId: string, text: string, audience: string, extra: Partial<UtteranceMeta> = {}): Utterance {
  n++;
  const meta: UtteranceMeta = { delivery: { kind: 'message', channelId, messageId: `m-u${n}` }, lang: 'en', ...extra };
  return {
    id: `u${n}`,
    guildId: GUILD,
    userId: `user${n}`,
    channelId,
    kind: 'auto',
    text,
    voice: 'v',
    speed: 1,
    pitch: 0,
    enqueuedAt: 0,
    audience,
    meta,
  };
}
const MP3 = { mp3: Buffer.from('mp3'), durationMs: 100, fromCache: false, key: 'k' };
const ready = (items: Utterance[], audio: ReadyAudio = MP3): ReadyUtterance => ({ id: items[0]!.id, guildId: GUILD, items, audio });
const signal = new AbortController().signal;

describe('Audiences.audience: decided where the bot knows how the audio will go', () => {
  it("GIVEN the bot in voice THEN every channel read there is the voice session's (an uncached MP3 is played too)", () => {
    expect(setup({ connected: true }).audiences.audience(GUILD, 'staff')).toBe(voiceAudience('vc1'));
  });

  it('GIVEN no voice session THEN each channel is its own audience', () => {
    expect(setup({ connected: false }).audiences.audience(GUILD, 'staff')).toBe(textAudience('staff'));
  });
});

describe("SpeechDelivery.deliver: a file carries one channel's text only", () => {
  const merged = () => [message('staff', 'BANの相談です', voiceAudience('vc1')), message('general', 'こんにちは', voiceAudience('vc1'))];

  it('GIVEN audio merged for the voice session and the bot no longer in voice THEN nothing is posted; each author is told', async () => {
    const { delivery, posted, told } = setup({ connected: false });
    const items = merged();
    expect(await delivery.deliver(ready(items), signal)).toEqual({ played: false, attached: false });
    expect(posted).toEqual([]);
    expect(told.map((t) => [t.channelId, t.messageId, t.kind])).toEqual([
      ['staff', `m-${items[0]!.id}`, 'voice_only'],
      ['general', `m-${items[1]!.id}`, 'voice_only'],
    ]);
    expect(told[0]!.content).toContain('Not posted');
  });

  it("GIVEN one channel's lines merged and no voice THEN they are attached as one reply to the last of them, in that channel", async () => {
    const { delivery, posted, told } = setup({ connected: false });
    const items = [message('general', 'こんにちは', textAudience('general')), message('general', 'またね', textAudience('general'))];
    expect(await delivery.deliver(ready(items), signal)).toEqual({ played: false, attached: true });
    expect(posted).toEqual([{ channelId: 'general', reply: `m-${items[1]!.id}` }]);
    expect(told).toEqual([]);
  });
});

describe('SpeechDelivery.deliver: an auto-read message is played only for the audience it was queued for', () => {
  it('GIVEN a message of an MP3 channel queued with no voice session, and someone /joined since THEN it is posted there, not played', async () => {
    const { delivery, posted, played } = setup({ connected: true, mp3Channels: ['mp3'] });
    const item = message('mp3', 'ファイルで聞く話', textAudience('mp3'));
    expect(await delivery.deliver(ready([item]), signal)).toEqual({ played: false, attached: true });
    expect(played).toEqual([]);
    expect(posted).toEqual([{ channelId: 'mp3', reply: `m-${item.id}` }]);
  });

  it('GIVEN such a message merged with a later one the call may not hear (only posted) THEN the batch is posted, not played', async () => {
    const { delivery, posted, played } = setup({ connected: true, mp3Channels: ['mp3'] });
    const items = [message('mp3', '先の話', textAudience('mp3')), message('mp3', '隠す話', textAudience('mp3'), { attachOnly: true })];
    await delivery.deliver(ready(items), signal);
    expect(played).toEqual([]);
    expect(posted).toEqual([{ channelId: 'mp3', reply: `m-${items[1]!.id}` }]);
  });

  it('GIVEN /say (not auto-read) queued for the voice session THEN it is played', async () => {
    const { delivery, played } = setup({ connected: true });
    const item = { ...message('general', 'say', voiceAudience('vc1')), kind: 'say' as const };
    expect(await delivery.deliver(ready([item]), signal)).toEqual({ played: true, attached: false });
    expect(played).toEqual([GUILD]);
  });

  it('GIVEN /say queued for its text channel before a /join THEN it is attached, not played over what the session plays', async () => {
    const { delivery, played, posted } = setup({ connected: true });
    const item = { ...message('general', 'say', textAudience('general')), kind: 'say' as const };
    expect(await delivery.deliver(ready([item]), signal)).toEqual({ played: false, attached: true });
    expect(played).toEqual([]);
    expect(posted.map((p) => p.channelId)).toEqual(['general']);
  });
});

describe('SpeechDelivery.deliver: the call is checked again when the audio is delivered', () => {
  it('GIVEN someone who cannot view an MP3 channel joined while its message waited THEN it is posted there, not played', async () => {
    const { delivery, posted, played } = setup({ connected: true, hiddenFromCall: ['staff'], mp3Channels: ['staff'] });
    const item = message('staff', 'スタッフの話', voiceAudience('vc1'));
    expect(await delivery.deliver(ready([item]), signal)).toEqual({ played: false, attached: true });
    expect(played).toEqual([]);
    expect(posted).toEqual([{ channelId: 'staff', reply: `m-${item.id}` }]);
  });

  it('GIVEN the same in a channel without MP3 posts THEN it is neither played nor posted; its author is told why', async () => {
    const { delivery, posted, played, told } = setup({ connected: true, hiddenFromCall: ['staff'] });
    const item = message('staff', 'スタッフの話', voiceAudience('vc1'));
    expect(await delivery.deliver(ready([item]), signal)).toEqual({ played: false, attached: false });
    expect([played, posted]).toEqual([[], []]);
    expect(told.map((t) => [t.channelId, t.messageId, t.kind])).toEqual([['staff', `m-${item.id}`, 'hidden']]);
    expect(told[0]!.content).toContain('<#vc1>');
  });

  it('GIVEN a channel everyone in the call can view THEN it is played', async () => {
    const { delivery, played } = setup({ connected: true, hiddenFromCall: ['staff'] });
    await delivery.deliver(ready([message('general', 'みんなの話', voiceAudience('vc1'))]), signal);
    expect(played).toEqual([GUILD]);
  });
});

describe('SpeechDelivery.deliver: a message deleted while its MP3 is prepared gets no file', () => {
  it('GIVEN the delete came before the upload THEN nothing is posted', async () => {
    const { delivery, posted } = setup({ connected: false });
    const aborted = new AbortController();
    aborted.abort();
    expect(await delivery.deliver(ready([message('mp3', '消した話', textAudience('mp3'))]), aborted.signal)).toEqual({
      played: false,
      attached: false,
    });
    expect(posted).toEqual([]);
  });

  it('GIVEN the delete came during the upload THEN the file posted is removed again', async () => {
    const aborted = new AbortController();
    const { delivery, posted, removed } = setup({ connected: false, duringSend: () => aborted.abort() });
    expect(await delivery.deliver(ready([message('mp3', '消した話', textAudience('mp3'))]), aborted.signal)).toEqual({
      played: false,
      attached: false,
    });
    expect(posted).toHaveLength(1);
    expect(removed).toEqual(['mp3']);
  });
});

describe('SpeechDelivery.deliver: a clip whose cached file is gone (another process evicted it)', () => {
  // A cached name, then its line: audio made of two clips, the second's file no longer on disk.
  const twoClips: ReadyAudio = {
    ...MP3,
    parts: [
      { ...MP3, key: 'name' },
      { mp3Path: '/nonexistent/evicted.mp3', durationMs: 100, fromCache: true, key: 'line' },
    ],
  };
  const rejections = unhandledRejections();

  it('GIVEN /say attach:true played in voice THEN it is heard, the member is told the file could not be attached, and nothing is left unhandled', async () => {
    const { delivery, played, posted, finished, settled } = setup({ connected: true });
    const interaction = { kind: 'interaction' as const, applicationId: 'app', token: 'token' };
    const item = {
      ...message('general', '添付もしてね', voiceAudience('vc1'), { delivery: interaction, forceAttach: true }),
      kind: 'say' as const,
    };
    expect(await delivery.deliver(ready([item], twoClips), signal)).toEqual({ played: true, attached: false });
    expect(played).toEqual([GUILD]);
    expect(posted).toEqual([]);
    expect(finished).toEqual([t('en', 'say.attach_failed')]);
    expect(settled).toEqual([{ id: item.id, delivered: true }]);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(rejections).toEqual([]);
  });

  it('GIVEN an auto-read message to be posted (no voice) THEN nothing is posted and its author is told', async () => {
    const { delivery, posted, told, settled } = setup({ connected: false });
    const item = message('general', 'ファイルで聞く話', textAudience('general'));
    expect(await delivery.deliver(ready([item], twoClips), signal)).toEqual({ played: false, attached: false });
    expect(posted).toEqual([]);
    expect(told.map((x) => [x.channelId, x.messageId, x.content])).toEqual([['general', `m-${item.id}`, t('en', 'error.generic')]]);
    expect(settled).toEqual([{ id: item.id, delivered: false }]);
  });
});

describe('SpeechDelivery.deliver: what could not be played is never dropped without a word', () => {
  const interaction = { kind: 'interaction' as const, applicationId: 'app', token: 'token' };

  it('GIVEN a clip the voice layer gave up on (its call not back in time, the clip never started) THEN each author and each /say is told, in their language', async () => {
    const { delivery, played, posted, told, finished, settled } = setup({
      connected: true,
      playError: new VoiceSessionError('play_timeout', { guildId: GUILD }),
    });
    const chat = message('general', '聞こえなかった話', voiceAudience('vc1'), { lang: 'ja' });
    const said = { ...message('general', '言ってね', voiceAudience('vc1'), { delivery: interaction }), kind: 'say' as const };
    expect(await delivery.deliver(ready([chat]), signal)).toEqual({ played: false, attached: false });
    expect(await delivery.deliver(ready([said]), signal)).toEqual({ played: false, attached: false });
    expect(played).toEqual([GUILD, GUILD]);
    expect(posted).toEqual([]);
    expect(told.map((x) => [x.channelId, x.messageId, x.kind, x.content])).toEqual([
      ['general', `m-${chat.id}`, 'play_failed', t('ja', 'cancelled.play_failed')],
    ]);
    // "Speaking in the voice channel", then what became of it.
    expect(finished).toEqual([t('en', 'say.playing'), t('en', 'cancelled.play_failed')]);
    expect(settled).toEqual([
      { id: chat.id, delivered: false },
      { id: said.id, delivered: false },
    ]);
  });

  it('GIVEN the session ended while it played (the bot was disconnected) THEN a /say is told so; a chat author is not told again (the channel hears it once)', async () => {
    const { delivery, told, finished } = setup({ connected: true, playError: new VoiceSessionError('destroyed', { guildId: GUILD }) });
    const chat = message('general', '切れた話', voiceAudience('vc1'));
    const said = { ...message('general', '言ってね', voiceAudience('vc1'), { delivery: interaction }), kind: 'say' as const };
    await delivery.deliver(ready([chat]), signal);
    await delivery.deliver(ready([said]), signal);
    expect(told).toEqual([]);
    expect(finished).toEqual([t('en', 'say.playing'), t('en', 'cancelled.disconnected')]);
  });
});
