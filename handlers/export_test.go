package handlers

// SetLiveFanBudget sets how many streams one poll writes to, for a test,
// and returns the function that puts it back.
func SetLiveFanBudget(n int) (restore func()) {
	was := liveFanBudget
	liveFanBudget = n
	return func() { liveFanBudget = was }
}
