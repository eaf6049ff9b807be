package loadtest

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

// goldenText renders write's text and compares it with
// testdata/report/name (go test -update rewrites it).
func goldenText(t *testing.T, name string, write func(w io.Writer) error) {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, write(&b))
	golden(t, name, b.Bytes())
}

func TestGoldenText(t *testing.T) {
	// Ensure every kind's text, on real results of make loadtest and make
	// capacity (testdata/results), is what the commands printed when the
	// fixtures were taken: the text scripts/loadtest.sh and
	// scripts/capacity.sh read.
	gap := fixtureGap(t, "gap-keep-alive.json")
	gapNew := fixtureGap(t, "gap-new-connection.json")
	hol := fixtureHOL(t, "hol.json")
	storm := fixtureHOL(t, "storm.json")
	sweeps := fixtureSweeps(t, "sweep.json")
	t.Run("run", func(t *testing.T) {
		goldenText(t, "run.txt", func(w io.Writer) error { return WriteReport(w, gap.Dynamic) })
	})
	t.Run("run-open-loop", func(t *testing.T) {
		goldenText(t, "run-open-loop.txt", func(w io.Writer) error { return WriteReport(w, hol.UnderLoad) })
	})
	t.Run("gap", func(t *testing.T) {
		goldenText(t, "gap-full.txt", func(w io.Writer) error {
			return errors.Join(WriteReport(w, gapNew.Static), WriteReport(w, gapNew.Dynamic), WriteComparison(w, gapNew, seed2002))
		})
	})
	t.Run("gap-brief", func(t *testing.T) {
		goldenText(t, "gap-brief.txt", func(w io.Writer) error {
			err := WriteComparison(w, gap, seed2002)
			io.WriteString(w, "Server loop (from its metrics)\n")
			return errors.Join(err, WriteLoopTable(w, []NamedResult{{"static " + gap.Static.DocumentPath, gap.Static},
				{"dynamic " + gap.Dynamic.DocumentPath, gap.Dynamic}}))
		})
	})
	t.Run("hol", func(t *testing.T) {
		goldenText(t, "hol.txt", func(w io.Writer) error { return WriteHOL(w, hol) })
	})
	t.Run("storm", func(t *testing.T) {
		goldenText(t, "storm.txt", func(w io.Writer) error { return WriteHOL(w, storm) })
	})
	t.Run("sweep", func(t *testing.T) {
		goldenText(t, "sweep.txt", func(w io.Writer) error {
			var err error
			for _, s := range sweeps {
				err = errors.Join(err, WriteSweep(w, s))
			}
			return err
		})
	})
	t.Run("users", func(t *testing.T) {
		users := fixtureUsers(t, "users.json")
		goldenText(t, "users.txt", func(w io.Writer) error { return WriteUsers(w, users) })
	})
}
