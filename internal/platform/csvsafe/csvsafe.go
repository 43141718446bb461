package csvsafe

// Neutralize returns cell as a spreadsheet will show it as text: a cell starting with '=', '+',
// '-', '@', a tab or a carriage return gets a leading single quote, which spreadsheets read as
// "this is text" and do not display. Any other cell is returned unchanged, so a number such as
// 2500000 stays a number.
//
// A negative number ("-5") is neutralised too: telling it from a formula such as "-1+cmd|…"
// would mean parsing formulas, and a report that needs signed numbers writes them in a column of
// its own that it formats itself.
func Neutralize(cell string) string {
	if cell == "" {
		return cell
	}
	switch cell[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + cell
	}
	return cell
}

// Row neutralises every cell of a record, in a new slice (record is left as it was).
func Row(record []string) []string {
	out := make([]string, len(record))
	for i, c := range record {
		out[i] = Neutralize(c)
	}
	return out
}
