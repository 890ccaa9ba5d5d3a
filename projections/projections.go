// Package projections holds omega's read models and their queries: each
// read model (turns, facts, tasks, summaries, sessions, reports, provider
// calls) declares its tables and applies the events it reads, and Queries
// is the only reader of those tables, so a changed table shape is this
// package's business. The engine that feeds them is projections/engine,
// the contract between the two projections/readmodel, the audit's
// queries projections/auditlog.
package projections
