# Sourced by scripts/test and scripts/serve: cd to the repo root and make sure .venv is current.
# (Re)installs the project with its dev extra (which includes the server extra) only when
# pyproject.toml or the Python changed, printing progress lines while pip works.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

PYTHON="${PYTHON:-python3}"
VENV="$ROOT/.venv"
STAMP="$VENV/.fiftyk-install-stamp"
LOG="$VENV/.fiftyk-install.log"

if [[ ! -x "$VENV/bin/python" ]]; then
    echo "scripts: creating .venv with $("$PYTHON" --version 2>&1)" >&2
    "$PYTHON" -m venv "$VENV"
fi

wanted="$( { cat pyproject.toml; "$VENV/bin/python" --version; } | sha256sum | cut -d' ' -f1)"
if [[ "$(cat "$STAMP" 2>/dev/null)" != "$wanted" ]]; then
    echo "scripts: installing fiftyk-referee[dev] (server and dev tools) into .venv;" \
        "the first install takes a minute or two" >&2
    # pip's own output goes to $LOG; scripts/_pip_progress prints a progress line now and then.
    if ! (set -o pipefail
          "$VENV/bin/python" -m pip install --disable-pip-version-check --progress-bar off \
              -e '.[dev]' 2>&1 | "$ROOT/scripts/_pip_progress" "$LOG"); then
        cat "$LOG" >&2
        echo "scripts: pip install failed (log above, also in $LOG)" >&2
        exit 1
    fi
    echo "$wanted" >"$STAMP"
fi
