package lesson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/statesecrets/server/loadtest"
)

// The kinds of run the lesson reads, as the envelope names them.
const (
	kindGap   = "gap"
	kindHOL   = "hol"
	kindSweep = "sweep"
)

// result is the part of loadtest's JSON result object the lesson reads
// (loadtest/schema.json's "result"), in schema version 2's form or 3's.
type result struct {
	DocumentPath      string           `json:"document_path"`
	ConcurrencyLevel  int              `json:"concurrency_level"`
	TimeTakenSeconds  float64          `json:"time_taken_s"`
	CompleteRequests  int64            `json:"complete_requests"`
	FailedRequests    int64            `json:"failed_requests"`
	Non2xx            int64            `json:"non_2xx_responses"`
	Non2xxByStatus    map[int]int64    `json:"non_2xx_by_status"` // version 2
	StatusCodes       map[int]int64    `json:"status_codes"`      // version 3: every status
	RequestsPerSecond float64          `json:"requests_per_second"`
	ConnectionTimes   map[string]phase `json:"connection_times_ms"`
	Percentiles       percentiles      `json:"percentiles_ms"`
	OpenLoop          *struct {
		Corrected         phase   `json:"corrected_ms"`
		Unsent            int64   `json:"unsent_requests"`
		ClientLatenessP99 float64 `json:"client_lateness_p99_ms"`
	} `json:"open_loop"`
	Loop *loop `json:"loop"`
}

type phase struct {
	Mean float64 `json:"mean"`
	Max  float64 `json:"max"`
}

type loop struct {
	Utilization      float64 `json:"utilization"`
	LagP99           float64 `json:"lag_p99_ms"`
	LongestTurn      float64 `json:"longest_turn_ms"`
	LongestTurnBound bool    `json:"longest_turn_bound"`
	WorkTime         float64 `json:"work_ms"`
	CPU              float64 `json:"cpu_ms"`
	Wait             *struct {
		LoopCPU      float64     `json:"loop_cpu_ms"`
		LoopCPUWait  float64     `json:"loop_cpu_wait_ms"`
		CPUWaitShare *float64    `json:"cpu_wait_share"`
		Routes       []routeWait `json:"routes"`
	} `json:"loop_wait"`
	Error string `json:"error"`
}

// routeWait is one route's attributed waits (loadtest/schema.json's
// "loop_wait"), in ms.
type routeWait struct {
	Route      string      `json:"route"`
	Requests   int64       `json:"requests"`
	HeadOfLine waitSummary `json:"head_of_line_ms"`
	CPUWait    waitSummary `json:"cpu_wait_ms"`
	Handler    waitSummary `json:"handler_ms"`
}

type waitSummary struct {
	Mean     float64 `json:"mean"`
	P50      float64 `json:"p50"`
	P99      float64 `json:"p99"`
	MaxBound float64 `json:"max_bound"`
}

// route is r's attributed waits of route, nil without them.
func (r *result) route(route string) *routeWait {
	if r.Loop == nil || r.Loop.Wait == nil {
		return nil
	}
	for i := range r.Loop.Wait.Routes {
		if rw := &r.Loop.Wait.Routes[i]; rw.Route == route {
			return rw
		}
	}
	return nil
}

// asked is how many requests an open-loop run's schedule had due: those
// answered, those that failed and those never sent.
func (r *result) asked() int64 {
	n := r.CompleteRequests + r.FailedRequests
	if r.OpenLoop != nil {
		n += r.OpenLoop.Unsent
	}
	return n
}

// non2xx is the run's non-2xx responses by status.
func (r *result) non2xx() map[int]int64 {
	if r.StatusCodes == nil {
		return r.Non2xxByStatus
	}
	m := map[int]int64{}
	for code, n := range r.StatusCodes {
		if code < 200 || code > 299 {
			m[code] = n
		}
	}
	return m
}

// percentile is one row of a percentage table, in ms.
type percentile struct {
	Percent float64 `json:"percent"`
	MS      float64 `json:"ms"`
}

// percentiles reads a percentage table in either form: schema version
// 2's list of {"percent", "ms"}, or version 3's object keyed "p50",
// "p99.9", "p100".
type percentiles []percentile

func (ps *percentiles) UnmarshalJSON(b []byte) error {
	if b = bytes.TrimSpace(b); len(b) > 0 && b[0] == '[' {
		return json.Unmarshal(b, (*[]percentile)(ps))
	}
	var keyed map[string]float64
	if err := json.Unmarshal(b, &keyed); err != nil {
		return err
	}
	*ps = (*ps)[:0]
	for k, v := range keyed {
		p, err := strconv.ParseFloat(strings.TrimPrefix(k, "p"), 64)
		if err != nil {
			return fmt.Errorf("percentile %q: %w", k, err)
		}
		*ps = append(*ps, percentile{Percent: p, MS: v})
	}
	return nil
}

// readJSON reads path's results into v: an Envelope of kind (any kind for
// ""), or the bare results of schema version 1.
func readJSON(path, kind string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("loadtest: explain: %w", err)
	}
	env, err := loadtest.ReadEnvelope(b)
	if err != nil {
		return fmt.Errorf("loadtest: explain: %s: %w", path, err)
	}
	if kind != "" && env.Kind != "" && env.Kind != kind {
		return fmt.Errorf("loadtest: explain: %s holds a %s run, not %s", path, env.Kind, kind)
	}
	if err := json.Unmarshal(env.Results, v); err != nil {
		return fmt.Errorf("loadtest: explain: %s: %w", path, err)
	}
	return nil
}

// gapJSON and holJSON are a gap's and a head-of-line run's results.
type gapJSON struct {
	Static  result  `json:"static"`
	Dynamic result  `json:"dynamic"`
	Gap     float64 `json:"gap"`
}

type holJSON struct {
	ProbeRate float64 `json:"probe_rate"`
	Alone     result  `json:"probe_alone"`
	UnderLoad result  `json:"probe_under_load"`
	Load      result  `json:"load"`
}

// sweepJSON is one URL's sweep.
type sweepJSON struct {
	URL   string `json:"url"`
	Knee  int    `json:"knee_concurrency"`
	Steps []struct {
		Concurrency int    `json:"concurrency"`
		LittleHolds bool   `json:"little_holds"`
		Result      result `json:"result"`
	} `json:"steps"`
}

// shorten keeps a long path (a session id in the query) readable, as
// loadtest's tables do.
func shorten(path string) string {
	if len(path) > 32 {
		return path[:29] + "..."
	}
	return path
}
