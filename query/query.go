//go:build duckdb

package query

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	_ "github.com/duckdb/duckdb-go/v2" // the "duckdb" database/sql driver

	"github.com/schedlens/schedlens/export"
)

// DB is an in-memory DuckDB with the dataset's views.
type DB struct {
	db *sql.DB
	// Views are the tables of the dataset found on disk, in export.Tables
	// order.
	Views []string
}

// Open opens an in-memory DuckDB over the dataset at dir: a view per
// table that has at least one partition. A folder without any table is an
// error that says what a dataset looks like.
func Open(dir string) (*DB, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s: not a folder (want the -o folder of schedlens export or batch)", dir)
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, err
	}
	// One connection: the views live in the in-memory database of the
	// connection that made them.
	db.SetMaxOpenConns(1)
	q := &DB{db: db}
	for _, t := range export.Tables {
		files, _ := filepath.Glob(filepath.Join(dir, t, "trace_id=*", "*.parquet"))
		if len(files) == 0 {
			continue
		}
		glob := filepath.Join(dir, t, "*", "*.parquet")
		stmt := fmt.Sprintf("CREATE VIEW %s AS SELECT * FROM read_parquet('%s', hive_partitioning = true, union_by_name = true)",
			t, strings.ReplaceAll(glob, "'", "''"))
		if _, err := db.Exec(stmt); err != nil {
			db.Close()
			return nil, fmt.Errorf("%s: table %s: %w", dir, t, err)
		}
		q.Views = append(q.Views, t)
	}
	if len(q.Views) == 0 {
		db.Close()
		return nil, fmt.Errorf("%s: no table of a schedlens dataset (want TABLE/trace_id=ID/*.parquet for a table among %s)",
			dir, strings.Join(export.Tables, ", "))
	}
	return q, nil
}

// Close releases the database.
func (q *DB) Close() error { return q.db.Close() }

// Result is a query's columns and rows; a value is nil (SQL NULL), bool,
// int64, uint64, float64, string, []byte, time.Time or another type the
// driver returns (decimals, lists, structs), printed by fmt.
type Result struct {
	Columns []string
	Rows    [][]any
}

// Query runs one SQL statement and returns all its rows.
func (q *DB) Query(ctx context.Context, stmt string) (*Result, error) {
	if strings.TrimSpace(stmt) == "" {
		return nil, errors.New("empty SQL statement")
	}
	rows, err := q.db.QueryContext(ctx, stmt)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	res := &Result{Columns: cols}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		res.Rows = append(res.Rows, vals)
	}
	return res, rows.Err()
}
