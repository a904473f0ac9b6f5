#!/usr/bin/env bash
# The steps of the GitHub Action (action.yml), one per argument, as plain commands:
# the Action runs them in order, and so can any shell (tests/test_action.py does).
#
#   steps.sh install | build | matrix | summary | verdict
#
# Inputs come as INPUT_* variables (action.yml maps each input), places as GitHub
# names them: GITHUB_ACTION_PATH (this checkout), GITHUB_WORKSPACE (the caller's
# SDK checkout), RUNNER_TEMP, GITHUB_PATH, GITHUB_STEP_SUMMARY, GITHUB_OUTPUT.
set -euo pipefail
here="${GITHUB_ACTION_PATH:?}"
work="${RUNNER_TEMP:?}/ahp-interop"
report="$work/report/report.json"
mkdir -p "$work"

adapter_arg() {
	local folder="$GITHUB_WORKSPACE/${INPUT_ADAPTER_DIR:-.}"
	if [ -n "${INPUT_NAME:-}" ]; then
		printf -- '--adapter-dir=%s=%s' "$INPUT_NAME" "$folder"
	else
		printf -- '--adapter-dir=%s' "$folder"
	fi
}

case "${1:?which step}" in
install)
	"$here/install.sh" "$work/env"
	echo "$work/env/bin" >>"${GITHUB_PATH:-/dev/null}"
	;;
build)
	if [ -n "${INPUT_PACKED_BUILD:-}" ]; then
		"$work/env/bin/ahp-interop" build --unpack "$INPUT_PACKED_BUILD"
	else
		"$work/env/bin/ahp-interop" build
	fi
	;;
matrix)
	# never fails the step: the verdict step decides, after the summary and the upload
	read -r -a extra <<<"${INPUT_ARGS:-}"
	set +e
	"$work/env/bin/ahp-interop" matrix --suite ${INPUT_SUITES:-all} "$(adapter_arg)" \
		--output "$report" "${extra[@]}"
	echo "$?" >"$work/matrix-exit"
	set -e
	echo "report=$report" >>"${GITHUB_OUTPUT:-/dev/null}"
	;;
summary)
	if [ ! -f "$report" ]; then
		echo "## AHP Interop Matrix: no report (see the matrix step's log)" >>"${GITHUB_STEP_SUMMARY:-/dev/stdout}"
		exit 0
	fi
	baseline=()
	if [ -n "${INPUT_BASELINE:-}" ] && [ -f "$INPUT_BASELINE" ]; then
		baseline=(--baseline "$INPUT_BASELINE")
	fi
	"$work/env/bin/ahp-interop" report summary "$report" "${baseline[@]}" >>"${GITHUB_STEP_SUMMARY:-/dev/stdout}"
	"$work/env/bin/ahp-interop" report html "$report" -o "$work/report/report.html" "${baseline[@]}"
	;;
verdict)
	# with a baseline: fail on a regression against it; without: fail on any failure
	if [ -n "${INPUT_BASELINE:-}" ]; then
		exec "$work/env/bin/ahp-interop" diff "$INPUT_BASELINE" "$report" --baseline-optional
	fi
	exit "$(cat "$work/matrix-exit" 2>/dev/null || echo 2)"
	;;
*)
	echo "steps.sh: unknown step $1 (install, build, matrix, summary, verdict)" >&2
	exit 2
	;;
esac
