#!/bin/sh
# Builds the adapter once into build/ahp-go (go build is incremental).
# ./build.sh --test also runs go vet and the unit tests.
set -eu
cd "$(dirname "$0")"
export GOFLAGS="${GOFLAGS:--mod=readonly}"
go build -trimpath -o build/ahp-go ./cmd/ahp-go
if [ "${1:-}" = "--test" ]; then
	go vet ./...
	go test -count=1 ./...
fi
