package loadtest

import (
	"encoding/json"
	"io"
	"strconv"
	"time"
)

// jsonResult is the JSON form of a Result: ab's figures under snake_case
// names, times in milliseconds as floats, the derived rates included.
type jsonResult struct {
	ServerSoftware       string               `json:"server_software"`
	ServerHostname       string               `json:"server_hostname"`
	ServerPort           int                  `json:"server_port"`
	TLSProtocol          string               `json:"tls_protocol,omitempty"`
	DocumentPath         string               `json:"document_path"`
	DocumentLength       int64                `json:"document_length"`
	VariableLength       bool                 `json:"variable_length"`
	ConcurrencyLevel     int                  `json:"concurrency_level"`
	KeepAlive            bool                 `json:"keep_alive"`
	TimeTakenSeconds     float64              `json:"time_taken_s"`
	CompleteRequests     int64                `json:"complete_requests"`
	FailedRequests       int64                `json:"failed_requests"`
	Failures             jsonFailures         `json:"failures"`
	Non2xx               int64                `json:"non_2xx_responses"`
	StatusCodes          map[int]int64        `json:"status_codes"`
	KeepAliveRequests    int64                `json:"keep_alive_requests"`
	TotalTransferred     int64                `json:"total_transferred_bytes"`
	TotalBodySent        int64                `json:"total_body_sent_bytes"`
	HTMLTransferred      int64                `json:"html_transferred_bytes"`
	RequestsPerSecond    float64              `json:"requests_per_second"`
	TimePerRequest       float64              `json:"time_per_request_ms"`
	TimePerRequestAcross float64              `json:"time_per_request_across_ms"`
	TransferRate         float64              `json:"transfer_rate_kib_s"`
	ConnectionTimes      map[string]jsonPhase `json:"connection_times_ms"`
	Percentiles          jsonKeyed            `json:"percentiles_ms"`
	Distribution         []jsonPercentile     `json:"distribution_ms"`
	OpenLoop             *jsonOpenLoop        `json:"open_loop,omitempty"`
	Timeline             []jsonSecond         `json:"timeline,omitempty"`
	Loop                 *jsonLoop            `json:"loop,omitempty"`
}

// jsonOpenLoop is OpenLoop with times in milliseconds.
type jsonOpenLoop struct {
	TargetRate              float64          `json:"target_rate"`
	FellShort               bool             `json:"fell_short"`
	Corrected               jsonPhase        `json:"corrected_ms"`
	Uncorrected             jsonKeyed        `json:"uncorrected_percentiles_ms"`
	UncorrectedDistribution []jsonPercentile `json:"uncorrected_distribution_ms"`
	Late                    int64            `json:"late_requests"`
	MaxLateness             float64          `json:"max_lateness_ms"`
	Unsent                  int64            `json:"unsent_requests"`
	ClientLateness          jsonPhase        `json:"client_lateness_ms"`
	ClientLatenessP99       float64          `json:"client_lateness_p99_ms"`
}

type jsonSecond struct {
	At             float64 `json:"at_s"`
	Requests       int64   `json:"requests"`
	P50            float64 `json:"p50_ms"`
	P99            float64 `json:"p99_ms"`
	Max            float64 `json:"max_ms"`
	UncorrectedP50 float64 `json:"uncorrected_p50_ms,omitempty"`
	UncorrectedP99 float64 `json:"uncorrected_p99_ms,omitempty"`
	UncorrectedMax float64 `json:"uncorrected_max_ms,omitempty"`
}

// jsonLoop is LoopFigures; a figure with "_bound": true is an upper bound
// read from a histogram, not a measurement.
type jsonLoop struct {
	Utilization      float64       `json:"utilization"`
	LagP99           float64       `json:"lag_p99_ms"`
	LagMax           float64       `json:"lag_max_ms"`
	LagMaxBound      bool          `json:"lag_max_bound"`
	LongestTurn      float64       `json:"longest_turn_ms"`
	LongestTurnBound bool          `json:"longest_turn_bound"`
	SlowRequests     int64         `json:"slow_requests"`
	WorkTime         float64       `json:"work_ms"`
	CPU              float64       `json:"cpu_ms"`
	Requests         int64         `json:"requests,omitempty"`
	Wait             *jsonLoopWait `json:"loop_wait,omitempty"`
	Error            string        `json:"error,omitempty"`
}

