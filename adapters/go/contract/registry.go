package contract

// The commands of docs/CONTRACT.md (adapter.json's client, server, replay,
// lifecycleClient and lifecycleServer), as ahp-go's first argument. The
// lifecycle pair runs every suite past core: the config's suite says which
// ("One command pair for every suite past core").
const (
	CommandClient          = "client"
	CommandServer          = "server"
	CommandReplay          = "replay"
	CommandLifecycleClient = "lifecycle-client"
	CommandLifecycleServer = "lifecycle-server"
)

// Role runs one command with its config file: the exit code (0 the role
// did its job, 2 the config is unusable, 1 any other failure) and the
// error stderr names.
type Role func(configPath string) (int, error)

// Suite is one suite's registration: its name (for a suite the lifecycle
// commands run, the config's suite) and the role of each command it
// serves. Each suite package declares its own; the registry (package
// suites, imported by cmd/ahp-go alone) lists them, and every command is
// routed through it.
type Suite struct {
	Name  string
	Roles map[string]Role
}
