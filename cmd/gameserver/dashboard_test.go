package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// The monitoring files deploy/ ships.
var (
	dashboardFile = filepath.Join("..", "..", "deploy", "grafana", "statesecrets-dashboard.json")
	alertsFile    = filepath.Join("..", "..", "deploy", "prometheus", "statesecrets-alerts.yml")
)

func TestDashboardQueries(t *testing.T) {
	// Ensure every PromQL expression the Grafana dashboard and the alert
	// rules use parses, and names only metrics and labels that a live
	// server exports (or that Prometheus adds: up, job, instance): a
	// renamed metric or a typo breaks this test, not a panel in
	// production. Under -engine nethttp the loop's own families are absent
	// (there is no loop: a panel shows "no data", not a false zero), so
	// there the queries are checked against what either engine exports.
	// The expressions are parsed with Prometheus's own parser
	// (promql/parser), so a selector is told from a function, a label in
	// by (...) from a metric, exactly as Prometheus reads them.
	queries := dashboardQueries(t)
	queries = append(queries, alertQueries(t)...)
	require.Greater(t, len(queries), 30, "the dashboard's panels and the alerts")
	loop, nethttp := liveScrape(t, engineLoop), liveScrape(t, engineNetHTTP)
	for name := range nethttp {
		assert.False(t, strings.HasPrefix(name, "gameserver_loop_"), "nethttp exports %s: it has no loop", name)
	}
	either := maps.Clone(loop)
	maps.Copy(either, nethttp)
	for engine, exported := range map[string]map[string]family{engineLoop: loop, engineNetHTTP: either} {
		t.Run(engine, func(t *testing.T) {
			for _, q := range queries {
				for _, problem := range checkQuery(q.expr, exported) {
					t.Errorf("%s: %s\n\t%s", q.where, problem, q.expr)
				}
			}
		})
	}
}

// query is one PromQL expression and where it was found.
type query struct{ where, expr string }

