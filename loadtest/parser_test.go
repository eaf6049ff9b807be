package loadtest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parsed is what the parser made of one response.
type parsed struct {
	status      int
	persistent  bool
	headerBytes int64
	bodyBytes   int64
	server      string
}

// parseStream feeds stream to the parser in the given chunks, as reads
// would deliver it, then EOF, and returns the responses it completed and
// the first error. Unconsumed bytes are kept, as the worker keeps them.
func parseStream(chunks []string, head bool) ([]parsed, error) {
	var r response
	r.reset(head, true)
	var out []parsed
	var pending []byte
	collect := func() {
		out = append(out, parsed{r.status, r.persistent, r.headerBytes, r.bodyBytes, r.server})
		r.reset(head, false)
	}
	for _, c := range chunks {
		pending = append(pending, c...)
		for len(pending) > 0 {
			n, err := r.feed(pending, false)
			if err != nil {
				return out, err
			}
			pending = pending[n:]
			if !r.done() {
				break
			}
			collect()
		}
	}
	if r.eof() && (r.headerBytes > 0 || r.status != 0) {
		collect()
	}
	return out, nil
}

// splits returns every way to cut s in two, and s one byte at a time.
func splits(s string) [][]string {
	out := [][]string{{s}}
	for i := 1; i < len(s); i++ {
		out = append(out, []string{s[:i], s[i:]})
	}
	bytewise := make([]string, len(s))
	for i := range s {
		bytewise[i] = s[i : i+1]
	}
	return append(out, bytewise)
}

// chunkedStream is a chunked response with extensions and trailers.
const chunkedStream = "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\nServer: x/1\r\n\r\n" +
	"5;name=value;q=\"a;b\"\r\nhello\r\n" + "0A\r\n0123456789\r\n" + "0 ; last\r\nTrailer-One: 1\r\nTrailer-Two: 2\r\n\r\n"

// parseCases are responses and what the parser must make of them.
var parseCases = []struct {
	name   string
	stream string
	head   bool
	want   []parsed
}{{
	// Ensure a Content-Length body is counted and a 1.1 response persists.
	name:   "ContentLength",
	stream: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nServer: nginx/1.22.1\r\n\r\nhello",
	want:   []parsed{{200, true, 17 + 19 + 22 + 2, 5, "nginx/1.22.1"}},
}, {
	// Ensure chunk extensions and trailer fields are skipped and the
	// framing counts as body bytes, as ab counts them.
	name:   "Chunked",
	stream: chunkedStream,
	want:   []parsed{{200, true, 17 + 34 + 13 + 2, int64(len(chunkedStream) - 66), "x/1"}},
}, {
	// Ensure a body without framing runs to EOF and the connection is not reused.
	name:   "CloseDelimited",
	stream: "HTTP/1.1 200 OK\r\nServer: s\r\n\r\nuntil the end",
	want:   []parsed{{200, false, 30, 13, "s"}},
}, {
	// Ensure an HTTP/1.0 response persists only with keep-alive.
	name:   "HTTP10KeepAlive",
	stream: "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nhi",
	want:   []parsed{{200, true, 62, 2, ""}},
}, {
	// Ensure Connection: close ends persistence.
	name:   "ConnectionClose",
	stream: "HTTP/1.1 200 OK\r\nConnection: keep-alive, close\r\nContent-Length: 2\r\n\r\nhi",
	want:   []parsed{{200, false, 17 + 31 + 19 + 2, 2, ""}},
}, {
	// Ensure a response to HEAD has no body whatever Content-Length says.
	name:   "HEAD",
	stream: "HTTP/1.1 200 OK\r\nContent-Length: 2159\r\n\r\n",
	head:   true,
	want:   []parsed{{200, true, 41, 0, ""}},
}, {
	// Ensure 304 and 204 have no body, and two responses in one stream
	// (a pipelined connection) are split where the first ends.
	name:   "NotModifiedThenNoContent",
	stream: "HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
	want:   []parsed{{304, true, 48, 0, ""}, {204, true, 27, 0, ""}},
}, {
	// Ensure a response with a body followed by another on a pipelined
	// connection keeps the second's bytes for it.
	name:   "PipelinedBodies",
	stream: "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcHTTP/1.1 404 Not Found\r\nContent-Length: 4\r\n\r\nnope",
	want:   []parsed{{200, true, 38, 3, ""}, {404, true, 45, 4, ""}},
}, {
	// Ensure an interim 100 Continue is skipped and the final response parsed.
	name:   "Interim1xx",
	stream: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\nx",
	want:   []parsed{{201, true, 25 + 22 + 19 + 2, 1, ""}},
}, {
	// Ensure bare LF line endings are accepted, as ab accepts them.
	name:   "BareLF",
	stream: "HTTP/1.1 200 OK\nContent-Length: 1\n\nx",
	want:   []parsed{{200, true, 35, 1, ""}},
}, {
	// Ensure a chunked body's lines may end in a bare LF too: the
	// chunk-size lines, after each chunk's data, and the trailer's end.
	name:   "ChunkedBareLF",
	stream: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello\n0\n\n",
	want:   []parsed{{200, true, 17 + 28 + 2, 11, ""}},
}}

