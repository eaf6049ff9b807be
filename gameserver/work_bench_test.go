package gameserver_test

import (
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/statesecrets/server/gameserver"
	"github.com/statesecrets/server/internal/testkit"
)

// reportLatency adds the probe's p50, p99 and max, and the server's loop
// lag p99 and max, as benchmark metrics in milliseconds.
func reportLatency(b *testing.B, lat []time.Duration, s *gameserver.Server) {
	if len(lat) == 0 {
		b.Fatal("no probe requests")
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(testkit.Quantile(lat, 0.50)), "probe-p50-ms")
	b.ReportMetric(ms(testkit.Quantile(lat, 0.99)), "probe-p99-ms")
	b.ReportMetric(ms(lat[len(lat)-1]), "probe-max-ms")
	lag := s.Stats().Lag
	b.ReportMetric(ms(lag.P99), "lag-p99-ms")
	b.ReportMetric(ms(lag.Max), "lag-max-ms")
}

// BenchmarkGoProbe is the scenario of TestGoKeepsLoopResponsive, for its
// figures: 50 clients each asking for 100 ms of CPU work through the pool
// (default Workers), and a static probe on another connection meanwhile.
// Run it with -benchtime=1x.
func BenchmarkGoProbe(b *testing.B) {
	for range b.N {
		lat, s := probeWhileWorking(b)
		reportLatency(b, lat, s)
	}
}

// BenchmarkLoopLagBusyWorkers keeps every worker busy with CPU-bound work
// (20 ms each, twice as many clients as workers, for 3 s) and measures the
// loop: the static probe's latency and the lag timer's, with one worker
// and with GOMAXPROCS workers (then the loop's thread competes with them
// for a P whenever it returns from epoll_wait). Run it with -benchtime=1x.
func BenchmarkLoopLagBusyWorkers(b *testing.B) {
	for _, workers := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run("workers="+strconv.Itoa(workers), func(b *testing.B) {
			for range b.N {
				addr, s := startServer(b, gameserver.Config{Handler: workMux(20 * time.Millisecond), Workers: workers})
				stop := make(chan struct{})
				var wg sync.WaitGroup
				for i := range 2 * workers {
					cl := dial(b, addr)
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							select {
							case <-stop:
								return
							default:
							}
							if resp, _ := cl.get("/slow?id=" + strconv.Itoa(i)); resp.StatusCode != http.StatusOK {
								b.Errorf("slow: %d", resp.StatusCode)
								return
							}
						}
					}()
				}
				lats := make(chan []time.Duration, 1)
				go func() { lats <- probe(b, addr, stop) }()
				time.Sleep(3 * time.Second)
				close(stop)
				wg.Wait()
				reportLatency(b, <-lats, s)
			}
		})
	}
}