// dashboardQueries returns every target's expr of the dashboard and every
// label_values(...) variable query, with Grafana's variables replaced by
// values Prometheus accepts.
func dashboardQueries(t *testing.T) []query {
	t.Helper()
	raw, err := os.ReadFile(dashboardFile)
	require.NoError(t, err)
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name  string          `json:"name"`
				Type  string          `json:"type"`
				Query json.RawMessage `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	require.NoError(t, json.Unmarshal(raw, &dash))
	var out []query
	for _, p := range dash.Panels {
		for _, target := range p.Targets {
			require.NotEmpty(t, target.Expr, "panel %q has a target without expr", p.Title)
			out = append(out, query{"panel " + p.Title, grafanaVars(t, target.Expr)})
		}
	}
	for _, v := range dash.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct{ Query string }
		require.NoError(t, json.Unmarshal(v.Query, &q), "variable %s", v.Name)
		m := labelValues.FindStringSubmatch(q.Query)
		require.NotNil(t, m, "variable %s: want label_values(selector, label), got %q", v.Name, q.Query)
		// label_values(S, L) lists L's values on S's series: as a query,
		// count by (L) (S) reads the same names.
		out = append(out, query{"variable " + v.Name, grafanaVars(t, "count by ("+m[2]+") ("+m[1]+")")})
	}
	return out
}

var (
	labelValues = regexp.MustCompile(`^label_values\((.+),\s*(\w+)\)$`)
	grafanaVar  = regexp.MustCompile(`\$\{?(\w+)\}?`)
)

// grafanaVars replaces the dashboard's variables in expr by values of
// the right kind; a variable the dashboard does not define fails.
func grafanaVars(t *testing.T, expr string) string {
	t.Helper()
	values := map[string]string{"job": "statesecrets", "instance": ".*", "__rate_interval": "1m"}
	return grafanaVar.ReplaceAllStringFunc(expr, func(v string) string {
		name := grafanaVar.FindStringSubmatch(v)[1]
		value, ok := values[name]
		assert.True(t, ok, "unknown Grafana variable %s in %q", v, expr)
		return value
	})
}

// alertQueries returns the expr of every alerting rule.
func alertQueries(t *testing.T) []query {
	t.Helper()
	raw, err := os.ReadFile(alertsFile)
	require.NoError(t, err)
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &rules))
	var out []query
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			out = append(out, query{"alert " + r.Alert, r.Expr})
		}
	}
	return out
}

// liveScrape runs the program on engine with a metrics address, sends it
// a few requests, and returns what its metrics endpoint exports: each
// family's label names, by family name.
func liveScrape(t *testing.T, engine string) map[string]family {
	t.Helper()
	db := filepath.Join(t.TempDir(), "ss.db")
	tid := mustNewPlayer(t, db, "byers")
	p := startProgram(t, "-db", db, "-engine", engine, "-metrics-addr", "127.0.0.1:0")
	get(t, p.base+"/")
	get(t, p.base+"/game?function=hq&tid="+tid)
	m := metricsAddr.FindStringSubmatch(p.stderr.String())
	require.NotNil(t, m, "no metrics line in the log:\n%s", p.stderr)
	var families map[string]*dto.MetricFamily
	require.Eventually(t, func() bool {
		families = scrapeFamilies(t, "http://"+m[1]+"/metrics")
		_, attributed := families["gameserver_request_head_of_line_seconds"] // published 20 ms after
		return sample(families, "gameserver_requests_total") >= 2 && (attributed || engine == engineNetHTTP)
	}, 5*time.Second, 10*time.Millisecond, "the requests are counted")
	out := map[string]family{}
	for name, f := range families {
		labels := map[string]bool{}
		for _, s := range f.Metric {
			for _, l := range s.Label {
				labels[l.GetName()] = true
			}
		}
		out[name] = family{f.GetType(), labels}
	}
	return out
}

// family is what a query may name of an exported metric family.
type family struct {
	kind   dto.MetricType
	labels map[string]bool
}

// targetLabels are the labels Prometheus adds to every scraped series,
// and prometheusSeries the series it makes per target itself.
var (
	targetLabels     = []string{"job", "instance"}
	prometheusSeries = map[string]family{"up": {dto.MetricType_GAUGE, map[string]bool{}}}
)

// lookup returns the family a series name belongs to and the labels its
// series carry: a histogram's _bucket (with le), _sum and _count series
// belong to it.
func lookup(exported map[string]family, name string) (family, bool) {
	if f, ok := exported[name]; ok {
		return f, true
	}
	if f, ok := prometheusSeries[name]; ok {
		return f, true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		base, ok := strings.CutSuffix(name, suffix)
		if f, found := exported[base]; ok && found && f.kind == dto.MetricType_HISTOGRAM {
			if suffix == "_bucket" {
				f.labels = map[string]bool{"le": true}
				for l := range exported[base].labels {
					f.labels[l] = true
				}
			}
			return f, true
		}
	}
	return family{}, false
}

// checkQuery returns what is wrong with expr against exported: a parse
// error, a metric not exported, a label matched or grouped by that none
// of the series beneath carries.
func checkQuery(expr string, exported map[string]family) []string {
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return []string{"does not parse: " + err.Error()}
	}
	var problems []string
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		switch n := n.(type) {
		case *parser.VectorSelector:
			problems = append(problems, checkSelector(n, exported)...)
		case *parser.AggregateExpr:
			have := labelsBeneath(n.Expr, exported)
			for _, l := range n.Grouping {
				if !have[l] {
					problems = append(problems, fmt.Sprintf("%s by/without (%s): no series beneath has label %s", n.Op, l, l))
				}
			}
		}
		return nil
	})
	return problems
}

func checkSelector(vs *parser.VectorSelector, exported map[string]family) []string {
	if vs.Name == "" {
		return []string{fmt.Sprintf("selector %s names no metric", vs)}
	}
	f, ok := lookup(exported, vs.Name)
	if !ok {
		return []string{fmt.Sprintf("metric %s is not exported", vs.Name)}
	}
	var problems []string
	for _, m := range vs.LabelMatchers {
		if m.Name == model.MetricNameLabel || slices.Contains(targetLabels, m.Name) {
			continue
		}
		if !f.labels[m.Name] {
			problems = append(problems, fmt.Sprintf("metric %s has no label %s", vs.Name, m.Name))
		}
	}
	return problems
}

// labelsBeneath returns the label names of every series the selectors
// under n select, the target's labels included.
func labelsBeneath(n parser.Node, exported map[string]family) map[string]bool {
	have := map[string]bool{}
	for _, l := range targetLabels {
		have[l] = true
	}
	parser.Inspect(n, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			if f, ok := lookup(exported, vs.Name); ok {
				for l := range f.labels {
					have[l] = true
				}
			}
		}
		return nil
	})
	return have
}

func TestCheckQuery(t *testing.T) {
	// Ensure the dashboard check catches what it is for: each mistake
	// below is reported, and the right form of it passes.
	exported := map[string]family{
		"gameserver_loop_busy_seconds_total":    {dto.MetricType_COUNTER, map[string]bool{}},
		"gameserver_responses_total":            {dto.MetricType_COUNTER, map[string]bool{"code": true}},
		"statesecrets_request_duration_seconds": {dto.MetricType_HISTOGRAM, map[string]bool{"route": true}},
	}
	for expr, want := range map[string]string{
		`rate(gameserver_loop_busy_seconds_total{job="statesecrets"}[1m])`:                                      "",
		`sum by (code) (rate(gameserver_responses_total[1m]))`:                                                  "",
		`histogram_quantile(0.99, sum by (route, le) (rate(statesecrets_request_duration_seconds_bucket[1m])))`: "",
		`up{job="statesecrets"} == 0`:                                                                           "",
		`rate(gameserver_loop_busy_second_total[1m])`:                                                           "not exported",
		`rate(gameserver_responses_total{status="2xx"}[1m])`:                                                    "no label status",
		`sum by (status) (rate(gameserver_responses_total[1m]))`:                                                "no series beneath has label status",
		`sum by (le) (rate(gameserver_responses_total[1m]))`:                                                    "no series beneath has label le",
		`rate(statesecrets_request_duration_seconds_total[1m])`:                                                 "not exported",
		`rate(gameserver_loop_busy_seconds_total[1m]`:                                                           "does not parse",
		`{__name__=~"gameserver_.*"}`:                                                                           "names no metric",
	} {
		problems := strings.Join(checkQuery(expr, exported), "; ")
		if want == "" {
			assert.Empty(t, problems, expr)
		} else {
			assert.Contains(t, problems, want, expr)
		}
	}
}

func TestDashboardLayout(t *testing.T) {
	// Ensure the dashboard imports cleanly: panel ids unique, every panel
	// inside Grafana's 24 columns without overlapping another, and every
	// query panel on the ${datasource} variable (no datasource uid of the
	// machine it was drawn on).
	raw, err := os.ReadFile(dashboardFile)
	require.NoError(t, err)
	var dash struct {
		UID    string `json:"uid"`
		Panels []struct {
			ID         int    `json:"id"`
			Type       string `json:"type"`
			Title      string `json:"title"`
			Datasource *struct {
				UID string `json:"uid"`
			} `json:"datasource"`
			GridPos struct{ X, Y, W, H int } `json:"gridPos"`
		} `json:"panels"`
	}
	require.NoError(t, json.Unmarshal(raw, &dash))
	assert.NotEmpty(t, dash.UID)
	ids := map[int]bool{}
	cells := map[[2]int]string{}
	for _, p := range dash.Panels {
		assert.False(t, ids[p.ID], "panel id %d twice", p.ID)
		ids[p.ID] = true
		g := p.GridPos
		assert.True(t, g.X >= 0 && g.W > 0 && g.X+g.W <= 24 && g.H > 0, "%s: gridPos %+v", p.Title, g)
		for x := g.X; x < g.X+g.W; x++ {
			for y := g.Y; y < g.Y+g.H; y++ {
				if other, ok := cells[[2]int{x, y}]; ok {
					t.Errorf("%s overlaps %s at (%d, %d)", p.Title, other, x, y)
				}
				cells[[2]int{x, y}] = p.Title
			}
		}
		if p.Type != "row" {
			require.NotNil(t, p.Datasource, p.Title)
			assert.Equal(t, "${datasource}", p.Datasource.UID, p.Title)
		}
	}
}
