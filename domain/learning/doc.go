// Package learning holds what omega learns about its own work: limitations, bug reports, outcomes, rewards and lessons.
package learning
