package testkit_test

import (
	"testing"
	"time"

	"github.com/statesecrets/server/internal/testkit"
	"github.com/stretchr/testify/assert"
)

func TestQuantile(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	assert.Equal(t, time.Duration(6), testkit.Quantile(ds, 0.5))
	assert.Equal(t, time.Duration(10), testkit.Quantile(ds, 0.99))
	assert.Equal(t, time.Duration(10), testkit.Quantile(ds, 1))
	assert.Equal(t, time.Duration(1), testkit.Quantile(ds, 0))
}

func TestABField(t *testing.T) {
	report := "Server Software:        gameserver\nComplete requests:      5000\nFailed requests:        0\n"
	assert.Equal(t, "5000", testkit.ABField(report, "Complete requests"))
	assert.Equal(t, "gameserver", testkit.ABField(report, "Server Software"))
	assert.Equal(t, "", testkit.ABField(report, "Non-2xx responses"))
}
