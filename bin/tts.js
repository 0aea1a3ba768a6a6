#!/usr/bin/env -S node --experimental-strip-types
// The `tts` command line (`npm run tts`, or the `tts` bin): src/tts/cli.ts, run by Node's built-in
// type stripping with the process's own output, environment and Ctrl-C.
import { main, processIo } from '../src/tts/cli.ts';

process.exit(await main(process.argv.slice(2), processIo()));
