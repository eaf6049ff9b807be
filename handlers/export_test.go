package handlers

// SetLiveShareMax sets how many streams one share of a run of changes
// writes at most, for a test, and returns the function that puts it back.
func SetLiveShareMax(n int) (restore func()) {
	was := liveShareLimit
	liveShareLimit = n
	return func() { liveShareLimit = was }
}
