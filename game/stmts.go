package game

import (
	"context"
	"database/sql"
	"sync"
)

// stmtCache keeps a prepared statement for each query text the hot paths
// run (the pages' reads, the change log, a visit): SQLite then parses a
// query once, not at each call, and parsing was about a tenth of the
// server's CPU under make capacity's players. A statement is prepared on
// its first use outside a transaction and closed by Close; the texts are
// the code's constants, so the cache holds one statement per hot query.
type stmtCache struct {
	mu sync.Mutex // held only to look up or add, never while preparing
	m  map[string]*sql.Stmt
}

// statement is what a prepared statement and a query text run either way
// share: the query's arguments only.
type statement interface {
	QueryContext(ctx context.Context, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, args ...any) *sql.Row
	ExecContext(ctx context.Context, args ...any) (sql.Result, error)
}

// prepared returns query as a statement prepared once, bound to tx (nil:
// none). Inside a transaction it only finds a statement prepared before:
// the Store's one connection is the transaction's, so preparing would wait
// for it forever; a query not prepared yet, or that fails to prepare, runs
// unprepared (and returns the same error). Rows of a prepared query must
// be read to the end or closed before the same query runs again.
func (s *Store) prepared(ctx context.Context, tx *sql.Tx, query string) statement {
	c := &s.stmts
	c.mu.Lock()
	st := c.m[query]
	c.mu.Unlock()
	if st == nil && tx == nil {
		st = s.prepare1(ctx, query)
	}
	switch {
	case st != nil:
		return inTx(ctx, tx, st)
	case tx != nil:
		return unprepared{tx, query}
	}
	return unprepared{s.db, query}
}

// prepare1 prepares query and keeps it; nil if it does not prepare.
func (s *Store) prepare1(ctx context.Context, query string) *sql.Stmt {
	st, err := s.db.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	c := &s.stmts
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.m[query]; old != nil { // prepared meanwhile on another goroutine
		st.Close()
		return old
	}
	if c.m == nil {
		c.m = make(map[string]*sql.Stmt)
	}
	c.m[query] = st
	return st
}

// closeStmts closes every statement prepared kept.
func (s *Store) closeStmts() {
	c := &s.stmts
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.m {
		st.Close()
	}
	c.m = nil
}

// unprepared runs a query text on a database or a transaction.
type unprepared struct {
	q     querier
	query string
}

func (u unprepared) QueryContext(ctx context.Context, args ...any) (*sql.Rows, error) {
	return u.q.QueryContext(ctx, u.query, args...)
}

func (u unprepared) QueryRowContext(ctx context.Context, args ...any) *sql.Row {
	return u.q.QueryRowContext(ctx, u.query, args...)
}

func (u unprepared) ExecContext(ctx context.Context, args ...any) (sql.Result, error) {
	return u.q.ExecContext(ctx, u.query, args...)
}
