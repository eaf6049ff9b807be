package gameserver

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
)

// response is the state of one response in progress. It buffers the body
// until the handler returns or calls Flush, so a response that finishes
// without Flush carries an exact Content-Length. Responses are pooled on the
// loop, so a Handler never sees one directly: it gets a writer, cut off
// from the response when the response ends.
type response struct {
	l      *loop
	c      *conn
	req    *http.Request // nil for a response to a refused request
	header http.Header
	keys   []string // scratch for sorting header keys
	h      *writer  // the Handler's handle to this response, nil until handle

	hdr   []byte   // status line and the handler's header fields, captured by WriteHeader
	body  []byte   // body bytes not yet handed to the connection (a pooled buffer) ...
	spill [][]byte // ... after these full pooled buffers: a large body is never copied or regrown

	status   int
	written  int64 // body bytes the handler wrote
	declared int64 // Content-Length the handler set, -1 if none
	sent     int64 // body bytes handed to the connection
	frame    frame // how the body is delimited, chosen when the header is sent

	wroteHeader bool // the final status is chosen and the header captured
	headerSent  bool // the header is in the connection's output
	head        bool // request method HEAD: no body is sent
	proto11     bool // the client speaks HTTP/1.1 (chunked allowed)
	closeAfter  bool // the connection closes after this response
	hasType     bool // the handler set Content-Type (even to nothing)
	hasEncoding bool // the handler set a Content-Encoding: no sniffing
	hasDate     bool
	hasServer   bool
	teChunked   bool // the handler asked for Transfer-Encoding: chunked
	aborted     bool // the handler panicked after the header was sent

	ctx      *reqCtx     // the request's context, canceled when the response ends
	reqBody  *bodyReader // the request's body, copied if the response is deferred
	deferred *Deferred   // the handle, once the response is deferred
	deferDL  int64       // loop clock: when a deferred response is answered 503
}

// frame is how a response body is delimited (RFC 9112 section 6).
type frame uint8

const (
	frameNone    frame = iota // no body: HEAD, 1xx, 204, 304
	frameLength               // Content-Length
	frameChunked              // Transfer-Encoding: chunked (HTTP/1.1 clients)
	frameClose                // close-delimited (HTTP/1.0 clients, length unknown)
)

// errStaleWriter is what a writer's Write returns once its response has
// ended.
var errStaleWriter = errors.New("gameserver: ResponseWriter used after the handler returned")

// writer is the http.ResponseWriter (and http.Flusher) a Handler gets: a
// handle, fresh for each request, to the pooled response. When the response
// ends, detach cuts the handle off, so a writer kept past ServeHTTP can
// never reach the response of a later request, on this connection or
// another, that reuses the pooled state. A cut-off writer's Write returns
// errStaleWriter, its Header a map of its own that nothing reads, and its
// WriteHeader and Flush do nothing.
type writer struct{ w *response }

// writerSlab is how many writers are allocated at once: a writer is never
// reused (a stale one must stay cut off), but a slab makes them cost one
// allocation per writerSlab requests; one a handler keeps holds its slab,
// 512 bytes, alive.
const writerSlab = 64

// handle returns a new writer for w, the one the Handler gets.
func (w *response) handle() http.ResponseWriter {
	l := w.l
	if len(l.writers) == 0 {
		l.writers = make([]writer, writerSlab)
	}
	h := &l.writers[0]
	l.writers = l.writers[1:]
	h.w, w.h = w, h
	return h
}

// detach cuts off the Handler's writer, if any, from w.
func (w *response) detach() {
	if w.h != nil {
		w.h.w = nil
		w.h = nil
	}
}

// Header returns the header map that WriteHeader sends. Changing it after
// WriteHeader (or the first Write) has no effect, as with net/http.
func (h *writer) Header() http.Header {
	if h.w == nil {
		return make(http.Header)
	}
	return h.w.header
}

