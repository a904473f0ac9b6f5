// Package suites is the registry: every suite of ahp-go, each registered
// by its own package (suites/<name>), and the routing of every command
// through them. Only cmd/ahp-go imports it; no suite imports it or another
// suite (registry_test.go checks the layering).
package suites

import (
	"ahp-interop/adapters/go/contract"
	"ahp-interop/adapters/go/contract/steps"
	"ahp-interop/adapters/go/suites/catalogue"
	"ahp-interop/adapters/go/suites/compaction"
	"ahp-interop/adapters/go/suites/core"
	"ahp-interop/adapters/go/suites/elicitation"
	"ahp-interop/adapters/go/suites/lifecycle"
)

// All are the suites, in the order a lifecycle server refusing another
// suite names them. A new suite is a package under suites/ and its entry
// here. The isolation suite runs the lifecycle suite's.
var All = []contract.Suite{core.Suite, lifecycle.Suite, compaction.Suite, elicitation.Suite, catalogue.Suite}

// Role is command's role (nil: ahp-go has no such command). The lifecycle
// commands route on the config's suite to the suite of that name (one
// ahp-go does not implement: steps.Unimplemented); every other command to
// the suite that serves it.
func Role(command string) contract.Role {
	if unimplemented, bySuite := steps.Unimplemented[command]; bySuite {
		return func(configPath string) (int, error) {
			name, err := contract.SuiteOf(configPath)
			if err != nil {
				return 2, err
			}
			var implemented []string
			for _, s := range All {
				if role := s.Roles[command]; role != nil {
					if s.Name == name {
						return role(configPath)
					}
					implemented = append(implemented, s.Name)
				}
			}
			return unimplemented(configPath, implemented)
		}
	}
	for _, s := range All {
		if role := s.Roles[command]; role != nil {
			return role
		}
	}
	return nil
}
