package loadtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// SchemaVersion is the version of the JSON form (Envelope) this package
// writes. Version 1 was the bare results object, with no envelope;
// version 2 had percentage tables as lists of {"percent", "ms"} and
// counted only non-2xx statuses (non_2xx_by_status); version 3 keys them
// ("p50", "p99.9") and counts every status (status_codes). ReadEnvelope
// reads all three. A change that renames or removes a field, or changes
// its meaning or unit, takes a new version; adding a field does not.
const SchemaVersion = 3

// Envelope is the JSON form Print writes (-json, -json-out):
// what ran, when, with which program and settings, around its results, so
// that a file read later says what it is. loadtest/README.md documents it
// and loadtest/schema.json is its JSON Schema.
type Envelope struct {
	Kind          string    `json:"kind"`           // "run", "gap", "hol", "sweep" or "users" (see Output)
	SchemaVersion int       `json:"schema_version"` // SchemaVersion
	StartedAt     time.Time `json:"started_at"`     // when the run began, RFC 3339
	Version       string    `json:"version"`        // the program's version, "" when unknown
	Settings      Settings  `json:"settings"`
	// Results is the kind's object (schema.json's $defs).
	Results json.RawMessage `json:"results"`
}

// Settings are the settings of a run as the envelope records them: the
// Config's, the URLs, and those of the scenario. Durations are in seconds.
// Header values that carry credentials (Cookie, Authorization) are
// replaced by "REDACTED".
type Settings struct {
	URLs                   []string `json:"urls"`
	Requests               int      `json:"requests,omitempty"` // -n; 0: not given
	Concurrency            int      `json:"concurrency"`
	Levels                 []int    `json:"concurrency_levels,omitempty"` // a sweep's -c list
	TimeLimit              float64  `json:"time_limit_s,omitempty"`
	Warmup                 float64  `json:"warmup_s,omitempty"`
	Timeout                float64  `json:"timeout_s"`
	KeepAlive              bool     `json:"keep_alive"`
	Method                 string   `json:"method,omitempty"`
	Headers                []string `json:"headers,omitempty"`
	BodyBytes              int      `json:"body_bytes,omitempty"`
	ContentType            string   `json:"content_type,omitempty"`
	VariableLength         bool     `json:"variable_length,omitempty"`
	ContinueOnReceiveError bool     `json:"continue_on_receive_error,omitempty"`
	BindAddrs              int      `json:"bind_addresses,omitempty"` // how many -B addresses
	Rate                   float64  `json:"rate,omitempty"`           // -rate (hol: the load's, see ProbeRate)
	ProbeRate              float64  `json:"probe_rate,omitempty"`     // hol's probe
	MetricsURL             string   `json:"metrics_url,omitempty"`
	InsecureSkipVerify     bool     `json:"insecure_skip_verify,omitempty"`
}

// SettingsOf records cfg and urls as an envelope's Settings; the caller
// adds the scenario's own (Levels, ProbeRate).
func SettingsOf(cfg Config, urls ...string) Settings {
	s := Settings{URLs: urls, Requests: cfg.Requests, Concurrency: cfg.Concurrency,
		TimeLimit: cfg.TimeLimit.Seconds(), Warmup: cfg.Warmup.Seconds(), Timeout: cfg.Timeout.Seconds(),
		KeepAlive: cfg.KeepAlive, Method: cfg.Method, BodyBytes: len(cfg.Body), ContentType: cfg.ContentType,
		VariableLength: cfg.VariableLength, ContinueOnReceiveError: cfg.ContinueOnReceiveError,
		BindAddrs: len(cfg.BindAddrs), Rate: cfg.Rate, MetricsURL: cfg.MetricsURL, InsecureSkipVerify: cfg.InsecureSkipVerify}
	for _, h := range cfg.Headers {
		name, _, _ := strings.Cut(h, ":")
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "cookie", "authorization", "proxy-authorization":
			h = strings.TrimSpace(name) + ": REDACTED"
		}
		s.Headers = append(s.Headers, h)
	}
	return s
}

// writeEnvelope writes out's results in their envelope, as one indented
// JSON object.
func writeEnvelope(w io.Writer, out Output, o *PrintOptions) error {
	var b bytes.Buffer
	if err := out.writeResults(&b); err != nil {
		return err
	}
	e := Envelope{Kind: out.kind(), SchemaVersion: SchemaVersion, StartedAt: o.StartedAt.UTC(), Version: o.Version,
		Settings: o.Settings, Results: bytes.TrimSpace(b.Bytes())}
	return writeJSON(w, e)
}

// ReadEnvelope reads a JSON file's contents as an Envelope: the current
// form as it is, or the bare results object of schema version 1 (no
// envelope) as an Envelope of version 1 with those Results and no Kind.
// A version above SchemaVersion is an error naming it.
func ReadEnvelope(data []byte) (*Envelope, error) {
	var probe struct {
		SchemaVersion *int `json:"schema_version"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		if !isArray(data) {
			return nil, err
		}
	}
	if probe.SchemaVersion == nil {
		return &Envelope{SchemaVersion: 1, Results: json.RawMessage(data)}, nil
	}
	var e Envelope
	if err := json.Unmarshal(data, &e); err != nil {
		return nil, err
	}
	if e.SchemaVersion > SchemaVersion {
		return nil, fmt.Errorf("schema version %d is newer than this program's %d", e.SchemaVersion, SchemaVersion)
	}
	return &e, nil
}

// isArray reports whether data is a JSON array (a version 1 sweep file).
func isArray(data []byte) bool {
	t := bytes.TrimSpace(data)
	return len(t) > 0 && t[0] == '[' && json.Valid(t)
}