// WriteHeader sends an informational (1xx) response at once, or fixes the
// final status code and captures the header fields. Later calls are
// ignored. code must be a three-digit status code. 101 Switching Protocols
// is refused (the writer is no http.Hijacker): it is logged and the
// response becomes a 500 Internal Server Error that closes the connection.
// A 205 Reset Content goes out with "Content-Length: 0" and no content
// (RFC 9110 section 15.3.6).
func (h *writer) WriteHeader(code int) {
	if h.w != nil {
		h.w.WriteHeader(code)
	}
}

// Write buffers p as body bytes. It returns http.ErrBodyNotAllowed for a
// status that has no body (1xx, 204, 205, 304) and http.ErrContentLength
// past a Content-Length the handler declared. For HEAD it counts p and
// drops it.
func (h *writer) Write(p []byte) (int, error) {
	if h.w == nil {
		return 0, errStaleWriter
	}
	return writeBody(h.w, p)
}

// WriteString is Write for a string, without a conversion copy.
func (h *writer) WriteString(s string) (int, error) {
	if h.w == nil {
		return 0, errStaleWriter
	}
	return writeBody(h.w, s)
}

// Flush sends the header and the body written so far to the client: they
// are queued at once and written by the loop at the end of its turn. If
// the handler declared no Content-Length, the rest of the body is sent
// chunked to an HTTP/1.1 client and close-delimited to an HTTP/1.0 one.
func (h *writer) Flush() {
	if h.w != nil {
		h.w.Flush()
	}
}

// sniffLen is how much of a body http.DetectContentType looks at.
const sniffLen = 512

// WriteHeader is writer.WriteHeader.
func (w *response) WriteHeader(code int) {
	if code < 100 || code > 999 {
		panic("gameserver: invalid WriteHeader code " + strconv.Itoa(code))
	}
	if w.wroteHeader {
		return
	}
	switch {
	case code == http.StatusSwitchingProtocols:
		w.refuseUpgrade()
	case code < 200:
		w.informational(code)
	default:
		w.commit(code)
	}
}

// refuseUpgrade answers a handler's WriteHeader(101). The server cannot
// switch protocols (the writer is no http.Hijacker), and a 101 it cannot
// follow through would leave the client speaking a protocol nobody
// answers (RFC 9110 section 15.2.2). So the mistake is logged, once per
// response, and the response becomes a complete 500 that ends the
// connection: the handler's header fields are dropped, and what it writes
// afterwards fails with http.ErrContentLength.
func (w *response) refuseUpgrade() {
	w.l.cfg.Logger.Error("gameserver: handler sent 101 Switching Protocols, which needs http.Hijacker; sent 500 instead",
		"remote", w.c.remote)
	const msg = "Internal Server Error"
	clear(w.header)
	w.header["Content-Length"] = []string{strconv.Itoa(len(msg))}
	w.closeAfter = true
	w.refuse(http.StatusInternalServerError, msg)
}

// informational queues a 1xx response now, with the current header fields;
// RFC 9110 section 15.2 forbids sending one to an HTTP/1.0 client.
func (w *response) informational(code int) {
	if !w.proto11 || (code == http.StatusContinue && w.c.continued) {
		return
	}
	w.hdr = appendStatusLine(w.hdr[:0], code)
	w.hdr = w.appendHandlerHeader(w.hdr, code)
	w.hdr = append(w.hdr, "\r\n"...)
	w.c.out.write(w.hdr, w.l)
	w.hdr = w.hdr[:0]
	w.l.mark(w.c)
}

// commit fixes the status and serializes the handler's header fields.
func (w *response) commit(code int) {
	w.status = code
	w.wroteHeader = true
	w.hdr = appendStatusLine(w.hdr[:0], code)
	w.hdr = w.appendHandlerHeader(w.hdr, code)
}

