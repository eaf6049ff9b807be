package game

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Backup writes a consistent copy of the game database at dbPath to the new
// file dest, while other connections (a running server, in this process or
// another) go on reading and writing it. It runs SQLite's VACUUM INTO on a
// connection of its own: the copy is one read transaction's snapshot, so it
// holds every transaction committed before Backup began and none that
// committed after its snapshot was taken, and it is a compact, ordinary
// (non-WAL) database file that Open accepts as it is. Writers are not
// blocked while it runs (WAL mode); a long copy only keeps the WAL from
// being checkpointed past its snapshot.
//
// To restore, stop the server, replace dbPath with the copy and remove
// dbPath's -wal and -shm files if any, then start the server.
//
// Errors: dest must not be a name SQLite keeps beside another database
// (Companion), as the copy would be lost when that one is opened;
// dbPath must exist and be a game database (Backup never creates
// or migrates one); dest must not exist (an error wrapping fs.ErrExist), so
// a backup never overwrites anything; dest is created 0600 (it holds
// password hashes and the session keys), and removed again if the copy fails.
// Missing folders on the way to dest are created 0700, as -db's are.
func Backup(ctx context.Context, dbPath, dest string) error {
	if dest == "" {
		return errors.New("game: backup: empty destination path")
	}
	// SQLite would read a name beginning "file:" as a URI and write the
	// copy somewhere else (other.db for file:other.db), with its own mode.
	if strings.HasPrefix(strings.ToLower(dest), "file:") {
		return fmt.Errorf("game: backup: %s: a name beginning with file: is not a plain file name; write ./%s", dest, dest)
	}
	if db, suffix, ok := Companion(dest); ok {
		return fmt.Errorf("game: backup: %s: SQLite takes a name ending %s for a file of the database %s, "+
			"which it deletes or overwrites when that database is opened; choose another name", dest, suffix, db)
	}
	if _, err := os.Stat(dbPath); err != nil {
		return fmt.Errorf("game: backup: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o700); err != nil {
		return fmt.Errorf("game: backup: %w", err)
	}
	// Claim dest first (O_EXCL: nobody else's file is ever overwritten or
	// removed); VACUUM INTO accepts an empty existing file.
	f, err := os.OpenFile(dest, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("game: backup: %w", err)
	}
	f.Close()
	if err := vacuumInto(ctx, dbPath, dest); err != nil {
		os.Remove(dest)
		return err
	}
	return nil
}

// vacuumInto copies the game database at dbPath into the empty file dest.
func vacuumInto(ctx context.Context, dbPath, dest string) error {
	db, err := sql.Open("sqlite", DSN(dbPath))
	if err != nil {
		return fmt.Errorf("game: backup: open %s: %w", dbPath, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'schema_migrations'`).Scan(&n); err != nil {
		return fmt.Errorf("game: backup: read %s: %w", dbPath, err)
	} else if n == 0 {
		return fmt.Errorf("game: backup: %s is not a State Secrets database", dbPath)
	}
	// VACUUM INTO takes its file name as an SQL string: quote it.
	if _, err := db.ExecContext(ctx, `VACUUM INTO '`+strings.ReplaceAll(dest, "'", "''")+`'`); err != nil {
		return fmt.Errorf("game: backup %s to %s: %w", dbPath, dest, err)
	}
	return nil
}

// companion matches the names of the files SQLite keeps beside a database
// X: X-journal (the rollback journal), X-wal (the write-ahead log), X-shm
// (the WAL's shared-memory index) and X-mjHHHHHH9HH (a super-journal, of a
// transaction over several databases). Opening X deletes, truncates or
// overwrites them. Matched regardless of case, for systems whose file
// names are.
var companion = regexp.MustCompile(`(?i)(-journal|-wal|-shm|-mj[0-9a-f]{6}9[0-9a-f]{2})$`)

// Companion reports whether SQLite would take the file name for one it
// keeps beside another database, db (name less suffix), and deletes or
// overwrites when db is opened: its journal, write-ahead log,
// shared-memory index or a super-journal. No file is looked at: the name
// alone decides, whether db exists or not.
func Companion(name string) (db, suffix string, ok bool) {
	loc := companion.FindStringIndex(name)
	if loc == nil {
		return "", "", false
	}
	return name[:loc[0]], name[loc[0]:], true
}
