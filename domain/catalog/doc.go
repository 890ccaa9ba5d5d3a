// Package catalog holds the catalogue the agent works from: projects and skills as defined, and the lessons recorded for each skill.
package catalog
