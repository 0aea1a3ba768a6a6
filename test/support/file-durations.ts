/**
 * How long each test file took in a recorded run of the whole suite (`npm run bench:suite --
 * --record`), which orders the files on a checkout without results of its own (sequencer.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const DURATIONS_FILE = join(import.meta.dirname, 'file-durations.json');

export interface RecordedDurations {
  /** When and on what the run was recorded. */
  recorded: string;
  /** Seconds by path from the repository root. */
  seconds: Record<string, number>;
}

/** The recorded seconds by path; none when the file is missing or unreadable (the order is only slower). */
export function recordedDurations(): Record<string, number> {
  try {
    return (JSON.parse(readFileSync(DURATIONS_FILE, 'utf8')) as RecordedDurations).seconds;
  } catch {
    return {};
  }
}
