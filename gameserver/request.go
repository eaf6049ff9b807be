package gameserver

import (
	"net/http"
	"strconv"
)

// limits bounds what parse accepts.
type limits struct {
	maxHeaderBytes int   // request line + header fields, bytes
	maxBodyBytes   int64 // decoded body; <0 means no body accepted
}

// protoError is a request the server refuses: the loop answers status with
// msg as a text/plain body, with "Connection: close", and closes the
// connection after writing it. status is one of 400, 413, 417, 431, 501, 505.
type protoError struct {
	status int
	msg    string
}

func (e *protoError) Error() string {
	return "gameserver: " + strconv.Itoa(e.status) + " " + http.StatusText(e.status) + ": " + e.msg
}

// parser frames one request at a time. The zero value is ready; call reset
// after each complete request.
type parser struct {
	expect100 bool
}

// parse examines buf, the connection's unconsumed input starting at the
// first byte of the current request. (Interface stub: the full parser
// follows.)
func (p *parser) parse(buf []byte, lim limits) (*http.Request, int, error) {
	return nil, 0, &protoError{http.StatusNotImplemented, "parser not written yet"}
}

// expectContinue reports whether the loop should send 100 Continue.
func (p *parser) expectContinue() bool { return p.expect100 }

// reset prepares p for the next request on the connection.
func (p *parser) reset() { *p = parser{} }
