import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_IDS } from '@yomiage/local-discord';
import { t } from '../../src/i18n/texts.ts';
import { pendingRows } from '../support/child-bot.ts';
import { value } from '../support/ops.ts';
import { CALLS, guildId, startRecoveryWorld, type CallOutcome, type RecoveryWorld } from '../support/recovery-world.ts';

// Voice that heals itself, through `npm start` as a child process (one bot for the file): two
// accounts read two calls of one server (#Voice for #general, #Voice 2 for #text-2), both in one
// voice worker, each call end-to-end encrypted with its listener (test/support/recovery-world.ts).
// The worker is made to crash and to hang for real (YOMIAGE_TEST_VOICE_FAULTS, tests only), the
// voice server closes the connection and Discord moves it, a moderator disconnects the bot; what
// members hear and read is checked each time. How fast speech comes back is `npm run
// bench:recovery`'s to measure, not asserted here.
const [callA, callB] = CALLS as [(typeof CALLS)[0], (typeof CALLS)[0]];

let w: RecoveryWorld;
beforeAll(async () => {
  w = await startRecoveryWorld();
}, 90_000);
afterAll(async () => {
  await w?.close();
});

/** Speech came back in the call; each request of the trial was heard whole exactly once (the cut one again from its start), encrypted. */
function expectHealed(o: CallOutcome): void {
  expect(o.resumedMs, `${o.call}: speech back after the fault`).toBeDefined();
  expect(o.wholeTimes, `${o.call}: each request heard whole once (${o.requests.map((r) => r.text).join(' | ')})`).toEqual(
    o.requests.map(() => 1),
  );
  // The clip the fault cut, and nothing else, was heard in part.
  expect(o.partial, `${o.call}: heard in part`).toHaveLength(1);
  expect(o.e2ee).toEqual([]);
}

describe('npm start: a voice worker that fails mid-clip', () => {
  it.each(['crash', 'hang'] as const)(
    'the worker is made to %s while both calls speak: speech resumes in both; nothing accepted is lost, nothing heard twice',
    async (kind) => {
      const outcomes = await w.trial(kind);
      expect(outcomes.map((o) => o.call)).toEqual(CALLS.map((c) => c.name));
      outcomes.forEach(expectHealed);
      // Both lines of each call were requested once each (none dropped, none asked again).
      for (const call of CALLS) {
        const lines = w.botTexts().filter((text) => text.startsWith(call.mark) || text.includes(`。${call.mark}`));
        expect(new Set(lines).size, `${call.name}: no line requested twice`).toBe(lines.length);
      }
      await vi.waitUntil(() => pendingRows(w.dataDir) === 0, { timeout: 10_000, message: 'nothing accepted left unsaid' });
    },
    // The trial's own waits (30 s each) say what each call heard when one runs out; it starts
    // again (up to three times) when a busy machine kept the two calls from speaking together.
    150_000,
  );
});

describe('npm start: Discord drops or moves the call', () => {
  const botSession = (server: RecoveryWorld['voice']) =>
    server.sessions.findLast((s) => s.serverId === guildId && s.userId === DEFAULT_IDS.bot)!;

  it('closed with 4015 (resumable): the same voice session resumes and the next line is heard', async () => {
    const session = botSession(w.voice);
    w.voice.closeConnection(guildId, 4015, DEFAULT_IDS.bot);
    await vi.waitUntil(() => session.resumes === 1, { timeout: 10_000, message: 'the resume' });
    const heard = await w.speak(callA, '赤、再開のあとの発言');
    expect(heard.wholeTimes).toEqual([1]);
    expect(botSession(w.voice)).toBe(session);
  });

  it('closed with 4006 (session no longer valid): a new voice session, and the next line is heard', async () => {
    const session = botSession(w.voice);
    w.voice.closeConnection(guildId, 4006, DEFAULT_IDS.bot);
    await vi.waitUntil(() => botSession(w.voice) !== session, { timeout: 10_000, message: 'a new voice session' });
    const heard = await w.speak(callA, '赤、入り直したあとの発言');
    expect(heard.wholeTimes).toEqual([1]);
    expect(heard.e2ee).toEqual([]);
  });

  it('Discord moves the call to another voice server: the bot connects there and the next line is heard there', async () => {
    w.otherVoice.simulateListener({ guildId, channelId: callA.voice, userId: callA.listener.id });
    expect(await w.discord.moveVoiceServer(guildId, w.otherVoice, [DEFAULT_IDS.bot])).toBe(1);
    await w.otherVoice.waitForDave(guildId, 20_000, callA.voice);
    const heard = await w.speak(callA, '赤、引っ越したあとの発言', w.otherVoice);
    expect(heard.wholeTimes).toEqual([1]);
    expect(heard.e2ee).toEqual([]);
  });

  it('/metrics counts each recovery by its cause', async () => {
    const text = await (await fetch(`${w.metricsUrl}/metrics`)).text();
    const recoveries = (cause: string) => value(text, 'yomiage_voice_recoveries_total', { cause });
    // Each fault recovered both calls; each drop, the one call it hit.
    expect({
      worker_crash: recoveries('worker_crash'),
      worker_hang: recoveries('worker_hang'),
      resumed: recoveries('resumed'),
      rejoined: recoveries('rejoined'),
      server_moved: recoveries('server_moved'),
    }).toEqual({ worker_crash: 2, worker_hang: 2, resumed: 1, rejoined: 1, server_moved: 1 });
  });
});

describe('npm start: removed on purpose', () => {
  it("a moderator disconnects the bot: it does not come back, says so once in the server's language, and the other call goes on", async () => {
    const said = t('ja', 'voice.disconnected');
    const notice = w.discord.waitForMessage((m) => m.channelId === callA.text && m.content === said, 20_000);
    const asked = w.discord.botVoiceStates.length;
    await w.discord.disconnectMember(guildId, DEFAULT_IDS.bot);
    await notice;
    // The other account's call is untouched: a line there is heard whole; by then nothing more was said or joined.
    const heard = await w.speak(callB, '青、ひとりになったあとの発言');
    expect(heard.wholeTimes).toEqual([1]);
    expect(w.discord.messages.filter((m) => m.content === said)).toHaveLength(1);
    const mainJoins = w.discord.botVoiceStates.slice(asked).filter((s) => s.botId === undefined && s.channelId !== null);
    expect(mainJoins).toEqual([]);
    expect(w.discord.guilds[0]!.voiceStates.some((v) => v.userId === DEFAULT_IDS.bot)).toBe(false);
  });
});
