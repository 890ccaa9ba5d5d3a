// Package usage holds what a provider call was for and what it took: purposes, usage, and the events that record calls.
package usage
