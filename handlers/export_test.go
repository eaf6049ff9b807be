package handlers

import "slices"

// SetLiveFanBudget sets how many streams one poll writes to, for a test,
// and returns the function that puts it back.
func SetLiveFanBudget(n int) (restore func()) {
	was := liveFanBudget
	liveFanBudget = n
	return func() { liveFanBudget = was }
}

// GamePages returns the names of every page of /game?function=NAME, sorted.
func GamePages() []string {
	names := make([]string, 0, len(gamePages))
	for name := range gamePages {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
