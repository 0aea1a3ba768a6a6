import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startFakeVoiceServer, trustCertificate, type FakeVoiceServer } from '@yomiage/local-discord';
import { LISTENER_USER_ID, loopbackAdapter, type AdapterLog } from '@yomiage/local-discord/test/voice/helpers';
import { createLogger } from '../../src/util/log.ts';
import { VoiceManager, type EndedSession, type RejoinRefusal, type SessionRecovery } from '../../src/voice/manager.ts';

// The voice manager's account of recoveries and its refusal to rejoin, with the real
// @discordjs/voice on this thread (VOICE_WORKERS=0: the same session events as from a worker)
// against the local voice server, whose closes play Discord dropping the call. The gateway adapter
// plays the main gateway (loopbackAdapter): each op 4 join is answered with the server's endpoint.
const BOT = '100000000000000001';

let voice: FakeVoiceServer;
let manager: VoiceManager | undefined;
let guildSeq = 0;

beforeAll(async () => {
  voice = await startFakeVoiceServer();
  trustCertificate(voice.caCertPem);
});
afterEach(() => {
  manager?.destroyAll();
  manager = undefined;
});
afterAll(async () => {
  await voice?.close();
});

/** A manager with one session, Ready, in a call with a listener; what it emits, and what reached the main gateway. */
async function joined(refusal: () => RejoinRefusal | null = () => null) {
  const guildId = `50000000000000000${++guildSeq}`;
  const channelId = `${guildId}9`;
  voice.simulateListener({ guildId, channelId, userId: LISTENER_USER_ID });
  manager = new VoiceManager({ logger: createLogger({ level: 'silent' }), reconnectGraceMs: 500, mayRejoin: refusal });
  const recovered: SessionRecovery[] = [];
  const ended: EndedSession[] = [];
  manager.on('recovered', (r) => recovered.push(r));
  manager.on('ended', (e) => ended.push(e));
  const log: AdapterLog = { joins: [] };
  await manager.join({ guildId, channelId, textChannelId: null, accountId: BOT, adapterCreator: loopbackAdapter(voice, guildId, log) });
  await voice.waitForDave(guildId);
  return { m: manager, guildId, channelId, recovered, ended, joins: log.joins };
}

describe('the voice manager: recoveries by cause, and rejoins Discord would refuse', () => {
  it('GIVEN Discord resumes (4015) then drops (4006, 4009) the call THEN each recovery is counted by cause, per session and in total, the session Ready', async () => {
    const { m, guildId, channelId, recovered, joins } = await joined();
    for (const [i, code] of [4015, 4006, 4009].entries()) {
      voice.closeConnection(guildId, code);
      await vi.waitFor(() => expect(recovered).toHaveLength(i + 1), { timeout: 10_000 });
    }
    expect(recovered).toEqual([
      { guildId, channelId, accountId: BOT, cause: 'resumed' },
      { guildId, channelId, accountId: BOT, cause: 'rejoined' },
      { guildId, channelId, accountId: BOT, cause: 'rejoined' },
    ]);
    await vi.waitFor(() => expect(m.health()[0]?.status).toBe('ready'), { timeout: 10_000 });
    expect(m.health()).toEqual([
      {
        guildId,
        channelId,
        accountId: BOT,
        status: 'ready',
        recoveries: { worker_crash: 0, worker_hang: 0, stall: 0, play_timeout: 0, resumed: 1, rejoined: 2, server_moved: 0 },
      },
    ]);
    expect(m.recoveries()).toMatchObject({ resumed: 1, rejoined: 2 });
    // The resume sent nothing to the main gateway; each rejoin signalled the channel again.
    expect(joins.map((j) => j.channel_id)).toEqual([channelId, channelId, channelId]);
  });

  it('GIVEN the account may no longer connect THEN a drop (4006) ends the session instead: no join is sent, it ends once, saying why', async () => {
    let refuse = false;
    const { m, guildId, channelId, recovered, ended, joins } = await joined(() => (refuse ? 'no_connect' : null));
    refuse = true;
    voice.closeConnection(guildId, 4006);
    await vi.waitFor(() => expect(ended).toHaveLength(1), { timeout: 10_000 });
    expect(ended[0]).toMatchObject({ guildId, voiceChannelId: channelId, reason: 'no_connect' });
    expect(m.sessions(guildId)).toEqual([]);
    // The first join, then only the leave.
    await vi.waitFor(() => expect(joins.map((j) => j.channel_id)).toEqual([channelId, null]), { timeout: 5_000 });
    expect(recovered).toEqual([]);
  });
});
