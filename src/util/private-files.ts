import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';

// DATA_DIR and the database hold interaction tokens (until JOB_RETENTION_DAYS ends) and queued
// chat text, and the audio cache holds speech made from chat: all of it is for the bot's own user.
// New ones are created owner-only; ones created earlier with wider modes are narrowed at start-up.

/** What became of one path: narrowed (old and new mode, octal), or left as it was and why. */
export type ModeChange = { path: string; from: string; to: string } | { path: string; refused: string };

const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`;

/**
 * Makes `path` owner-only: a directory 0700, a file 0600. Created when missing and `create` is
 * set; an existing one keeps its owner bits and loses group and other ones. Returns undefined
 * when nothing changed. A directory that is not ours or is shared (sticky, like /tmp) is left
 * alone and reported: narrowing it would lock others out of what is theirs.
 */
export function makePrivate(path: string, kind: 'dir' | 'file', options: { create?: boolean } = {}): ModeChange | undefined {
  const mode = kind === 'dir' ? 0o700 : 0o600;
  if (options.create) {
    if (kind === 'dir') mkdirSync(path, { recursive: true, mode });
    else closeSync(openSync(path, 'a', mode));
  }
  let stat;
  try {
    stat = statSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const current = stat.mode & 0o777;
  if ((current & ~mode) === 0) return undefined;
  if (kind === 'dir' && (stat.mode & 0o1000 || (process.getuid && stat.uid !== process.getuid()))) {
    return { path, refused: `${octal(current)}, shared or not owned by this user: not changed` };
  }
  try {
    chmodSync(path, current & mode);
  } catch (error) {
    return { path, refused: `${octal(current)}, chmod failed (${(error as NodeJS.ErrnoException).code})` };
  }
  return { path, from: octal(current), to: octal(current & mode) };
}
