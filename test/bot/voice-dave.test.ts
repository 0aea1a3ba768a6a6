import type { DAVESession } from '@snazzah/davey';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_IDS } from '@yomiage/local-discord';
import { rmsDb, startFakeVoiceServer, trustCertificate, type FakeVoiceServer, type ReceivedPacket } from '@yomiage/local-discord';
import type { DaveEvent } from '@yomiage/local-discord/voice/dave/gateway';
import type { SimulatedListener } from '@yomiage/local-discord/voice/dave/listener';
import { DaveOp } from '@yomiage/local-discord/voice/dave/opcodes';
import { botPrivacyCode, canDecrypt, e2eeProblems, playedFrames } from '../support/dave-check.ts';
import { startHarness, type Harness } from '../support/bot-harness.ts';

// The real bot speaks DAVE v1 with the fake voice gateway, which is the call's MLS
// external sender, and with two simulated listeners (davey sessions in this process) who decrypt
// every frame. (/join then /say, frame by frame, is the first test of voice.test.ts.) Each test
// fails when the bot's DAVE path is broken; the last one is the negative control
// (YOMIAGE_TEST_BOT_DAVE=off runs the whole file with the bot's DAVE off: all but it fail).
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
const bob = { id: DEFAULT_IDS.bob, username: 'bob' };
const botId = DEFAULT_IDS.bot;
const guildId = DEFAULT_IDS.guild;
const botDave = process.env.YOMIAGE_TEST_BOT_DAVE !== 'off';

let voice: FakeVoiceServer;
let h: Harness;
let aliceEars: SimulatedListener;
let bobEars: SimulatedListener;

beforeAll(async () => {
  voice = await startFakeVoiceServer();
  trustCertificate(voice.caCertPem);
  h = await startHarness({ discord: { voiceEndpoint: () => voice.endpoint }, bot: { voice: { daveEncryption: botDave } } });
  for (const user of [alice, bob]) await h.discord.setVoiceState(user.id, guildId, DEFAULT_IDS.voice);
  aliceEars = voice.simulateListener({ guildId, channelId: DEFAULT_IDS.voice, userId: alice.id });
  bobEars = voice.simulateListener({ guildId, channelId: DEFAULT_IDS.voice, userId: bob.id });
  // The two listeners make their group first (one of them commits the other's Add).
  await voice.waitForDave(guildId);
}, 60_000);
afterAll(async () => {
  await h?.close();
  await voice?.close();
});

/** Collects the DAVE events from now on; `until` resolves with them once `done` holds. */
function daveEvents(done: (events: DaveEvent[]) => boolean, timeoutMs = 15_000): Promise<DaveEvent[]> {
  const events: DaveEvent[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      voice.off('dave', onEvent);
      reject(new Error(`DAVE events so far: ${events.map((e) => e.type).join(', ')}`));
    }, timeoutMs);
    const onEvent = (event: DaveEvent) => {
      events.push(event);
      if (!done(events)) return;
      clearTimeout(timer);
      voice.off('dave', onEvent);
      resolve(events);
    };
    voice.on('dave', onEvent);
  });
}

type Of<T extends DaveEvent['type']> = Extract<DaveEvent, { type: T }>;
const ofType = <T extends DaveEvent['type']>(events: DaveEvent[], type: T) => events.filter((e): e is Of<T> => e.type === type);
const commits = (events: DaveEvent[]) => ofType(events, 'commit');

async function join(): Promise<void> {
  const interaction = await h.discord.sendInteraction({ channelId: DEFAULT_IDS.general, user: alice, name: 'join', locale: 'en-US' });
  const reply = await interaction.waitForResponse((r) => r.kind === 'editOriginal', 30_000);
  expect(String(reply.data?.content)).toContain('Joined');
}

