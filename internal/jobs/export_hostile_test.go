package jobs

// HostileXLSX writes a workbook of a hostile shape for the plan-level tests (hostileXLSX).
var HostileXLSX = hostileXLSX
