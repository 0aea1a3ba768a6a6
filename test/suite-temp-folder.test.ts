// Where a run of the suite keeps its files (test/support/test-run-temp.ts): how fast it runs,
// nothing of what it checks; whoever set TMPDIR is obeyed.
import { describe, expect, it } from 'vitest';
import { MEMORY_ROOM_BYTES, runTempParent, TMPFS_MAGIC } from './support/test-run-temp.ts';

const EXT4_MAGIC = 0xef53;
const memory = (type: number, freeBytes: number) => ({ dir: '/dev/shm', type, freeBytes });

describe("the run's temp folder", () => {
  it.each([
    ['a tmpfs with room', '/dev/shm', { tmpdirSet: false, memory: memory(TMPFS_MAGIC, MEMORY_ROOM_BYTES) }],
    ['TMPDIR set', '/tmp', { tmpdirSet: true, memory: memory(TMPFS_MAGIC, MEMORY_ROOM_BYTES) }],
    ["a tmpfs without room (a container's 64 MB /dev/shm)", '/tmp', { tmpdirSet: false, memory: memory(TMPFS_MAGIC, 64 * 1024 ** 2) }],
    ['a memory folder that is no tmpfs', '/tmp', { tmpdirSet: false, memory: memory(EXT4_MAGIC, 100 * 1024 ** 3) }],
    ['no memory folder', '/tmp', { tmpdirSet: false }],
  ])('GIVEN %s THEN the run is in %s', (_given, expected, choice) => {
    expect(runTempParent({ machineTmp: '/tmp', ...choice })).toBe(expected);
  });
});
