//go:build !linux || gameserver_portable

package gameserver

// threadClock is the scheduler's account of the loop's thread, which
// only the Linux epoll back end reads (threadclock_linux.go): here it is
// never available, and the loop's wait attribution is unknown (see
// WaitStats.Known).
type threadClock struct{}

func (t *threadClock) open() bool                 { return false }
func (t *threadClock) read() (threadSample, bool) { return threadSample{}, false }
func (t *threadClock) close()                     {}
