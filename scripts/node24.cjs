#!/usr/bin/env node
// `node scripts/node24.cjs ARGS` is `node ARGS` under Node >= 22.12, whatever Node started it. npm
// runs a script with the first `node` on PATH, often the machine's older one, which fails far from
// the cause (vitest: "Map.groupBy is not a function"; the bot: "bad option:
// --experimental-strip-types"). So every npm script starts here: with an old Node it switches to
// the Node 24 that scripts/playground.sh keeps in ~/.cache/node24, or stops with one line saying
// what to run. Plain CommonJS with nothing newer than Node 10, so that an old Node can read it.
'use strict';
/* eslint-disable @typescript-eslint/no-require-imports -- CommonJS, so that an old Node can read it */
const childProcess = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

// @discordjs/voice 0.19 and the DAVE library (scripts/bootstrap.sh checks the same version).
const MINIMUM = [22, 12];

function recentEnough(version) {
  const parts = version.replace(/^v/, '').split('.').map(Number);
  return parts[0] > MINIMUM[0] || (parts[0] === MINIMUM[0] && parts[1] >= MINIMUM[1]);
}

/** The Node 24 that scripts/bootstrap.sh fetches from the npm registry, when it is there. */
function cachedNode() {
  const arch = { x64: 'x64', arm64: 'arm64' }[process.arch];
  if (!arch) return null;
  const pkg = path.join(os.homedir(), '.cache', 'node24', 'node_modules', 'node-' + process.platform + '-' + arch);
  const bin = path.join(pkg, 'bin', 'node');
  try {
    const version = JSON.parse(fs.readFileSync(path.join(pkg, 'package.json'), 'utf8')).version;
    return fs.existsSync(bin) && recentEnough(version) ? bin : null;
  } catch (_error) {
    return null;
  }
}

const node = recentEnough(process.versions.node) ? process.execPath : cachedNode();
if (!node) {
  process.stderr.write(
    'yomiage needs Node >= 22.12 and this is Node ' +
      process.version +
      ': run `bash scripts/playground.sh` once (it puts Node 24 in ~/.cache/node24, which npm scripts then use), or install Node 24 (`nvm install` reads .nvmrc)\n',
  );
  process.exit(1);
}

// The chosen Node first on PATH, so that what the script starts by name (vitest's workers, `node`
// in a test, a shebang's `env node`) runs under it too.
const env = Object.assign({}, process.env);
const pathKey = Object.keys(env).find((key) => key.toUpperCase() === 'PATH') || 'PATH';
env[pathKey] = path.dirname(node) + path.delimiter + (env[pathKey] || '');
const args = process.argv.slice(2);

if (typeof process.execve === 'function') {
  // Node >= 22.15 replaces this process: the same pid, signals and exit status, no parent left over.
  process.execve(node, [node].concat(args), env);
} else {
  // An older Node (the machine's) stays as the parent: passes signals on and ends as the child did.
  const child = childProcess.spawn(node, args, { stdio: 'inherit', env: env });
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  const forward = {};
  signals.forEach((signal) => {
    forward[signal] = () => child.kill(signal);
    process.on(signal, forward[signal]);
  });
  child.on('error', (error) => {
    process.stderr.write('could not start ' + node + ': ' + error.message + '\n');
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    if (signal) {
      signals.forEach((s) => process.removeListener(s, forward[s]));
      process.kill(process.pid, signal);
    } else {
      process.exit(code === null ? 1 : code);
    }
  });
}