func toJSONPercentiles(ps []Percentile) []jsonPercentile {
	out := make([]jsonPercentile, 0, len(ps))
	for _, p := range ps {
		out = append(out, jsonPercentile{Percent: p.Percent, Latency: ms(p.Latency)})
	}
	return out
}

type jsonFailures struct {
	Connect    int64 `json:"connect"`
	Receive    int64 `json:"receive"`
	Length     int64 `json:"length"`
	Exceptions int64 `json:"exceptions"`
}

type jsonPhase struct {
	Min    float64 `json:"min"`
	Mean   float64 `json:"mean"`
	SD     float64 `json:"sd"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
}

// jsonKeyed is a percentage table as a JSON object keyed by its rows'
// names, in the table's order: {"p50": 0.41, ..., "p99.9": 4.1, "p100":
// 28.8} (schema version 3; version 2 had a list of {"percent", "ms"}).
type jsonKeyed []Percentile

func (ps jsonKeyed) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, p := range ps {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, "p"+strconv.FormatFloat(p.Percent, 'f', -1, 64))
		b = append(b, ':')
		b = strconv.AppendFloat(b, ms(p.Latency), 'f', -1, 64)
	}
	return append(b, '}'), nil
}

// statusCodes is never nil, so that the JSON has an object.
func statusCodes(m map[int]int64) map[int]int64 {
	if m == nil {
		return map[int]int64{}
	}
	return m
}

type jsonPercentile struct {
	Percent float64 `json:"percent"`
	Latency float64 `json:"ms"`
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func toJSONPhase(p Phase) jsonPhase {
	return jsonPhase{Min: ms(p.Min), Mean: ms(p.Mean), SD: ms(p.SD), Median: ms(p.Median), Max: ms(p.Max)}
}

func toJSON(res *Result) jsonResult {
	j := jsonResult{
		ServerSoftware: res.ServerSoftware, ServerHostname: res.ServerHostname, ServerPort: res.ServerPort,
		TLSProtocol:  res.TLSProtocol,
		DocumentPath: res.DocumentPath, DocumentLength: res.DocumentLength, VariableLength: res.VariableLength,
		ConcurrencyLevel: res.ConcurrencyLevel, KeepAlive: res.KeepAlive,
		TimeTakenSeconds: res.TimeTaken.Seconds(),
		CompleteRequests: res.CompleteRequests, FailedRequests: res.FailedRequests,
		Failures: jsonFailures(res.Failures),
		Non2xx:   res.Non2xx, StatusCodes: statusCodes(res.StatusCodes), KeepAliveRequests: res.KeepAliveRequests,
		TotalTransferred: res.TotalTransferred, TotalBodySent: res.TotalBodySent, HTMLTransferred: res.HTMLTransferred,
		RequestsPerSecond: res.RequestsPerSecond(), TimePerRequest: res.TimePerRequest(),
		TimePerRequestAcross: res.TimePerRequestAcross(), TransferRate: res.TransferRate(),
		ConnectionTimes: map[string]jsonPhase{
			"connect": toJSONPhase(res.Connect), "processing": toJSONPhase(res.Processing),
			"waiting": toJSONPhase(res.Waiting), "total": toJSONPhase(res.Total),
		},
		Percentiles:  jsonKeyed(res.Percentiles),
		Distribution: toJSONPercentiles(res.Distribution),
	}
	if o := res.OpenLoop; o != nil {
		j.OpenLoop = &jsonOpenLoop{
			TargetRate: o.TargetRate, FellShort: res.FellShort(), Corrected: toJSONPhase(o.Corrected),
			Uncorrected: jsonKeyed(o.Uncorrected), UncorrectedDistribution: toJSONPercentiles(o.UncorrectedDistribution),
			Late: o.Late, MaxLateness: ms(o.MaxLateness), Unsent: o.Unsent,
			ClientLateness: toJSONPhase(o.ClientLateness), ClientLatenessP99: ms(o.ClientLatenessP99),
		}
	}
	for _, s := range res.Timeline {
		j.Timeline = append(j.Timeline, jsonSecond{
			At: s.At.Seconds(), Requests: s.Requests, P50: ms(s.P50), P99: ms(s.P99), Max: ms(s.Max),
			UncorrectedP50: ms(s.UncorrectedP50), UncorrectedP99: ms(s.UncorrectedP99), UncorrectedMax: ms(s.UncorrectedMax),
		})
	}
	j.Loop = toJSONLoop(res.Loop)
	return j
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
