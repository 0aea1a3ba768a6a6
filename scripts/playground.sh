#!/usr/bin/env bash
# The README's first command: sets this machine up for the project (Node 24 when the machine's is
# older, ffmpeg, espeak-ng, npm ci) and starts the playground (`npm run playground`), which prints
# the URL to open. Safe to run again: what is already there is kept. PLAYGROUND_PORT picks the port.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bootstrap.sh

yomiage_node
# espeak-ng makes the emulator read the text aloud; without it the playground speaks in tones. The
# fonts are the page's: Japanese text, and the icons and chat emoji (boxes without it), as in CI.
yomiage_packages ffmpeg:ffmpeg ffprobe:ffmpeg '?espeak-ng:espeak-ng' '?fonts-noto-cjk' '?fonts-noto-color-emoji'
yomiage_npm_ci --if-changed
exec npm run playground
