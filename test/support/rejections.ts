import { afterEach, beforeEach } from 'vitest';

/**
 * The unhandled rejections of each test of the calling file, as they come: a promise that fails
 * with nobody waiting on it (in the bot, an error report to the operator; elsewhere, the process
 * ending). Registers its own beforeEach / afterEach.
 */
export function unhandledRejections(): unknown[] {
  const seen: unknown[] = [];
  const onRejection = (reason: unknown) => seen.push(reason);
  beforeEach(() => {
    seen.length = 0;
    process.on('unhandledRejection', onRejection);
  });
  afterEach(() => void process.off('unhandledRejection', onRejection));
  return seen;
}
