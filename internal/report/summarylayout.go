package report

// The summary's columns, in characters (the label, summaryTableCols value columns, the notes'
// extra): together as wide as a portrait A4 page at 82 %, so its 11 pt text prints at 9 pt
// (sheetfmt.Scale).

// summaryWidth is the width of the summary sheet's values, in characters: summaryTableCols
// columns, merged for a line of text, one a figure of a headline table.
const summaryWidth = summaryTableCols * summaryTableWidth

// summaryTableCols is how many figures a headline table has room for.
const summaryTableCols = 5

// summaryTableWidth is the width of each of the summary's value columns, in characters.
const summaryTableWidth = 16

// noteExtraWidth is the width of the summary's third column, in characters,
// into which notes are merged.
const noteExtraWidth = 8

// labelWidth is the summary sheet's label column width, in characters.
const labelWidth = 26
