package gameserver

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestReqCtx(t *testing.T) {
	// Ensure a request context's Done, Err and Value behave as a
	// context's, whether Done is asked for before or after the cancel, and
	// that contexts derived from it follow its cancellation through
	// AfterFunc (and a derived context canceled first leaves nothing
	// behind).
	type key struct{}
	parent := context.WithValue(context.Background(), key{}, "v")
	c := &reqCtx{parent: parent}
	assert.Equal(t, "v", c.Value(key{}))
	assert.NoError(t, c.Err())
	done := c.Done()
	early, cancelEarly := context.WithCancel(c)
	cancelEarly()
	assert.Empty(t, c.afters, "a derived context canceled first is forgotten")
	derived, cancel := context.WithTimeout(c, time.Hour)
	defer cancel()
	ran := make(chan struct{})
	stop := context.AfterFunc(c, func() { close(ran) })
	stopped := context.AfterFunc(c, func() { t.Error("a stopped AfterFunc ran") })
	assert.True(t, stopped())
	assert.Len(t, c.afters, 2)

	c.cancel()
	c.cancel()
	select {
	case <-done:
	default:
		t.Fatal("Done not closed by cancel")
	}
	assert.ErrorIs(t, c.Err(), context.Canceled)
	<-c.Done() // asked for after the cancel: closed too
	select {
	case <-derived.Done():
	case <-time.After(waitLimit):
		t.Fatal("a derived context was not canceled with its parent")
	}
	assert.ErrorIs(t, derived.Err(), context.Canceled)
	assert.ErrorIs(t, early.Err(), context.Canceled)
	waitFor(t, ran)
	assert.False(t, stop(), "stop after the function ran")
	late := make(chan struct{})
	context.AfterFunc(c, func() { close(late) })
	waitFor(t, late)
}
