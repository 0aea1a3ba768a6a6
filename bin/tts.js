#!/usr/bin/env -S node --experimental-strip-types
// The `tts` command line; the code is TypeScript, run by Node's built-in type stripping.
import '../src/tts/cli.ts';
