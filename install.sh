#!/bin/sh
# Install the harness as the `ahp-interop` command, for a plain shell in any folder
# (an SDK's own checkout, its CI): a virtual environment holding the pinned
# dependencies (requirements.lock, hashes checked) and this checkout, editable, so the
# command always runs this checkout's code, schemas and scenarios.
#
#   ./install.sh [DIR]     DIR: where the environment goes (default: .venv here)
#
# Then put DIR/bin on PATH (the last line printed says how). Re-running it updates
# the environment in place. It builds no adapter: `ahp-interop build` (or `nox -s
# build`) does, once Node.js, Go and Rust are installed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
target=${1:-"$here/.venv"}
python=${PYTHON:-python3}
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "install.sh: needs Python 3.11 or newer as \`$python\` (set PYTHON=...)" >&2
    exit 2
fi
"$python" -m venv "$target"
"$target/bin/python" -m pip install --quiet --disable-pip-version-check \
    --require-hashes -r "$here/requirements.lock"
"$target/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -e "$here"
"$target/bin/ahp-interop" --version
echo "installed: $target/bin/ahp-interop; for this shell and its children:"
echo "  export PATH=\"$target/bin:\$PATH\""
