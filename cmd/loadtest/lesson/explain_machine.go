package lesson

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/statesecrets/server/loadtest"
)

// ExplainMachine is Explain's kind for the machine line: FILE... are
// light probes' runs (a plain open-loop run of a static page, or a
// head-of-line run, whose probe alone is one) with the server's metrics.
const ExplainMachine = "machine"

// judgeMachine writes the machine line (Judgement.Line with About) judged
// from the median of each sign over files.
func (e *explainer) judgeMachine(files []string) error {
	var probes, asked, got, late, wait, run []float64
	for _, f := range files {
		r, err := probeOf(f)
		if err != nil {
			return err
		}
		e.check(f, r, nil)
		probes, asked, got = append(probes, pct(r, 99)), append(asked, float64(r.asked())), append(got, float64(r.CompleteRequests))
		if r.OpenLoop != nil {
			late = append(late, r.OpenLoop.ClientLatenessP99)
		}
		if r.Loop != nil && r.Loop.Wait != nil {
			wait, run = append(wait, r.Loop.Wait.LoopCPUWait), append(run, 1000*r.TimeTakenSeconds)
		}
	}
	d := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	s := MachineSigns{ProbeP99: d(SpreadOf(probes).Median), ProbeAsked: int64(SpreadOf(asked).Median), ProbeGot: int64(SpreadOf(got).Median),
		ClientLateP99: d(SpreadOf(late).Median), ClientLateKnown: len(late) > 0,
		CPUWait: d(medianShare(wait, run) * SpreadOf(run).Median), Run: d(SpreadOf(run).Median), CPUWaitKnown: len(wait) > 0}
	if len(files) > 1 {
		e.say("%s (medians over %d probes)", Judge(s).Line(About()), len(files))
	} else {
		e.say("%s", Judge(s).Line(About()))
	}
	return nil
}

// medianShare is the median over the probes of each one's wait over its
// run, 0 without probes.
func medianShare(wait, run []float64) float64 {
	shares := make([]float64, 0, len(wait))
	for i := range wait {
		if run[i] > 0 {
			shares = append(shares, wait[i]/run[i])
		}
	}
	if len(shares) == 0 {
		return 0
	}
	return SpreadOf(shares).Median
}

// probeOf reads path's light probe: a plain run's result, or a
// head-of-line run's probe alone.
func probeOf(path string) (*result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("loadtest: explain: %w", err)
	}
	env, err := loadtest.ReadEnvelope(b)
	if err != nil {
		return nil, fmt.Errorf("loadtest: explain: %s: %w", path, err)
	}
	r := new(result)
	switch env.Kind {
	case kindHOL:
		var h holJSON
		err, r = json.Unmarshal(env.Results, &h), &h.Alone
	case "run":
		err = json.Unmarshal(env.Results, r)
	default:
		return nil, fmt.Errorf("%w: %s holds a %q run, not a probe (run or hol)", ErrUsage, path, env.Kind)
	}
	if err != nil {
		return nil, fmt.Errorf("loadtest: explain: %s: %w", path, err)
	}
	return r, nil
}
