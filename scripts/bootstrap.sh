# The project's setup on a fresh machine, shared by the README's playground command
# (scripts/playground.sh) and CI (.ci/run). Source it from bash, then call what you need:
#   yomiage_node                      Node >= 22.12 on PATH (Node 24 from the npm registry when older)
#   yomiage_packages SPEC...          Debian packages, installed when missing (see below)
#   yomiage_npm_ci [--if-changed]     npm ci; with --if-changed, skipped when node_modules already
#                                     matches package-lock.json and this Node
# Nothing here is downloaded from anywhere but the npm registry and the distribution's packages.

yomiage_log() { printf '\n== %s\n' "$*"; }

yomiage_node_ok() {
  command -v node >/dev/null 2>&1 || return 1
  node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>22||(a===22&&b>=12)?0:1)'
}

# @discordjs/voice 0.19 and the DAVE library need Node >= 22.12. The npm registry publishes Node
# itself as a package (node-<os>-<arch>), so an older machine gets Node 24 from there, cached in
# ~/.cache/node24, and native modules are built against its headers. The npm scripts find it there
# too (scripts/node24.cjs), whatever Node the shell has.
yomiage_node() {
  if ! yomiage_node_ok; then
    local os arch pkg dir
    os=$(uname -s | tr '[:upper:]' '[:lower:]')
    case "$(uname -m)" in
      x86_64 | amd64) arch=x64 ;;
      aarch64 | arm64) arch=arm64 ;;
      *) echo "no Node 24 package for $(uname -m): install Node >= 22.12 yourself" >&2; return 1 ;;
    esac
    pkg="node-$os-$arch"
    dir="$HOME/.cache/node24"
    yomiage_log "Node $(node --version 2>/dev/null || echo none) is too old: using Node 24 from the npm registry ($pkg)"
    if [ ! -x "$dir/node_modules/$pkg/bin/node" ]; then
      command -v npm >/dev/null 2>&1 || { echo "npm is needed to fetch Node 24: install Node and npm first" >&2; return 1; }
      npm install --no-save --no-audit --no-fund --prefix "$dir" "$pkg@24" || return 1
    fi
    export PATH="$dir/node_modules/$pkg/bin:$PATH"
    export npm_config_nodedir="$dir/node_modules/$pkg"
  fi
  yomiage_node_ok || { echo "could not get Node >= 22.12" >&2; return 1; }
  echo "node $(node --version), npm $(npm --version)"
}

# Runs a command as root: directly, or through sudo.
yomiage_as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else return 1; fi
}

# Each SPEC is `command:package` (installed when the command is missing), `package` (when dpkg does
# not list it), prefixed with `?` when the project works without it (a warning instead of a failure).
yomiage_packages() {
  local spec optional cmd pkg missing=() required=()
  for spec in "$@"; do
    optional=0
    [ "${spec#\?}" != "$spec" ] && { optional=1; spec="${spec#\?}"; }
    if [ "${spec#*:}" != "$spec" ]; then
      cmd="${spec%%:*}"; pkg="${spec#*:}"
      command -v "$cmd" >/dev/null 2>&1 && continue
    else
      pkg="$spec"
      dpkg -s "$pkg" >/dev/null 2>&1 && continue
    fi
    missing+=("$pkg")
    [ "$optional" -eq 0 ] && required+=("$pkg")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  yomiage_log "installing ${missing[*]} (Debian packages)"
  if command -v apt-get >/dev/null 2>&1 &&
    yomiage_as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
    yomiage_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
    return 0
  fi
  if [ "${#required[@]}" -gt 0 ]; then
    echo "could not install ${required[*]} (apt-get failed, or no root or sudo): install it with your package manager, then run this again" >&2
    return 1
  fi
  echo "warning: could not install ${missing[*]}; going on without it" >&2
}

# npm ci from package-lock.json. With --if-changed, a second run on the same lock file and Node is
# instant (native modules are built for one Node ABI, so another Node installs again).
yomiage_npm_ci() {
  local stamp="node_modules/.yomiage-installed" want
  want="$(node -p 'process.versions.modules') $(node -e 'process.stdout.write(require("crypto").createHash("sha256").update(require("fs").readFileSync("package-lock.json")).digest("hex"))')"
  if [ "${1:-}" = "--if-changed" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    echo "node_modules is up to date (npm ci skipped)"
    return 0
  fi
  yomiage_log "npm ci"
  npm ci --no-audit --no-fund || return 1
  echo "$want" >"$stamp"
}
