//go:build linux

package gameserver

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// pinThread restricts the calling OS thread (the loop's, which it never
// leaves) to cpus with sched_setaffinity, and returns a function that
// gives it back the CPUs it had, for when the loop ends: the thread then
// returns to the Go runtime's pool, where any goroutine may run on it.
func pinThread(cpus []int) (restore func(), err error) {
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return nil, fmt.Errorf("gameserver: sched_getaffinity: %w", err)
	}
	for _, cpu := range cpus {
		if cpu < 0 || cpu >= len(set)*64 {
			return nil, fmt.Errorf("gameserver: LoopCPUs: no CPU %d", cpu)
		}
		set.Set(cpu)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("gameserver: pin the loop to CPUs %v (sched_setaffinity): %w", cpus, err)
	}
	return func() { unix.SchedSetaffinity(0, &old) }, nil
}