/** /say `text`, and the frames of the resource the voice server then received (silence frames aside). */
async function sayAndHear(text: string): Promise<ReceivedPacket[]> {
  const started = performance.now();
  const interaction = await h.discord.sendInteraction({
    channelId: DEFAULT_IDS.general,
    user: alice,
    name: 'say',
    locale: 'en-US',
    options: [{ name: 'text', type: 3, value: text }],
  });
  await interaction.waitForResponse((r) => r.kind === 'editOriginal', 20_000);
  // Complete once the bot signals speaking off after the resource: all of its frames are in.
  const heard = await voice.waitForAudio({ guildId, startedAfter: started, timeoutMs: 20_000 });
  return playedFrames(voice, heard);
}

const privacyCode = () => botPrivacyCode(guildId);
/** Waits until the bot's privacy code is the listeners' (a voice worker reports it a moment after the change). */
const sameCodeAsListeners = () =>
  vi.waitFor(() => expect([aliceEars.voicePrivacyCode, bobEars.voicePrivacyCode]).toEqual([privacyCode(), privacyCode()]), {
    timeout: 5_000,
  });

describe('DAVE with the real bot', () => {
  it('/join into a call whose listeners already hold a group: version 1, and the bot is welcomed into it', async () => {
    const welcomed = daveEvents((es) => commits(es).some((e) => e.added.includes(botId)));
    await join();
    expect(voice.sessions.findLast((s) => s.serverId === guildId)).toMatchObject({ maxDaveProtocolVersion: 1, daveProtocolVersion: 1 });
    const addition = commits(await welcomed).find((e) => e.added.includes(botId));
    expect(addition).toMatchObject({ committerKind: 'listener', added: [botId] });
    await voice.waitForDave(guildId, 10_000);
    await sameCodeAsListeners();
    expect(privacyCode()).toMatch(/^\d{30}$/);
  });

  it('a listener leaves and rejoins: the bot commits the Remove and the Add; the old session decrypts nothing later', async () => {
    const codeBefore = privacyCode();
    const removed = daveEvents((es) => commits(es).some((e) => e.removed.includes(bob.id)));
    voice.dave.detachListener(bobEars);
    const removal = commits(await removed).find((e) => e.removed.includes(bob.id));
    expect(removal).toMatchObject({ committer: botId, committerKind: 'client', removed: [bob.id], added: [] });
    await voice.waitForDave(guildId, 10_000);
    const oldSession = bobEars.session as DAVESession;

    const added = daveEvents((es) => commits(es).some((e) => e.added.includes(bob.id)));
    voice.dave.attachListener(bobEars);
    const addition = commits(await added).find((e) => e.added.includes(bob.id));
    expect(addition).toMatchObject({ committer: botId, committerKind: 'client', added: [bob.id] });
    await voice.waitForDave(guildId, 10_000);
    expect(bobEars.session).not.toBe(oldSession);

    const frames = await sayAndHear('またきました');
    expect(e2eeProblems(frames, [alice.id, bob.id])).toEqual([]);
    expect(frames.filter((p) => canDecrypt(oldSession, botId, p.frame))).toHaveLength(0);
    await sameCodeAsListeners();
    expect(privacyCode()).toMatch(/^\d{30}$/);
    expect(privacyCode()).not.toBe(codeBefore);
  });

  it('a downgrade to version 0 keeps the audio flowing, transport-encrypted only; op 24 brings DAVE back', async () => {
    const downgraded = daveEvents((es) => es.some((e) => e.type === 'executeTransition' && e.protocolVersion === 0));
    const transitionId = voice.dave.downgrade(guildId);
    const events = await downgraded;
    // Every member, the bot too, reported ready (op 23) before the gateway executed (op 22).
    const ready = ofType(events, 'readyForTransition').filter((e) => e.transitionId === transitionId);
    expect(ready.map((e) => e.userId).sort()).toEqual([alice.id, bob.id, botId].sort());

    const plain = await sayAndHear('いまはひらぶん');
    expect(plain.filter((p) => p.daveFramed)).toHaveLength(0);
    expect(plain.filter((p) => p.heardBy[alice.id] !== 'plain' || p.heardBy[bob.id] !== 'plain')).toHaveLength(0);
    expect(rmsDb(plain.map((p) => p.pcm))).toBeGreaterThan(-40);

    const upgraded = daveEvents((es) => new Set(commits(es).flatMap((e) => e.added)).size === 2);
    voice.dave.upgrade(guildId);
    const creation = commits(await upgraded);
    // A new group (epoch 1): the bot, a pending member with a local group, commits the listeners' Adds.
    expect(creation[0]).toMatchObject({ committer: botId, epoch: 1n });
    expect(creation.every((e) => e.committer === botId)).toBe(true);
    expect(creation.flatMap((e) => e.added).sort()).toEqual([alice.id, bob.id].sort());
    await voice.waitForDave(guildId, 10_000);
    const frames = await sayAndHear('またあんごう');
    expect(e2eeProblems(frames, [alice.id, bob.id])).toEqual([]);
  });

  it('recovery: a bad commit makes the bot send op 31; the gateway removes and re-adds it and audio decrypts again', async () => {
    const recovered = daveEvents((es) => commits(es).some((e) => e.added.includes(botId)));
    const transitionId = voice.dave.sendInvalid(guildId, botId, 'commit');
    const events = await recovered;
    expect(events).toContainEqual({ type: 'invalidCommitWelcome', guildId, userId: botId, transitionId });
    // Removed (its stale leaf) and added again (its new key package), by a listener's commit.
    expect(commits(events).some((e) => e.removed.includes(botId))).toBe(true);
    expect(commits(events).every((e) => e.committerKind === 'listener')).toBe(true);
    await voice.waitForDave(guildId, 10_000);
    const frames = await sayAndHear('なおりました');
    expect(e2eeProblems(frames, [alice.id, bob.id])).toEqual([]);
    await vi.waitFor(() => expect(privacyCode()).toBe(aliceEars.voicePrivacyCode), { timeout: 5_000 });
  });
});

