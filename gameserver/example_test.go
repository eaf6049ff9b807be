package gameserver_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/statesecrets/server/gameserver"
)

// Embedding a server: an ordinary ServeMux, served by the loop on a
// listener, then a graceful Shutdown.
func Example() {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello/{name}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello, %s\n", r.PathValue("name"))
	})
	s := gameserver.New(gameserver.Config{Handler: mux})

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go s.Serve(l) // the loop runs on this goroutine until Shutdown

	resp, err := http.Get("http://" + l.Addr().String() + "/hello/agent")
	if err != nil {
		log.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Print(string(body))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		log.Fatal(err)
	}
	// Output: hello, agent
}

// A game tick: Every runs on the loop, so it shares plain variables with
// the handlers without a lock.
func ExampleServer_Every() {
	turn := 0 // touched only on the loop
	s := gameserver.New(gameserver.Config{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "turn %d", turn)
	})})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go s.Serve(l)
	defer s.Close()

	ticked := make(chan int)
	s.Every(10*time.Millisecond, func() {
		turn++
		if turn <= 3 {
			ticked <- turn // the example reads each one: keeps the output in step
		}
	})
	for range 3 {
		fmt.Println("tick", <-ticked)
	}
	// Output:
	// tick 1
	// tick 2
	// tick 3
}

// Work that must not stall the loop runs on another goroutine and hands its
// result back with Post.
func ExampleServer_Post() {
	var report string // touched only on the loop
	s := gameserver.New(gameserver.Config{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, report)
	})})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go s.Serve(l)
	defer s.Close()

	posted := make(chan struct{})
	go func() {
		result := "dossier: 3 secrets" // slow work, off the loop
		s.Post(func() {
			report = result // back on the loop
			close(posted)
		})
	}()
	<-posted

	resp, err := http.Get("http://" + l.Addr().String() + "/")
	if err != nil {
		log.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(string(body))
	// Output: dossier: 3 secrets
}

// A slow lookup off the loop: the handler defers its response and
// returns at once, so the loop serves other clients meanwhile; Finish runs
// the writing function back on the loop. Under net/http or httptest Defer
// reports false and the handler answers inline.
func ExampleDefer() {
	lookup := func(agent string) string { return agent + " is a double agent" } // slow work
	answer := func(w http.ResponseWriter, verdict string) { io.WriteString(w, verdict) }

	s := gameserver.New(gameserver.Config{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		agent := r.URL.Query().Get("agent")
		d, ok := gameserver.Defer(w)
		if !ok {
			answer(w, lookup(agent))
			return
		}
		go func() {
			verdict := lookup(agent) // off the loop
			d.Finish(func(w http.ResponseWriter) { answer(w, verdict) })
		}()
	})})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go s.Serve(l)
	defer s.Close()

	resp, err := http.Get("http://" + l.Addr().String() + "/?agent=Kim")
	if err != nil {
		log.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(string(body))
	// Output: Kim is a double agent
}

// Hashing a password off the loop: the handler hands the work to the
// Server's worker pool with Go and returns; finish writes the response on
// the loop. Under net/http the same handler runs both inline.
func ExampleGo() {
	hash := func(ctx context.Context, password string) string { // CPU-heavy: bcrypt in real life
		sum := sha256.Sum256([]byte(password))
		return hex.EncodeToString(sum[:4])
	}
	s := gameserver.New(gameserver.Config{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		password := r.FormValue("password") // read on the loop, before Go
		gameserver.Go(w, r, func(ctx context.Context) string {
			return hash(ctx, password) // on a pool goroutine
		}, func(w http.ResponseWriter, r *http.Request, h string) {
			fmt.Fprintf(w, "hash %s\n", h) // on the loop
		})
	})})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go s.Serve(l)
	defer s.Close()

	resp, err := http.PostForm("http://"+l.Addr().String()+"/login", url.Values{"password": {"truth"}})
	if err != nil {
		log.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Print(resp.Status, ", ", string(body))
	// Output: 200 OK, hash c5c4bad8
}

// A live news feed: each client's GET /news becomes an event stream kept
// in a set of subscribers, and a timer on the loop broadcasts an event to
// them all (one copy of it, however many subscribers), framed by Event:
// its id (which a reconnecting browser sends back as Last-Event-ID), its
// type, and data of two lines. OnClose takes a stream out of the set
// however it ends; its function runs after the one that ended the stream
// returns, so the loop below may close streams while it goes through the
// set. Under net/http the same handler works: Stream then holds it while
// the stream is open.
func ExampleStream() {
	subscribers := map[*gameserver.EventStream]bool{} // touched only on the loop
	joined, left := make(chan struct{}), make(chan int, 1)
	s := gameserver.New(gameserver.Config{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gameserver.Stream(w, r, func(es *gameserver.EventStream) {
			subscribers[es] = true
			es.OnClose(func() { // on the loop, however the stream ends
				delete(subscribers, es)
				left <- len(subscribers)
			})
			close(joined)
		})
	})})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go s.Serve(l)
	defer s.Close()

	go func() {
		<-joined
		s.AfterFunc(10*time.Millisecond, func() {
			news, _ := gameserver.Event{ID: "42", Event: "news", Data: "the embassy burned\nno one saw a thing"}.MarshalText()
			gameserver.Broadcast(slices.Collect(maps.Keys(subscribers)), news)
			for es := range subscribers {
				es.Close()
			}
		})
	}()
	resp, err := http.Get("http://" + l.Addr().String() + "/news")
	if err != nil {
		log.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body) // until Close ends the stream
	resp.Body.Close()
	fmt.Println(resp.Header.Get("Content-Type"))
	fmt.Print(string(body))
	fmt.Println(<-left, "subscribers left")
	// Output:
	// text/event-stream
	// event: news
	// id: 42
	// data: the embassy burned
	// data: no one saw a thing
	//
	// 0 subscribers left
}

// The same handlers on net/http: Serial runs them one at a time, under
// one lock, so they share plain variables as on the loop, with a tick
// (Every) under the same lock; a graceful Shutdown ends open streams
// through Close.
func ExampleSerial() {
	visits := 0 // touched only under the lock
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		visits++
		fmt.Fprintf(w, "visit %d\n", visits)
	})
	s := gameserver.Serial(mux)
	tick := s.Every(time.Minute, func() { visits = 0 })
	defer tick.Stop()
	hs := &http.Server{Handler: s}
	hs.RegisterOnShutdown(s.Close) // streams end, so Shutdown does not wait for them
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go hs.Serve(l) // a goroutine per connection

	for range 2 {
		resp, err := http.Get("http://" + l.Addr().String() + "/")
		if err != nil {
			log.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Print(string(body))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// visit 1
	// visit 2
}
