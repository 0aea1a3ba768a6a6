import opus from '@discordjs/opus';
import { VOICE_CHANNELS, VOICE_SAMPLE_RATE } from '../util/voice-format.ts';

// The one Opus encoder setting of everything the bot plays: the MP3 player, the cache's Ogg Opus
// and a clip played at another volume sound alike.

/** Opus CTL: OPUS_SET_APPLICATION, and OPUS_APPLICATION_AUDIO / VOIP. */
const OPUS_SET_APPLICATION = 4000;
/** Opus CTL: OPUS_SET_PREDICTION_DISABLED (1: the next frames are coded without leaning on the ones before). */
const OPUS_SET_PREDICTION_DISABLED = 4042;
const APPLICATIONS = { audio: 2049, voip: 2048 } as const;

/** A libopus encoder (and decoder) for Discord voice: 48 kHz stereo, `bitrateKbps` (64, as Discord voice carries), `application`. */
export function voiceEncoder(bitrateKbps = 64, application: 'audio' | 'voip' = 'audio'): opus.OpusEncoder {
  const encoder = new opus.OpusEncoder(VOICE_SAMPLE_RATE, VOICE_CHANNELS);
  encoder.setBitrate(bitrateKbps * 1000);
  encoder.applyEncoderCTL(OPUS_SET_APPLICATION, APPLICATIONS[application]);
  return encoder;
}

/**
 * Encodes `pcm` with `encoder`, its first frame (`first`) coded on its own: a listener's decoder
 * carries its state over from the clip before, and a quiet first frame coded against the fresh
 * encoder's state is heard faded in for about 100 ms (a clip re-encoded at another volume was).
 */
export function encodeFrame(encoder: opus.OpusEncoder, pcm: Buffer, first: boolean): Buffer {
  if (!first) return encoder.encode(pcm);
  encoder.applyEncoderCTL(OPUS_SET_PREDICTION_DISABLED, 1);
  try {
    return encoder.encode(pcm);
  } finally {
    encoder.applyEncoderCTL(OPUS_SET_PREDICTION_DISABLED, 0);
  }
}
