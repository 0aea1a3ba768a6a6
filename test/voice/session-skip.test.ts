import { AudioPlayerStatus, type DiscordGatewayAdapterCreator } from '@discordjs/voice';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/util/log.ts';
import { GuildVoiceSession } from '../../src/voice/session.ts';

// Issue 9 §5: /skip sent while the player waits for the connection to be Ready was lost (the
// clip played in full once Ready came). The gateway adapter here never answers, so the real
// @discordjs/voice connection stays short of Ready for as long as the test wants.
const silentGateway: DiscordGatewayAdapterCreator = () => ({ sendPayload: () => true, destroy() {} });

let session: GuildVoiceSession | undefined;
afterEach(() => session?.destroy());

describe('GuildVoiceSession.play while the connection is not Ready', () => {
  it('GIVEN a skip (abort) during the wait for Ready THEN play settles at once without playing anything', async () => {
    session = new GuildVoiceSession({ guildId: 'g1', channelId: 'c1', textChannelId: null, adapterCreator: silentGateway, logger: createLogger({ level: 'silent' }), readyTimeoutMs: 5_000 });
    const statuses: string[] = [];
    session.player.on('stateChange', (_old, next) => statuses.push(next.status));
    const skip = new AbortController();
    const started = performance.now();
    const playing = session.play({ mp3: Buffer.from('ID3') }, skip.signal);
    setTimeout(() => skip.abort(), 100);
    await expect(playing).resolves.toBeUndefined();
    // Not the 5 s Ready timeout: the skip ended the wait.
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(statuses).not.toContain(AudioPlayerStatus.Playing);
    expect(statuses).not.toContain(AudioPlayerStatus.Buffering);
  });
});
