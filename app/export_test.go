package app

import "database/sql"

// DBForTests gives tests the database handle, to check what the read
// models and the log hold; production code asks through Queries.
func (a *App) DBForTests() *sql.DB { return a.backend.DB() }

// ReadDBForTests is the query handle (on SQLite the reader pool).
func (a *App) ReadDBForTests() *sql.DB { return a.backend.ReadDB() }
