package loadtest

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// printed is what Print writes on stdout for out with o.
func printed(t *testing.T, out Output, o PrintOptions) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	o.Stdout, o.Stderr = &stdout, &stderr
	require.Equal(t, 0, Print(out, o), stderr.String())
	return stdout.Bytes()
}

func TestGoldenText(t *testing.T) {
	// Ensure every kind's text, on real results of make loadtest and make
	// capacity (testdata/results), is what the commands printed when the
	// fixtures were taken: the text scripts/loadtest.sh and
	// scripts/capacity.sh read.
	gap := fixtureGap(t, "gap-keep-alive.json")
	gap.Reference = &seed2002
	gapNew := fixtureGap(t, "gap-new-connection.json")
	gapNew.Reference = &seed2002
	for _, tc := range []struct {
		golden string
		out    Output
		opt    PrintOptions
	}{
		{"run.txt", gap.Dynamic, PrintOptions{}},
		{"run-open-loop.txt", fixtureHOL(t, "hol.json").UnderLoad, PrintOptions{}},
		{"gap-full.txt", gapNew, PrintOptions{}},
		{"gap-brief.txt", gap, PrintOptions{Brief: true}},
		{"hol.txt", fixtureHOL(t, "hol.json"), PrintOptions{}},
		{"storm.txt", fixtureHOL(t, "storm.json"), PrintOptions{}},
		{"sweep.txt", fixtureSweeps(t, "sweep.json"), PrintOptions{}},
		{"users.txt", fixtureUsers(t, "users.json"), PrintOptions{}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			golden(t, tc.golden, printed(t, tc.out, tc.opt))
		})
	}
}

func TestPrintQuietAndSummary(t *testing.T) {
	// Ensure Quiet prints only the summary, last, and that the summary
	// follows the text and the thresholds otherwise.
	users := fixtureUsers(t, "users.json")
	got := printed(t, users, PrintOptions{Quiet: true, Summary: func(w io.Writer) error {
		_, err := io.WriteString(w, "capacity: many\n")
		return err
	}})
	assert.Equal(t, "capacity: many\n", string(got))
}
