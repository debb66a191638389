// Package docs holds no code: its test (docs_test.go) runs every command of README.md and
// docs/*.md against a fresh demo warehouse. The convention is in docs/development.md.
package docs
