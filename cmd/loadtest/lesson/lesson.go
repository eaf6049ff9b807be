// Package lesson is the story make loadtest and make capacity tell about
// State Secrets' server, kept out of the loadtest library so that the
// library serves any server: the seed's 2002 figures the gap is set
// beside (StateSecrets2002), the sentences loadtest explain writes on what
// a run's JSON shows (Explain: the gap, head-of-line blocking, the login
// storm and its expected statuses, the sweep, the engines' folders), and
// the capacity line of cmd/players (Capacity).
//
// It reads runs back from the JSON loadtest writes (-json-out: schema
// versions 1 to 3), as any other tool would, by the documented fields.
package lesson

import (
	"errors"

	"github.com/statesecrets/server/loadtest"
)

// The explain kinds and the arguments each takes (see Explain). A RUNS
// argument is one variant of a run: its repeats' files, comma-separated,
// after an optional "LABEL=" ("no cache=hol-1.json,hol-2.json,hol-3.json").
const (
	ExplainGap     = "gap"     // NEW_CONNECTION_RUNS KEEP_ALIVE_RUNS: gap runs
	ExplainHOL     = "hol"     // RUNS [RUNS]: hol runs; two variants are a before/after pair
	ExplainSweep   = "sweep"   // SWEEP.json: a sweep run
	ExplainStorm   = "storm"   // RUNS [RUNS]: hol runs whose load is a login storm; two are a pair
	ExplainEngines = "engines" // LABEL=DIR...: each DIR holds EngineFiles
	// RATE SECONDS PROBE_RATE [LABEL=]PAGE.json [PROBE.json]: the head-of-line
	// load fitted to the loop's CPU on a busy machine (FitHOL)
	ExplainHOLScale = "hol-scale"
)

// EngineFiles are the runs Explain's engines kind reads from each folder,
// as -json-out writes them: the gap with keep-alive, each repeat as
// "gap-keep-alive-N.json" (or one "gap-keep-alive.json"), and, when there,
// the gap with a new connection each and the head-of-line scenario the
// same way.
var EngineFiles = [3]string{"gap-keep-alive", "gap-new-connection", "hol"}

// StormStatuses are the answers a login storm's load may get without
// failing: 403 Forbidden (a wrong password, checked with its hash) and 429
// Too Many Requests (the per-address limit, nothing checked).
var StormStatuses = map[int]bool{403: true, 429: true}

// StormLoopBound is the loop time per login (the loop's busy time over
// the logins) from which Explain's storm kind says the hashing seems to
// run on the loop, when the server does not say how long its worker pool
// worked: a bcrypt hash at the default cost takes tens of ms.
const StormLoopBound = 10.0 // ms

// ErrFailed is returned by Explain when a run in its files had failed
// requests or responses it should not have (non-2xx, outside a storm's
// StormStatuses).
var ErrFailed = errors.New("loadtest: requests failed")

// ErrUsage is returned by Explain for an unknown kind or the wrong number of
// arguments.
var ErrUsage = errors.New("loadtest: explain: bad arguments")

// StateSecrets2002 is the seed write-up's run of the original single-threaded
// Perl server: ab -n 1000 -c 12 on the same machine, static "/" (2752 bytes)
// and dynamic "/game?function=hq&tid=..." (3019 bytes). Mean is the Total
// row's mean from its Connection Times table.
var StateSecrets2002 = loadtest.Reference{
	Label:            "State Secrets 2002 (ab -n 1000 -c 12)",
	Static:           loadtest.ReferenceFigures{RequestsPerSecond: 64.61, Mean: 184, P50: 197, P99: 245, Max: 330},
	Dynamic:          loadtest.ReferenceFigures{RequestsPerSecond: 28.45, Mean: 420, P50: 427, P99: 468, Max: 499},
	Concurrency:      12,
	Requests:         1000,
	StaticDocLength:  2752,
	DynamicDocLength: 3019,
}
