// Package c is a library under cmd, for the fixture.
package c