// appendHandlerHeader appends the handler's header fields, sorted by name as
// net/http does, leaving out the framing fields the server writes itself
// and those RFC 9110 forbids for code; it records what the handler set.
func (w *response) appendHandlerHeader(b []byte, code int) []byte {
	w.keys = w.keys[:0]
	for k := range w.header {
		w.keys = append(w.keys, k)
	}
	if len(w.keys) > 1 {
		slices.Sort(w.keys)
	}
	for _, k := range w.keys {
		vs := w.header[k]
		if !w.noteField(k, vs, code) || !validFieldName(k) {
			continue
		}
		for _, v := range vs {
			b = append(b, k...)
			b = append(b, ": "...)
			b = appendFieldValue(b, v)
			b = append(b, "\r\n"...)
		}
	}
	return b
}

// noteField records what a handler header field means for framing and
// reports whether it is written as the handler set it.
func (w *response) noteField(k string, vs []string, code int) bool {
	switch k {
	case "Content-Length":
		if len(vs) > 0 && bodyAllowed(code) {
			if n, err := strconv.ParseInt(strings.TrimSpace(vs[0]), 10, 64); err == nil && n >= 0 {
				w.declared = n
			}
		}
		return false
	case "Transfer-Encoding":
		w.teChunked = len(vs) > 0 && strings.Contains(strings.ToLower(vs[0]), "chunked")
		return false
	case "Connection":
		for _, v := range vs {
			if hasToken(v, "close") {
				w.closeAfter = true
			}
		}
		return false
	case "Content-Type":
		w.hasType = true
		return code != http.StatusNotModified
	case "Content-Encoding":
		w.hasEncoding = len(vs) > 0 && vs[0] != ""
	case "Date":
		w.hasDate = true
	case "Server":
		w.hasServer = true
	}
	return true
}

func writeBody[T string | []byte](w *response, p T) (int, error) {
	if err := w.admit(len(p)); err != nil {
		return 0, err
	}
	if w.head {
		// Keep only what sniffing needs.
		if room := sniffLen - len(w.body); room > 0 && !w.headerSent {
			w.body = append(w.body, p[:min(room, len(p))]...)
		}
		return len(p), nil
	}
	n := len(p)
	for len(p) > 0 {
		if w.body == nil {
			w.body = w.l.getBuf()
		} else if len(w.body) == bufSize {
			w.spill = append(w.spill, w.body)
			w.body = w.l.getBuf()
		}
		k := min(len(p), bufSize-len(w.body))
		w.body = append(w.body, p[:k]...)
		p = p[k:]
	}
	return n, nil
}

// admit accounts for n body bytes about to be written.
func (w *response) admit(n int) error {
	if !w.wroteHeader {
		w.commit(http.StatusOK)
	}
	if !bodyAllowed(w.status) {
		return http.ErrBodyNotAllowed
	}
	if w.declared >= 0 && w.written+int64(n) > w.declared {
		return http.ErrContentLength
	}
	w.written += int64(n)
	return nil
}

// Flush is writer.Flush.
func (w *response) Flush() {
	if !w.wroteHeader {
		w.commit(http.StatusOK)
	}
	if w.c.broken {
		return
	}
	w.emit(false)
	w.l.mark(w.c)
}

// emit hands the header (once) and the buffered body to the connection;
// final marks the end of the response.
func (w *response) emit(final bool) {
	if !w.headerSent {
		w.sendHeader(final)
	}
	w.emitBody(final)
}

// sendHeader chooses the framing and writes the complete header section.
func (w *response) sendHeader(final bool) {
	w.frame, w.declared = w.framing(final)
	if w.frame == frameClose || (w.req != nil && w.req.Close) {
		w.closeAfter = true
	}
	if !w.proto11 && w.declared < 0 {
		// An HTTP/1.0 client keeps a connection only for a response with a
		// Content-Length (ab waits for the close otherwise), as net/http
		// decides it: 204, 304 and length-less HEAD answers end it.
		w.closeAfter = true
	}
	b := w.hdr
	if ct := w.sniff(); ct != "" {
		b = append(append(append(b, "Content-Type: "...), ct...), "\r\n"...)
	}
	switch {
	case w.declared >= 0:
		b = append(strconv.AppendInt(append(b, "Content-Length: "...), w.declared, 10), "\r\n"...)
	case w.frame == frameChunked:
		b = append(b, "Transfer-Encoding: chunked\r\n"...)
	}
	switch {
	case w.closeAfter:
		b = append(b, connClose...)
	case !w.proto11:
		b = append(b, connKeepAlive...)
	}
	if !w.hasDate {
		b = append(b, w.l.dateField...)
	}
	if !w.hasServer {
		b = append(b, serverField...)
	}
	b = append(b, "\r\n"...)
	w.c.out.write(b, w.l)
	w.hdr = b[:0]
	w.headerSent = true
	if w.head {
		w.dropBody()
	}
}