func TestResponseParse(t *testing.T) {
	tests := parseCases
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, chunks := range splits(tt.stream) {
				got, err := parseStream(chunks, tt.head)
				require.NoError(t, err, "chunks %q", chunks)
				require.Equal(t, tt.want, got, "chunks %q", chunks)
			}
		})
	}
}

func TestResponseParseErrors(t *testing.T) {
	tests := []struct {
		name, stream string
		want         error
	}{
		{"NotHTTP", "SSH-2.0-OpenSSH\r\n\r\n", errStatusLine},
		{"BadVersion", "HTTP/2.0 200 OK\r\n\r\n", errStatusLine},
		{"BadCode", "HTTP/1.1 2x0 OK\r\n\r\n", errStatusLine},
		{"NoColon", "HTTP/1.1 200 OK\r\nBroken\r\n\r\n", errHeaderField},
		{"ObsFold", "HTTP/1.1 200 OK\r\nA: b\r\n c\r\n\r\n", errHeaderField},
		{"BadLength", "HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n", errContentLength},
		{"ConflictingLengths", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", errContentLength},
		{"BadChunkSize", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", errChunk},
		{"MissingChunkCRLF", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\naXX", errChunk},
		{"ChunkSizeBadByte", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5x\r\nhello\r\n", errChunk},
		{"ChunkDataCRWithoutLF", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\rX", errChunk},
		{"TrailerCRWithoutLF", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\rX", errChunk},
		{"HugeChunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + strings.Repeat("f", 16) + "\r\n", errChunk},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Ensure a malformed response is an error at every split.
			for _, chunks := range splits(tt.stream) {
				_, err := parseStream(chunks, false)
				require.ErrorIs(t, err, tt.want, "chunks %q", chunks)
			}
		})
	}
}

func TestResponseAgreeingLengths(t *testing.T) {
	// Ensure repeated Content-Length fields that agree are accepted (RFC 9110 section 8.6).
	got, err := parseStream([]string{"HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\nContent-Length: 2\r\n\r\nhi"}, false)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.EqualValues(t, 2, got[0].bodyBytes)
}

func TestResponseHeaderTooBig(t *testing.T) {
	// Ensure a header section that cannot fit the buffer is an error, not a hang.
	var r response
	r.reset(false, false)
	b := []byte("HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", 100))
	n, err := r.feed(b, false)
	require.NoError(t, err)
	assert.Zero(t, n)
	_, err = r.feed(b, true)
	require.ErrorIs(t, err, errHeaderTooBig)
}

func TestResponseEOFBeforeEnd(t *testing.T) {
	// Ensure EOF completes only a close-delimited body.
	var r response
	r.reset(false, false)
	_, err := r.feed([]byte("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"), false)
	require.NoError(t, err)
	assert.False(t, r.eof())
}

func FuzzResponse(f *testing.F) {
	f.Add("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x\r\nhello\r\n0\r\nT: 1\r\n\r\n", 3)
	f.Add("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 7)
	f.Add("HTTP/1.0 200 OK\r\n\r\nbody", 1)
	f.Fuzz(func(t *testing.T, stream string, cut int) {
		// Ensure any input parses the same whole and cut in two, without panics.
		if cut <= 0 || cut >= len(stream) {
			cut = len(stream) / 2
		}
		whole, errWhole := parseStream([]string{stream}, false)
		split, errSplit := parseStream([]string{stream[:cut], stream[cut:]}, false)
		if errWhole == nil && errSplit == nil {
			require.Equal(t, whole, split)
		}
		require.Equal(t, errWhole == nil, errSplit == nil)
	})
}
