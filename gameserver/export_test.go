package gameserver

// StreamHeld is the memory s's queued output holds (outq.held), for the
// external tests; call it on the loop. 0 once the stream has ended.
func StreamHeld(s *EventStream) (held, queued int) {
	if s.c == nil {
		return 0, 0
	}
	return s.c.out.held(), s.c.out.n
}

// TurnBudget is turnBudget, for the external tests.
const TurnBudget = turnBudget