// framing chooses how the body is delimited and the Content-Length to
// declare (-1: none). final means the handler has returned, so a body it
// wrote without Flush has a known length.
func (w *response) framing(final bool) (frame, int64) {
	switch {
	case w.status == http.StatusResetContent:
		// No content (RFC 9110 section 15.3.6), but unlike 204 the
		// client frames a 205 by its fields (RFC 9112 section 6.3):
		// Content-Length: 0, the first way RFC 7231 section 6.3.6 listed.
		return frameLength, 0
	case !bodyAllowed(w.status):
		return frameNone, -1
	case w.declared >= 0 && !w.teChunked:
		return frameLength, w.declared
	case final && !w.teChunked && (!w.head || w.written > 0):
		return frameLength, w.written
	case w.head:
		return frameNone, -1
	case w.proto11:
		return frameChunked, -1
	default:
		return frameClose, -1
	}
}

// sniff returns the Content-Type to add, as net/http does: only when the
// handler set none and no Content-Encoding, from the first body bytes.
func (w *response) sniff() string {
	head := w.body
	if len(w.spill) > 0 {
		head = w.spill[0]
	}
	return w.sniffHead(head)
}

// sniffHead is sniff for a body starting with head.
func (w *response) sniffHead(head []byte) string {
	if w.hasType || w.hasEncoding || len(head) == 0 || !bodyAllowed(w.status) {
		return ""
	}
	return http.DetectContentType(head[:min(len(head), sniffLen)])
}

// emitBody hands the buffered body to the connection in the chosen framing.
func (w *response) emitBody(final bool) {
	if n := w.buffered(); n > 0 && w.frame != frameNone {
		w.sent += int64(n)
		if w.frame == frameChunked {
			w.c.out.write(w.l.chunkHeader(n), w.l)
		}
		w.handOver()
		if w.frame == frameChunked {
			w.c.out.write(crlf, w.l)
		}
	}
	w.dropBody()
	if !final {
		return
	}
	if w.frame == frameChunked {
		w.c.out.write(lastChunk, w.l)
	}
	if w.frame == frameLength && !w.head && w.sent != w.declared {
		w.closeAfter = true // the client cannot find the end: RFC 9112 section 6.3
	}
}

// buffered returns the number of body bytes held.
func (w *response) buffered() int { return len(w.spill)*bufSize + len(w.body) }

// handOver moves the body to the connection's output: a small one is
// copied behind the header (one write), larger buffers are handed over.
func (w *response) handOver() {
	out := &w.c.out
	if len(w.spill) == 0 && len(w.body) <= copyMax {
		out.write(w.body, w.l)
		return
	}
	for _, b := range w.spill {
		out.push(b)
	}
	clear(w.spill)
	w.spill = w.spill[:0]
	out.push(w.body)
	w.body = nil
}

// dropBody empties the body buffer, keeping one pooled buffer for reuse.
func (w *response) dropBody() {
	for _, b := range w.spill {
		w.l.putBuf(b)
	}
	clear(w.spill)
	w.spill = w.spill[:0]
	w.body = w.body[:0]
}

// handlerPanic turns a handler's panic into a 500 response, or, once the
// header is out, into a connection closed after what was already sent; it
// logs the panic with its stack unless it is http.ErrAbortHandler.
func (l *loop) handlerPanic(w *response, v any) {
	l.logPanic(w.c, v)
	if w.headerSent {
		w.aborted, w.closeAfter = true, true
		return
	}
	w.reset()
	w.closeAfter = true
	w.refuse(http.StatusInternalServerError, "Internal Server Error")
}

