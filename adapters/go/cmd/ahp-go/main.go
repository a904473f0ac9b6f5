// Command ahp-go is the Go adapter of the AHP interop matrix:
//
//	ahp-go client|server|replay|lifecycle-client|lifecycle-server --config PATH
//
// Exit codes: 0 the role did its job, 2 the config is unusable (one stderr
// line names the file and the field), 1 any other failure. Every command
// is routed through the registry of suites (package suites).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"ahp-interop/adapters/go/contract"
	"ahp-interop/adapters/go/suites"
)

func usage() {
	fmt.Fprintln(os.Stderr, "usage: ahp-go client|server|replay|lifecycle-client|lifecycle-server --config PATH")
}

// gcPercent: a process of the matrix is short-lived with a small live heap
// (the compiled schemas), so the collector runs at a fifth of the default
// frequency unless $GOGC says otherwise.
const gcPercent = 400

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	// A role waits on one exchange at a time, or a few: one P (unless
	// $GOMAXPROCS says otherwise) spares the scheduler's hand-offs between
	// threads and their wake-ups, which cost more CPU than the waits serve.
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	if len(os.Args) < 2 || suites.Role(os.Args[1]) == nil {
		usage()
		os.Exit(2)
	}
	role := os.Args[1]
	flags := flag.NewFlagSet("ahp-go "+role, flag.ContinueOnError)
	config := flags.String("config", "", "absolute path of the JSON config")
	if err := flags.Parse(os.Args[2:]); err != nil || *config == "" || flags.NArg() != 0 {
		usage()
		os.Exit(2)
	}
	if role != contract.CommandServer && role != contract.CommandLifecycleServer {
		// a client's spawned stdio server dies with it, on every exit path
		signals := make(chan os.Signal, 1)
		signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
		go func() {
			<-signals
			contract.KillChildren()
			os.Exit(1)
		}()
	}
	code, err := run(role, *config)
	contract.KillChildren()
	if err != nil {
		fmt.Fprintf(os.Stderr, "ahp-go %s: %s\n", role, strings.Join(strings.Fields(err.Error()), " "))
		if contract.IsConfigError(err) {
			code = 2
		} else if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

func run(role, config string) (code int, err error) {
	defer func() {
		if r := recover(); r != nil {
			code, err = 1, fmt.Errorf("internal error: %v", r)
		}
	}()
	return suites.Role(role)(config)
}
