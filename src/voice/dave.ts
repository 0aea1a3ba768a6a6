import { NetworkingStatusCode, VoiceConnectionStatus, type VoiceConnection } from '@discordjs/voice';

/**
 * Whether audio sent on `connection` now reaches the call end-to-end encrypted where the call
 * uses DAVE. @discordjs/voice 0.19 sends frames in the clear while its DAVE session is not ready
 * (`DAVESession.encrypt`), which listeners' clients drop: that happens after every join or new
 * voice session until the bot is welcomed into the call's MLS group (a 'transitioned' event).
 * True also when the call is on transport encryption only (protocol version 0, or DAVE turned
 * off): then there is nothing to wait for. Who else is in the call is no guide: the voice server
 * announces the others (op 11) only after the connection is Ready.
 */
export function callCanEncrypt(connection: VoiceConnection): boolean {
  const state = connection.state;
  if (state.status !== VoiceConnectionStatus.Ready) return false;
  const networking = state.networking.state;
  if (networking.code !== NetworkingStatusCode.Ready) return false;
  const dave = networking.dave;
  if (!dave || dave.protocolVersion === 0) return true;
  return dave.session?.ready === true;
}
