//go:build !linux

package gameserver

import "errors"

// pinThread would restrict the loop's thread to cpus; only Linux can
// (affinity_linux.go).
func pinThread(cpus []int) (restore func(), err error) {
	return nil, errors.New("gameserver: LoopCPUs: pinning the loop to CPUs needs Linux (sched_setaffinity)")
}