describe('the first clip after a join', () => {
  it('/join then /say at once, while the bot is not yet in the group: even the very first frames are end-to-end encrypted', async () => {
    const leave = await h.discord.sendInteraction({ channelId: DEFAULT_IDS.general, user: alice, name: 'leave', locale: 'en-US' });
    await leave.waitForResponse((r) => r.kind === 'callback');
    // The bot's key package reaches the gateway a second late, as over a slow link: for that
    // long its connection is Ready while its DAVE session cannot encrypt.
    const receive = voice.dave.receiveBinary.bind(voice.dave);
    voice.dave.receiveBinary = (participant, op, payload) => {
      if (participant.kind === 'client' && op === DaveOp.MlsKeyPackage) setTimeout(() => receive(participant, op, payload), 1_000);
      else receive(participant, op, payload);
    };
    try {
      await join(); // no wait for DAVE: the test speaks at once
      const frames = await sayAndHear('はいったらすぐにはなします');
      expect(e2eeProblems(frames, [alice.id, bob.id])).toEqual([]);
    } finally {
      voice.dave.receiveBinary = receive;
    }
  });
});

describe('negative control', () => {
  it('with the bot started without DAVE, the checks above fail: version 0, frames without DAVE framing', async () => {
    await h.restart({ voice: { daveEncryption: false } });
    await join();
    const session = voice.sessions.findLast((s) => s.serverId === guildId)!;
    expect(session.maxDaveProtocolVersion).toBe(0);
    expect(session.daveProtocolVersion).toBe(0);
    const frames = await sayAndHear('ひらぶん');
    expect(e2eeProblems(frames, [alice.id, bob.id])).toContain(`${frames.length} of ${frames.length} frames carry no DAVE framing`);
    expect(voice.dave.settled(guildId)).toBe(false);
  });
});
