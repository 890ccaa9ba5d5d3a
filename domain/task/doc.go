// Package task holds reminders and action tasks: scheduling, firing, delivery and recurrence (the Task aggregate).
package task
