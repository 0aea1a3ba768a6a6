/**
 * Everything that shapes one emulated audio file. Two inputs with equal fields give byte-identical
 * MP3s and the same content hash (spec: "the same text and voice give the same audio").
 */
export interface AudioInput {
  kind: 'standard' | 'advanced';
  text: string;
  voice: string;
  /** Effective speed (the standard endpoint's out-of-range values already replaced by 1.0). */
  speed: number;
  /** Effective pitch: semitones for `standard` (-20..20), -1..1 for `advanced`. */
  pitch: number;
  tone?: string | undefined;
  model?: string | undefined;
  seed?: number | undefined;
  temperature?: number | undefined;
}
