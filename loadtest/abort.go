package loadtest

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// AbortError ends a run early, where ab would exit: a receive error without
// -r (ContinueOnReceiveError), a receive timeout, or more than ten failed
// connects. Run returns it with the figures measured until then.
type AbortError struct {
	// Op is ab's name for the failing call: "apr_socket_recv",
	// "apr_pollset_poll" or "apr_socket_connect()".
	Op string
	// Err is the underlying error.
	Err error
	// Completed is the number of requests completed before the abort.
	Completed int64
}

func (e *AbortError) Error() string { return "loadtest: aborted: " + e.Message() }

func (e *AbortError) Unwrap() error { return e.Err }

// Message is the line ab prints on stderr for this abort, with APR's
// wording and number, e.g. "apr_socket_recv: Connection reset by peer
// (104)".
func (e *AbortError) Message() string {
	text, code := aprError(e.Err)
	return fmt.Sprintf("%s: %s (%d)", e.Op, text, code)
}

// APR status codes for the errors that have no errno.
const (
	aprEOF      = 70014 // APR_EOF, "End of file found"
	aprTimeUp   = 70007 // APR_TIMEUP, "The timeout specified has expired"
	aprEGeneral = 20014 // APR_EGENERAL, "Internal error"
)

// aprError renders err as APR's strerror would, with its status code.
func aprError(err error) (string, int) {
	var errno syscall.Errno
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return "End of file found", aprEOF
	case errors.Is(err, os.ErrDeadlineExceeded):
		return "The timeout specified has expired", aprTimeUp
	case errors.As(err, &errno):
		s := errno.Error()
		if s != "" && 'a' <= s[0] && s[0] <= 'z' {
			s = string(s[0]-'a'+'A') + s[1:] // strerror capitalises
		}
		return s, int(errno)
	}
	return err.Error(), aprEGeneral
}
