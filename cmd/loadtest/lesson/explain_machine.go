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
	var probes, asked, got, late, share []float64
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
		if r.Loop != nil && r.Loop.Wait != nil && r.Loop.Wait.CPUWaitShare != nil {
			share = append(share, *r.Loop.Wait.CPUWaitShare)
		}
	}
	d := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	s := MachineSigns{ProbeP99: d(SpreadOf(probes).Median), ProbeAsked: int64(SpreadOf(asked).Median), ProbeGot: int64(SpreadOf(got).Median),
		ClientLateP99: d(SpreadOf(late).Median), ClientLateKnown: len(late) > 0,
		CPUWaitShare: SpreadOf(share).Median, CPUWaitKnown: len(share) > 0}
	if len(files) > 1 {
		e.say("%s (medians over %d probes)", Judge(s).Line(About()), len(files))
	} else {
		e.say("%s", Judge(s).Line(About()))
	}
	return nil
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
