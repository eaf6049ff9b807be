package handlers

import "slices"

// SetLiveShareMax sets how many streams one share of a run of changes
// writes at most, for a test, and returns the function that puts it back.
func SetLiveShareMax(n int) (restore func()) {
	was := liveShareLimit
	liveShareLimit = n
	return func() { liveShareLimit = was }
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
