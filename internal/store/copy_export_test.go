package store

import "database/sql"

// The copy tests (copy_test.go, package store_test) seed and read databases below the store's
// API, on either backend.

// RawDB is s's write pool, for statements a test runs outside the store's API.
func RawDB(s *Store) *sql.DB { return s.wdb }

// CopyTables is the tables Copy copies, parents first.
func CopyTables() []string { return copyTables }

// IsPG tells whether s is on PostgreSQL.
func IsPG(s *Store) bool { return s.isPG() }

// QuoteIdent quotes a table or column name.
func QuoteIdent(name string) string { return quoteIdent(name) }
