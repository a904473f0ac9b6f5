//go:build tools

// Package tools pins actionlint, the GitHub Actions workflow linter that
// `nox -s lint` builds from source (go.sum locks it) and runs.
package tools

import _ "github.com/rhysd/actionlint/cmd/actionlint"
