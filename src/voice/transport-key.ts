import { createSecretKey, type KeyObject } from 'node:crypto';
import { VoiceConnectionStatus, type VoiceConnection, type VoiceConnectionState } from '@discordjs/voice';

/** The part of @discordjs/voice's networking state this reads: the session's transport key. */
interface NetworkingLike {
  state: { connectionData?: { encryptionMode?: string; secretKey?: Uint8Array | KeyObject } };
  on(event: 'stateChange', listener: () => void): unknown;
}

const watched = new WeakSet<object>();

/**
 * Hands @discordjs/voice the call's AES-256-GCM transport key as a KeyObject instead of raw bytes.
 * The library calls createCipheriv with the key for every packet, and Node checks raw key bytes
 * for being a KeyObject or CryptoKey each time: 16 µs a packet instead of 4 here, about a third of
 * the bot's audio loop with 100 calls playing (`npm run bench:voice`). Only the
 * AES-GCM mode is touched (libsodium's XChaCha20 needs the bytes); a new session description
 * (resume, reconnect) brings new bytes, converted again.
 */
export function cacheTransportKey(connection: VoiceConnection): void {
  const onConnection = (_old: VoiceConnectionState, state: VoiceConnectionState) => {
    if (state.status !== VoiceConnectionStatus.Ready && state.status !== VoiceConnectionStatus.Connecting) return;
    const networking = state.networking as unknown as NetworkingLike;
    convert(networking);
    if (watched.has(networking)) return;
    watched.add(networking);
    networking.on('stateChange', () => convert(networking));
  };
  connection.on('stateChange', onConnection);
}

function convert(networking: NetworkingLike): void {
  const data = networking.state.connectionData;
  if (data?.encryptionMode !== 'aead_aes256_gcm_rtpsize' || !(data.secretKey instanceof Uint8Array)) return;
  data.secretKey = createSecretKey(data.secretKey);
}
