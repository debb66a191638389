package sandbox

import (
	"fmt"
	"time"
)

// CreditTimeFormat is how credit-history records write createdAt. The spec says only "ISO 8601"; the real
// service has been seen writing local times with a +0700 offset and no milliseconds.
type CreditTimeFormat string

// Credit-history time formats.
const (
	CreditTimeMillisUTC CreditTimeFormat = ""        // 2026-11-23T07:47:44.123Z (default)
	CreditTimeOffset    CreditTimeFormat = "offset"  // 2026-11-23T14:47:44+0700: WIB, offset without a colon
	CreditTimeSeconds   CreditTimeFormat = "seconds" // 2026-11-23T07:47:44Z: UTC without milliseconds
	CreditTimeNoZone    CreditTimeFormat = "nozone"  // 2026-11-23 14:47:44: WIB wall time without any zone
)

// CreditTimeFormats lists every format, default first.
var CreditTimeFormats = []CreditTimeFormat{CreditTimeMillisUTC, CreditTimeOffset, CreditTimeSeconds, CreditTimeNoZone}

// ParseCreditTimeFormat parses a format name ("" or "millis" is the default).
func ParseCreditTimeFormat(s string) (CreditTimeFormat, error) {
	switch f := CreditTimeFormat(s); f {
	case "millis":
		return CreditTimeMillisUTC, nil
	case CreditTimeMillisUTC, CreditTimeOffset, CreditTimeSeconds, CreditTimeNoZone:
		return f, nil
	}
	return "", fmt.Errorf("sandbox: credit time format %q: want millis, offset, seconds or nozone", s)
}

var wib = time.FixedZone("WIB", 7*3600)

// appendCreditTime writes a credit-history time in the configured format.
func appendCreditTime(b []byte, ms int64, f CreditTimeFormat) []byte {
	t := time.UnixMilli(ms)
	switch f {
	case CreditTimeOffset:
		return t.In(wib).AppendFormat(b, "2006-01-02T15:04:05-0700")
	case CreditTimeSeconds:
		return t.UTC().AppendFormat(b, "2006-01-02T15:04:05Z")
	case CreditTimeNoZone:
		return t.In(wib).AppendFormat(b, "2006-01-02 15:04:05")
	}
	return appendISO(b, ms)
}
