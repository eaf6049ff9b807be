package handlers

// StatsMetricFields returns the gameserver.Stats fields the metrics
// export, by Go selector path ("Work.Queued"), and those it deliberately
// does not, with why.
func StatsMetricFields() (fields []string, skipped map[string]string) {
	for _, r := range loopRows {
		fields = append(fields, r.field)
	}
	return fields, notExported
}
