// Package scripts holds the tests of the shell scripts the Makefile runs
// (the scripts themselves are bash).
package scripts

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// pinParse runs pin.sh's pin_parse CPU SPEC CORES in bash and returns its
// status, what it set (server|client|note) and its stderr.
func pinParse(t *testing.T, spec, cores string) (int, string, string) {
	t.Helper()
	cmd := exec.Command("bash", "-c", `. ./pin.sh && pin_parse CPU "$1" "$2"; rc=$?; echo "$pin_server|$pin_client|$pin_note"; exit $rc`,
		"pin_parse", spec, cores)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, strings.TrimSpace(string(out)), stderr.String()
}

func TestPinParse(t *testing.T) {
	// Ensure the CPU setting of make loadtest and make capacity pins the
	// servers to one core and the load generator to the others by
	// default on 2 or more cores, not at all on 1 or with off, and as
	// given otherwise.
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Skip("no taskset here: pin_parse pins nothing")
	}
	for _, tc := range []struct{ spec, cores, server, client, note string }{
		{"", "2", "0", "1", "pinned (CPU=off turns it off): the servers on CPU 0, the load generator on CPU 1 (taskset -c)"},
		{"", "4", "0", "1,2,3", "the load generator on CPU 1,2,3"},
		{"", "1", "", "", "not pinned: 1 core"},
		{"off", "4", "", "", "not pinned (CPU=off): the servers and the load generator share the 4 cores"},
		{"2", "4", "2", "0,1,3", "pinned (CPU=2; CPU=off turns it off)"},
		{"0-1", "4", "0-1", "2,3", "the servers on CPU 0-1"},
		{"1:0", "2", "1", "0", "the servers on CPU 1, the load generator on CPU 0"},
		{"0:0-1", "2", "0", "0-1", "the load generator on CPU 0-1"},
	} {
		code, out, stderr := pinParse(t, tc.spec, tc.cores)
		if !assert.Equal(t, 0, code, "%q on %s cores: %s", tc.spec, tc.cores, stderr) {
			continue
		}
		server, rest, _ := strings.Cut(out, "|")
		client, note, _ := strings.Cut(rest, "|")
		assert.Equal(t, tc.server, server, "%q on %s cores", tc.spec, tc.cores)
		assert.Equal(t, tc.client, client, "%q on %s cores", tc.spec, tc.cores)
		assert.Contains(t, note, tc.note, "%q on %s cores", tc.spec, tc.cores)
	}
}

func TestPinParseErrors(t *testing.T) {
	// Ensure a bad CPU setting is refused with status 2 and a message
	// naming the setting and what is wrong.
	for _, tc := range []struct{ spec, want string }{
		{"x", "CPU must be off, a CPU list such as 0 or 0-1 (the servers'), or SERVERS:LOADGENERATOR such as 0:1, not 'x'"},
		{"0:", "CPU must be off, a CPU list"},
		{"2", "CPU: CPU 2 is not a CPU or a rising range of this machine's (0 to 1)"},
		{"1-0", "CPU: CPU 1-0 is not a CPU or a rising range"},
		{"0:5", "CPU: CPU 5 is not"},
		{"0-1", "CPU=0-1 leaves no core for the load generator (this machine has 2): give S:C or off"},
	} {
		code, _, stderr := pinParse(t, tc.spec, "2")
		assert.Equal(t, 2, code, tc.spec)
		assert.Contains(t, stderr, tc.want, tc.spec)
	}
}
