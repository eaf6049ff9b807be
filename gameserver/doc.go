// Package gameserver is a single-goroutine, event-loop HTTP/1.1 server for
// standard http.Handlers.
//
// One goroutine, locked to its OS thread, runs the whole server: on Linux it
// waits in epoll_wait over non-blocking sockets, accepts connections, reads
// and frames requests, calls the Handler, writes responses, fires timers and
// runs functions posted from other goroutines. There is no goroutine per
// connection or per request. Handlers therefore run one at a time, in order,
// on that goroutine (the loop): state touched only from handlers, timers and
// posted functions needs no locks. The price is visible by design: while one
// handler runs, every other client waits.
//
// On systems other than Linux a portable back end serves the same API: it
// reads and writes through the net package on helper goroutines, but handlers,
// timers and posted functions still run one at a time on the loop goroutine.
//
// Requests are framed per RFC 9112 with strict rules (see Config), bodies are
// buffered whole before the Handler runs, so a Handler never waits on the
// network. The http.ResponseWriter passed to a Handler buffers the body: a
// response whose Handler returns without calling Flush is sent with an exact
// Content-Length. It also implements http.Flusher: Flush sends the header and
// the body so far, and the rest follows chunked (HTTP/1.1 clients) or
// delimited by closing the connection (HTTP/1.0 clients). A handler never
// writes to the network itself: Write, Flush and 1xx responses only queue
// bytes, and the loop writes every connection with queued output once, at
// the end of its turn (as Redis does before it sleeps). It does not
// implement http.Hijacker, so it cannot switch protocols: a WriteHeader(101)
// is logged and answered 500 instead. A 205 Reset Content goes out with
// "Content-Length: 0" and no content (RFC 9110 section 15.3.6); 1xx, 204
// and 304 responses carry no content either. Responses carry the status line
// "HTTP/1.1" to every client, as RFC 9110 section 6.2 asks. An HTTP/1.0
// client that asked for keep-alive (as ab does) keeps its connection, with
// "Connection: keep-alive", for responses with a Content-Length; any other
// response to it ends the connection, as with net/http.
//
// A ResponseWriter, its Header map and the request body are valid only until
// ServeHTTP returns, as with net/http; here the rule is enforced, because the
// server reuses their memory for later requests. After ServeHTTP returns the
// ResponseWriter is cut off: Write returns an error ("gameserver:
// ResponseWriter used after the handler returned"), Header returns a map
// nobody reads, and WriteHeader and Flush do nothing, so a writer kept past
// its request can never reach another request's response. The request body
// may by then hold another request's bytes: copy what must outlive the
// handler.
//
// Content that does not change while the server runs (a file snapshot,
// embedded assets) can be answered without a Handler call: a Handler that
// implements PreparedHandler hands the loop a response built once by
// Prepare for a path, and a plain GET or HEAD of that path is answered
// with it, allocating nothing. Every request gets a fresh http.Request,
// header map and ResponseWriter handle otherwise, because a Handler may
// keep them and nothing proves it did not.
//
// Fairness: a connection gets one request served per loop turn. A client
// that pipelines many requests has the next one served on the next turn,
// round-robin with every other connection that has work, so a batch of
// slow requests delays other clients by one request each, not by the whole
// batch. A turn's work is bounded in time too: once it has run for about
// 4 ms, the requests, timers and posted functions it found ready and has
// not run yet wait for the next turn, which comes at once, after this
// turn has written its responses, and serves them first, in the order
// they became ready. So a request waits for the turns ahead of it, each
// about 4 ms plus one handler, timer and posted function, not for every
// other request read in the same turn; one slow handler still holds
// everyone for its own length.
//
// Memory: a Handler's Write never blocks. Everything a Handler writes is
// queued in memory on its connection until the client takes it, so a
// Handler that writes unbounded data (Flush after Flush) to a slow client
// grows the server's memory without limit; WriteTimeout only closes a
// connection whose client takes nothing at all for that long. Bound what a
// Handler writes, or use an event stream (Stream), whose queued output is
// bounded by Config.StreamBuffer. Reading and serving stop while a
// connection's queued output and the input held behind it take over
// 128 KiB of memory, so pipelined requests do not pile up responses
// behind a client that does not read, and while all connections' queued
// output together is over Config.MaxOutputBytes (for the connections
// with output pending). Once a large backlog drains, the server asks the
// Go runtime to give the freed memory back to the OS at once.
//
// Each request has a context of its own (Request.Context): it carries
// http.LocalAddrContextKey, and is canceled when the response ends (the
// handler returns, or a deferred response is finished), when the client
// closes its connection while the response is deferred or streaming, and
// when the loop stops.
//
// Responses that outlive their handler: Defer takes a response out of the
// handler call, to be finished later, from any goroutine, by a function
// that runs on the loop; Stream keeps a response open as an event stream
// (text/event-stream) that code on the loop writes events to. Go runs
// CPU-heavy or blocking work (a password hash, an outbound call) on the
// Server's bounded worker pool, off the loop, and finishes the response
// on the loop with its result, as nginx's thread pools and libuv's
// uv_queue_work do.
//
// Watching the loop: Stats reports its utilization (busy over elapsed
// time, as Node's eventLoopUtilization), its lag (how late a timer armed
// every Config.LagResolution fires, as Node's monitorEventLoopDelay), the
// longest turn, deferred responses, streams and the worker pool, and
// SlowRequests the handler and finish calls that held the loop for
// Config.SlowRequest or longer, as Redis's SLOWLOG.
//
// Why a request waited, which no client can tell from outside, the loop
// can: Stats.Wait attributes the time from when a request was ready (its
// last bytes arrived, by the kernel's receive timestamp where it gives
// one) to the start of its handler to the loop's other work
// (head-of-line blocking: the server's doing) or to the loop's thread
// waiting for a CPU (run-queue delay and preemption, from the kernel's
// per-thread account: the machine's doing), with the handler's own time
// beside them, in histograms for all requests and by route, and in the
// slow-request log; on a busy machine the first still tells the server's
// lesson. Config.LoopCPUs pins the loop's thread to a CPU, and
// Stats.CPUWaitShare tells how much of its time it still waited for one.
// See WaitStats for what is measured and how often.
package gameserver
