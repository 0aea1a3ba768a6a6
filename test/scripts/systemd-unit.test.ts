import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// deploy/yomiage.service, the unit docs/operating.md tells an operator to install.
const ROOT = join(import.meta.dirname, '..', '..');
const UNIT = join(ROOT, 'deploy', 'yomiage.service');

/** `Key=value` lines of the unit, by section (the last value of a key wins, as in systemd). */
function sections(text: string): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  let current = '';
  for (const line of text.split('\n').map((l) => l.trim())) {
    if (line === '' || line.startsWith('#')) continue;
    const header = /^\[(\w+)\]$/.exec(line);
    if (header) out[(current = header[1]!)] = {};
    else out[current]![line.slice(0, line.indexOf('='))] = line.slice(line.indexOf('=') + 1);
  }
  return out;
}

const analyze = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' }).status === 0;

describe('deploy/yomiage.service', () => {
  it('GIVEN the unit THEN it runs what `npm start` runs, restarts it when it fails, and gives it DATA_DIR /var/lib/yomiage to write', () => {
    const unit = sections(readFileSync(UNIT, 'utf8'));
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
    expect(unit.Service).toMatchObject({
      ExecStart: `/usr/bin/env ${scripts.start}`,
      Restart: 'on-failure',
      Environment: 'DATA_DIR=/var/lib/yomiage',
      StateDirectory: 'yomiage',
      StateDirectoryMode: '0700',
      ProtectSystem: 'strict',
    });
    expect(unit.Install).toEqual({ WantedBy: 'multi-user.target' });
  });

  it.skipIf(!analyze)(
    `GIVEN systemd-analyze${analyze ? '' : ' (not on this machine: skipped)'} THEN systemd reads the unit with no error or warning`,
    () => {
      const result = spawnSync('systemd-analyze', ['verify', UNIT], { encoding: 'utf8' });
      const about = result.stderr.split('\n').filter((line) => line.includes('yomiage.service'));
      expect({ status: result.status, about }).toEqual({ status: 0, about: [] });
    },
  );
});
