import { EventEmitter } from 'node:events';
import { Collection, Events, type Client } from 'discord.js';
import { describe, expect, it, vi } from 'vitest';
import { t } from '../../src/i18n/texts.ts';
import { ChatChanges } from '../../src/discord/events/chat-changes.ts';
import { resumeAfterRestart, type ResumeDeps } from '../../src/discord/events/start-up.ts';
import type { AutoReader } from '../../src/discord/events/auto-read.ts';
import { SpeechScheduler } from '../../src/speech/queue/scheduler.ts';
import type { Utterance } from '../../src/speech/queue/utterance.ts';
import type { ClaimedUtterance } from '../../src/speech/queue/journal.ts';
import type { Logger } from '../../src/util/log.ts';
import { FakeClock, SOON } from '../support/clock.ts';
import { FakeSynth } from '../speech/queue-fakes.ts';

// Deletions, edits, bans and deleted channels reach queued speech through ChatChanges
// (src/discord/events/chat-changes.ts), during a restart's restore too.

const logger = { info() {}, warn() {}, error() {} } as unknown as Logger;

/** Queued speech (requests wait forever), the client's events, and what is still to be read (`left`). */
function setup() {
  const q = new SpeechScheduler({ synthesize: new FakeSynth({ manual: true }), clock: new FakeClock(), coalesce: { holdMs: 0 } });
  const events = new EventEmitter();
  const client = events as unknown as Client;
  // An edit reads the message's new content in place of the old.
  const autoRead = { edited: (m: { content: string }, old: Utterance) => ({ ...old, text: m.content }) } as unknown as AutoReader;
  const chatChanges = new ChatChanges({ scheduler: q, autoRead, logger });
  chatChanges.listen(client);
  const left = () =>
    q
      .close()
      .map((u) => u.text)
      .sort();
  return { q, client, events, chatChanges, left };
}

/** What a restart's restore works with: `setup()`'s scheduler, client and ChatChanges, no voice session back, and `rest`. */
function resumeDeps(
  { q, client, chatChanges }: Pick<ReturnType<typeof setup>, 'q' | 'client' | 'chatChanges'>,
  rest: Record<string, unknown>,
): ResumeDeps {
  return {
    client,
    scheduler: q,
    logger,
    chatChanges,
    stillHeard: () => false,
    sessions: { list: () => [] },
    ...rest,
  } as unknown as ResumeDeps;
}

/** A member's message read aloud: message `messageId` of `channelId`. */
function said(text: string, channelId: string, messageId: string, userId = 'alice'): Utterance {
  const meta = { delivery: { kind: 'message', channelId, messageId }, lang: 'ja' };
  return { id: `u${messageId}`, enqueuedAt: 0, guildId: 'g1', userId, channelId, kind: 'auto', text, voice: 'v', speed: 1, pitch: 0, meta };
}

describe('ChatChanges', () => {
  it("GIVEN a poll's result queued WHEN the poll's message is deleted THEN its result is not read, nor another poll's", () => {
    const { q, events, left } = setup();
    const result = (text: string, messageId: string, pollMessageId: string) => {
      const u = said(text, 'c1', messageId);
      return { ...u, meta: { ...(u.meta as object), pollMessageId } };
    };
    q.restore([result('投票結果、消える', '11', '1'), result('投票結果、残る', '12', '2'), said('本文', 'c1', '3')]);
    events.emit(Events.MessageDelete, { guildId: 'g1', id: '1' });
    expect(left()).toEqual(['投票結果、残る', '本文']);
  });

  it('GIVEN messages queued in threads WHEN a thread, or the channel they belong to, is deleted THEN theirs are not read', () => {
    const { q, events, left } = setup();
    q.restore([said('本文', 'c1', '1'), said('スレッド', 't1', '2'), said('別スレッド', 't2', '3'), said('残る', 'c2', '4')]);
    events.emit(Events.ChannelDelete, { guildId: 'g1', id: 'c1', threads: { cache: new Map([['t1', {}]]) } });
    events.emit(Events.ThreadDelete, { guildId: 'g1', id: 't2', parentId: 'c2' });
    expect(left()).toEqual(['残る']);
  });

  it('GIVEN a restart restoring the queue WHEN messages are deleted, edited or their author banned meanwhile THEN that holds', async () => {
    const { q, client, events, chatChanges, left } = setup();
    const message = (id: string) => ({ id, editedTimestamp: null, inGuild: () => true });
    let answerSecond: () => void = () => {};
    const fetched: string[] = [];
    const channel = (id: string, ids: string[], wait: boolean) => ({
      isTextBased: () => true,
      messages: {
        fetch: async () => {
          if (wait) await new Promise<void>((resolve) => (answerSecond = resolve));
          fetched.push(id);
          return new Collection(ids.map((m) => [m, message(m)]));
        },
      },
    });
    // The first channel answers at once; the second only once the changes below have come.
    const channels = new Map([
      ['c1', channel('c1', ['11', '12'], false)],
      ['c2', channel('c2', ['21', '22'], true)],
    ]);
    Object.assign(client, { guilds: { cache: new Map([['g1', { channels: { cache: channels } }]]) } });
    const before = [said('消される', 'c1', '11'), said('古い文', 'c1', '12'), said('残る', 'c2', '21'), said('追放', 'c2', '22', 'carol')];
    const deps = resumeDeps(
      { q, client, chatChanges },
      {
        voice: { isConnected: () => true, sessions: () => [{ suppressed: false }], size: 0 },
        store: { claim: async () => before.map((utterance) => ({ utterance, restores: 1 }) as ClaimedUtterance), remove() {} },
      },
    );
    const resumed = resumeAfterRestart(deps);
    await vi.waitUntil(() => fetched.includes('c1'), SOON);
    events.emit(Events.MessageDelete, { guildId: 'g1', id: '11' });
    const edited = { guildId: 'g1', id: '12', editedTimestamp: 1, partial: false, content: '新しい文', inGuild: () => true };
    events.emit(Events.MessageUpdate, null, edited);
    events.emit(Events.GuildBanAdd, { guild: { id: 'g1' }, user: { id: 'carol' } });
    answerSecond();
    await resumed;
    expect(left()).toEqual(['新しい文', '残る'].sort());
  });

  it("GIVEN a /say asked in English that failed its restores too often THEN the notice posted in its channel is in the server's language", async () => {
    const { q, client, chatChanges } = setup();
    Object.assign(client, { guilds: { cache: new Map() }, channels: { cache: new Map() } });
    const say = { ...said('何度も落ちた', 'c1', '31'), kind: 'say' as const, meta: { delivery: { kind: 'interaction' }, lang: 'en' } };
    const posted: Array<{ channelId: string; text: string }> = [];
    const deps = resumeDeps(
      { q, client, chatChanges },
      {
        voice: { isConnected: () => false, sessions: () => [], size: 0 },
        store: { claim: async () => [{ utterance: say, restores: 4 } as ClaimedUtterance], remove() {} },
        repos: { guildSettings: { get: () => ({ locale: 'ja' }) }, autoRead: { postsAudio: () => false } },
        notices: { post: async (channelId: string, text: string) => (posted.push({ channelId, text }), true) },
      },
    );
    expect(await resumeAfterRestart(deps)).toMatchObject({ dropped: 1 });
    // Everyone in the channel reads it, not only the member who asked.
    expect(posted).toEqual([{ channelId: 'c1', text: t('ja', 'restart.gave_up', { count: 1 }) }]);
  });
});
