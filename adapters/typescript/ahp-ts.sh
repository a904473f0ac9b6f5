# The adapter's commands (adapter.json): `sh ahp-ts.sh COMMAND --config PATH`,
# run from this directory; the same as `node dist/cli.js COMMAND ...`.
#
# Node 20 builds its whole TLS root store at start-up when NODE_EXTRA_CA_CERTS
# is set, some 70 ms of CPU in every process, though the adapter's TLS clients
# bring their own CA. The variable is handed over under another name instead:
# dist/sdk/defaultTrust.js puts it back first thing, and builds the same store
# for a TLS client without a CA of its own when one asks.
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ]; then
  AHP_TS_DEFERRED_NODE_EXTRA_CA_CERTS=$NODE_EXTRA_CA_CERTS
  export AHP_TS_DEFERRED_NODE_EXTRA_CA_CERTS
  unset NODE_EXTRA_CA_CERTS
fi
exec node dist/cli.js "$@"
