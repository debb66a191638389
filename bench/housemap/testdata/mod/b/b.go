// Package b imports a command: an import pointing back up.
package b

import (
	_ "example.com/mod/a"
	_ "example.com/mod/cmd/c"
)
