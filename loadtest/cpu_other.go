//go:build !unix

package loadtest

import "time"

// processCPU is unknown without getrusage.
func processCPU() (time.Duration, bool) { return 0, false }
