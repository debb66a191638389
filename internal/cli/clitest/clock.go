package clitest

import (
	"regexp"
	"strings"
	"time"
)

// A time as a command prints it: a date and a clock, then perhaps its zone (an abbreviation,
// Z, or an offset); or a compact stamp (outbox names) with its offset.
var (
	printedTime  = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2}| [A-Z]{2,5}\b| [+-]\d{2}\b)?`)
	printedStamp = regexp.MustCompile(`\b\d{8}T\d{6}(?:\.\d+)?(Z|[+-]\d{4})?`)
)

// Unzoned are the times in text that a person cannot place on loc's clock: without a zone, or
// in another zone than loc's (UTC when loc is Jakarta's). at is the moment whose offset
// stands for loc's (a zone with DST has two).
func Unzoned(text string, loc *time.Location, at time.Time) []string {
	abbr, off := at.In(loc).Zone()
	sign, h, m := "+", off/3600, off%3600/60
	if off < 0 {
		sign, h, m = "-", -h, -m
	}
	offset := sign + twoDigits(h) + twoDigits(m)
	ok := func(zone string) bool {
		zone = strings.TrimSpace(zone)
		return zone == abbr || strings.ReplaceAll(zone, ":", "") == offset || off == 0 && zone == "Z"
	}
	var bad []string
	for _, mm := range printedTime.FindAllStringSubmatch(text, -1) {
		if !ok(mm[1]) {
			bad = append(bad, mm[0])
		}
	}
	for _, mm := range printedStamp.FindAllStringSubmatch(text, -1) {
		if !ok(mm[1]) {
			bad = append(bad, mm[0])
		}
	}
	return bad
}

func twoDigits(n int) string {
	return string([]byte{byte('0' + n/10), byte('0' + n%10)})
}
