// Package part imports the package it belongs to: an import pointing back up.
package part

import "example.com/mod/a"

var X = a.Top()
