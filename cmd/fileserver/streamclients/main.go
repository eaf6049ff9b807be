// Command streamclients measures a server's event streams (make
// bench-streams): it opens N streams (GET PATH), reads each one's header
// and first event, holds them all open, and prints the server's resident
// memory per stream (from /proc/PID/status, before and after). Then it
// POSTs one event to PATH, which the server broadcasts, and prints how
// long the event took to reach the first, the median and the last stream.
//
//	streamclients -addr HOST:PORT -path /events -n 10000 -pid PID
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8081", "server address, host:port")
	path := flag.String("path", "/events", "the event stream's path")
	n := flag.Int("n", 10000, "streams to open")
	pid := flag.Int("pid", 0, "the server's process id, for its resident memory")
	settle := flag.Duration("settle", 2*time.Second, "wait after opening the streams before reading the server's memory")
	timeout := flag.Duration("timeout", 60*time.Second, "bound on the broadcast reaching every stream")
	flag.Parse()
	if err := run(*addr, *path, *n, *pid, *settle, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "streamclients:", err)
		os.Exit(1)
	}
}

func run(addr, path string, n, pid int, settle, timeout time.Duration) error {
	before := rss(pid)
	streams := make([]*stream, 0, n)
	defer func() {
		for _, s := range streams {
			s.c.Close()
		}
	}()
	for range n {
		s, err := open(addr, path)
		if err != nil {
			return fmt.Errorf("after %d streams: %w", len(streams), err)
		}
		streams = append(streams, s)
	}
	time.Sleep(settle)
	after := rss(pid)
	fmt.Printf("streams=%d rss_before_kb=%d rss_after_kb=%d per_stream_bytes=%.0f\n",
		len(streams), before, after, float64(after-before)*1024/float64(len(streams)))

	token := strconv.FormatInt(time.Now().UnixNano(), 10)
	arrived := make([]time.Duration, len(streams))
	var wg, waiting sync.WaitGroup
	var start atomic.Int64 // when the broadcast was posted, in Unix nanoseconds
	errs := make(chan error, len(streams))
	for i, s := range streams {
		wg.Add(1)
		waiting.Add(1)
		go func() {
			defer wg.Done()
			s.c.SetReadDeadline(time.Now().Add(timeout))
			waiting.Done()
			if err := s.await("data: " + token); err != nil {
				errs <- err
				return
			}
			arrived[i] = time.Duration(time.Now().UnixNano() - start.Load())
		}()
	}
	waiting.Wait()
	pc, err := net.Dial("tcp", addr) // connected before the clock starts
	if err != nil {
		return err
	}
	defer pc.Close()
	start.Store(time.Now().UnixNano())
	reached, err := post(pc, path, token)
	if err != nil {
		return err
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return fmt.Errorf("a stream missed the broadcast: %w", err)
	}
	slices.Sort(arrived)
	fmt.Printf("broadcast reached=%s first_ms=%.1f p50_ms=%.1f last_ms=%.1f\n", reached,
		ms(arrived[0]), ms(arrived[len(arrived)/2]), ms(arrived[len(arrived)-1]))
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// stream is one open event stream.
type stream struct {
	c  net.Conn
	br *bufio.Reader
}

// open opens a stream and reads its header and first chunk.
func open(addr, path string) (*stream, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n\r\n"); err != nil {
		c.Close()
		return nil, err
	}
	s := &stream{c: c, br: bufio.NewReaderSize(c, 512)}
	resp, err := http.ReadResponse(s.br, nil)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = errors.New(resp.Status)
	}
	if err == nil {
		_, err = s.chunk()
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	c.SetDeadline(time.Time{})
	return s, nil
}

// chunk reads one chunk of the chunked body, framing included.
func (s *stream) chunk() ([]byte, error) {
	line, err := s.br.ReadString('\n')
	if err != nil {
		return nil, err
	}
	size, err := strconv.ParseInt(strings.TrimSpace(line), 16, 32)
	if err != nil || size == 0 {
		return nil, fmt.Errorf("chunk size line %q", line)
	}
	b := make([]byte, size+2)
	_, err = io.ReadFull(s.br, b)
	return b[:size], err
}

// await reads chunks until one holds want (heartbeats may come first).
func (s *stream) await(want string) error {
	for {
		b, err := s.chunk()
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(want)) {
			return nil
		}
	}
}

// post sends the event on c and returns the server's count of streams
// reached.
func post(c net.Conn, path, body string) (string, error) {
	c.SetDeadline(time.Now().Add(10 * time.Second))
	req := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: bench\r\nContent-Length: %d\r\n\r\n%s", path, len(body), body)
	if _, err := io.WriteString(c, req); err != nil {
		return "", err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return strings.TrimSpace(strings.TrimPrefix(string(b), "sent ")), err
}

// rss returns the resident memory of process pid, in KiB, or -1.
func rss(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return kb
		}
	}
	return -1
}
