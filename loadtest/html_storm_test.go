package loadtest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHTMLStormTitledAsItself(t *testing.T) {
	// Ensure a login storm's page (a head-of-line run) is titled as the
	// storm, not as head-of-line blocking, and labels the refusals it
	// expects as expected; without -expect they are named, unlabelled.
	storm := fixtureHOL(t, "storm.json")
	p := parsePage(t, storm, PrintOptions{Title: "Login storm on loop-hash", Scenario: "Login storm", Expected: []int{403, 429}})
	assert.Contains(t, p.headings, "Login storm: / behind /login")
	assert.NotContains(t, p.text, "Head-of-line blocking")
	assert.Regexp(t, `403: \d+ \(expected\)`, p.text)

	p = parsePage(t, storm, PrintOptions{Title: "t"})
	assert.Contains(t, p.headings, "Head-of-line blocking: / behind /login")
	assert.Regexp(t, `403: \d+`, p.text)
	assert.NotContains(t, p.text, "(expected)")
}

func TestHTMLTimelineSaysLatencyOnce(t *testing.T) {
	// Ensure a closed-loop run's timeline describes "the latency", not
	// "the latency latency".
	p := parsePage(t, fixtureHOL(t, "storm.json"), PrintOptions{Title: "t"})
	assert.NotContains(t, p.text, "latency latency")
}
