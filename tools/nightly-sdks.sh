#!/usr/bin/env bash
# The nightly's real-SDK job, as plain commands (tests/test_action.py runs them with a
# local git repository standing in for an SDK):
#
#   nightly-sdks.sh prepare   clone each SDK of sdk-revisions.json at its pin, build it
#   nightly-sdks.sh run       every suite under compat: the SDKs beside our adapters
#
# Environment: PINS (default sdk-revisions.json), SDKS_DIR (default sdks), OUTPUT
# (default reports/sdks/report.json), MATRIX_ARGS (more options for the run).
# `ahp-interop` must be on PATH (./install.sh). A pin that fails to build still runs:
# its combinations fail naming its command, so the record reports it.
set -euo pipefail
pins="${PINS:-sdk-revisions.json}"
dir="${SDKS_DIR:-sdks}"
output="${OUTPUT:-reports/sdks/report.json}"
case "${1:?prepare or run}" in
prepare)
	ahp-interop sdks prepare --pins "$pins" --into "$dir"
	;;
run)
	mapfile -t found <"$dir/adapter-args"
	read -r -a extra <<<"${MATRIX_ARGS:-}"
	ahp-interop matrix --profile compat "${found[@]}" --output "$output" "${extra[@]}"
	;;
*)
	echo "nightly-sdks.sh: prepare or run" >&2
	exit 2
	;;
esac