// reset drops what the handler set and wrote, before the header is sent,
// so the response can be replaced by an error.
func (w *response) reset() {
	clear(w.header)
	w.dropBody()
	*w = response{l: w.l, c: w.c, req: w.req, header: w.header, keys: w.keys, h: w.h, hdr: w.hdr[:0], body: w.body, spill: w.spill,
		declared: -1, proto11: w.proto11, head: w.head, closeAfter: w.closeAfter, ctx: w.ctx, reqBody: w.reqBody}
}

// logPanic logs a handler's panic with its stack, unless it is
// http.ErrAbortHandler.
func (l *loop) logPanic(c *conn, v any) {
	if v != http.ErrAbortHandler {
		l.cfg.Logger.Error("gameserver: panic serving "+c.remote, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	}
}

// refuse makes w a complete text/plain error response.
func (w *response) refuse(status int, msg string) {
	w.header["Content-Type"] = []string{"text/plain; charset=utf-8"}
	w.WriteHeader(status)
	writeBody(w, msg)
}

var (
	crlf      = []byte("\r\n")
	lastChunk = []byte("0\r\n\r\n")
)

// chunkHeader returns the chunk-size line for n bytes, in a loop scratch.
func (l *loop) chunkHeader(n int) []byte {
	l.scratch = append(strconv.AppendInt(l.scratch[:0], int64(n), 16), "\r\n"...)
	return l.scratch
}

// bodyAllowed reports whether a response with status code may carry a body
// (RFC 9110 sections 15.2, 15.3.5, 15.3.6, 15.4.5). net/http lets a 205
// carry one; RFC 9110 says a server MUST NOT.
func bodyAllowed(code int) bool {
	return code >= 200 && code != http.StatusNoContent && code != http.StatusResetContent &&
		code != http.StatusNotModified
}

// statusLines holds "HTTP/1.1 code text\r\n" for every code net/http names.
// The server answers HTTP/1.1 to HTTP/1.0 clients too, as RFC 9110 section
// 6.2 asks (its highest conformant version with the client's major version).
var statusLines = func() (t [600]string) {
	for code := range t {
		if text := http.StatusText(code); text != "" {
			t[code] = "HTTP/1.1 " + strconv.Itoa(code) + " " + text + "\r\n"
		}
	}
	return t
}()

func appendStatusLine(b []byte, code int) []byte {
	if code < len(statusLines) && statusLines[code] != "" {
		return append(b, statusLines[code]...)
	}
	b = append(b, "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(code), 10)
	return append(b, " status code "+strconv.Itoa(code)+"\r\n"...)
}

// validFieldName reports whether k can be sent as a field name: a token
// (RFC 9110 section 5.1). Others are dropped, as net/http does.
func validFieldName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; c <= ' ' || c >= 0x7f || c == ':' {
			return false
		}
	}
	return true
}

// appendFieldValue appends v with every control character but HTAB
// replaced by a space, then trimmed. CR and LF could otherwise split the
// response (net/http replaces those two too), and RFC 9110 section 5.5 makes
// a value with NUL or another CTL invalid, which a recipient may reject or
// mangle.
func appendFieldValue(b []byte, v string) []byte {
	start := len(b)
	b = append(b, v...)
	for i := start; i < len(b); i++ {
		if c := b[i]; c < ' ' && c != '\t' || c == 0x7f {
			b[i] = ' '
		}
	}
	n := copy(b[start:], bytes.TrimSpace(b[start:]))
	return b[:start+n]
}

// hasToken reports whether a comma-separated field value contains token,
// case-insensitively.
func hasToken(v, token string) bool {
	for part := range strings.SplitSeq(v, ",") {
		if strings.EqualFold(strings.TrimSpace(part), token) {
			return true
		}
	}
	return false
}
