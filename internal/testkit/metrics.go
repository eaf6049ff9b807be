package testkit

import (
	"io"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
)

// ParseMetrics parses a scrape in the Prometheus text format into its
// metric families by name; it fails the test, showing the body, if the
// body does not parse.
func ParseMetrics(t testing.TB, body io.Reader) map[string]*dto.MetricFamily {
	t.Helper()
	var text strings.Builder
	_, err := io.Copy(&text, body)
	require.NoError(t, err, "reading the scrape")
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text.String()))
	require.NoError(t, err, "the body parses as Prometheus text:\n%s", text.String())
	return families
}
