package paycalc

import (
	"fmt"

	"github.com/wagerail/wagerail/internal/platform/money"
)

// TaxBand is one band of a progressive table: the part of the taxable income above the previous
// band's UpToSantim and up to this UpToSantim is taxed at RateBasisPoints. The last band has
// UpToSantim 0: no upper bound.
type TaxBand struct {
	UpToSantim      int64
	RateBasisPoints int64
}

// TaxTable is a version of the monthly PAYE (employment income tax) schedule. A table applies to
// periods from EffectiveFrom ("YYYY-MM") until the next table's EffectiveFrom. Version names it in
// reports and on every entry (Entry.TaxTableVersion, and the PAYE line's Reference).
type TaxTable struct {
	Version       string
	EffectiveFrom string
	Bands         []TaxBand
}

// Versions of the PAYE table.
const (
	// TaxTable2016 is Schedule "A" of the Income Tax Proclamation 979/2016 (monthly). It answers
	// every period from 2000-01 to 2025-06 (see the package doc).
	TaxTable2016 = "ET-PAYE-2016"
	// TaxTable2025 is the monthly schedule of the Income Tax (Amendment) Proclamation of 2025,
	// for periods from July 2025.
	TaxTable2025 = "ET-PAYE-2025-07"
)

// birr is whole birr in santim.
func birr(b int64) int64 { return b * money.SantimPerBirr }

// taxTables are the versions in order of EffectiveFrom. Never edit a table that has applied to
// a period: add a version.
var taxTables = []TaxTable{
	{Version: TaxTable2016, EffectiveFrom: "2000-01", Bands: []TaxBand{
		{birr(600), 0},
		{birr(1_650), 1_000},
		{birr(3_200), 1_500},
		{birr(5_250), 2_000},
		{birr(7_800), 2_500},
		{birr(10_900), 3_000},
		{0, 3_500},
	}},
	{Version: TaxTable2025, EffectiveFrom: "2025-07", Bands: []TaxBand{
		{birr(2_000), 0},
		{birr(4_000), 1_500},
		{birr(7_000), 2_000},
		{birr(10_000), 2_500},
		{birr(14_000), 3_000},
		{0, 3_500},
	}},
}

// TaxTables returns every version, oldest first (a copy: the tables are not to be changed).
func TaxTables() []TaxTable {
	out := make([]TaxTable, len(taxTables))
	for i, t := range taxTables {
		out[i] = TaxTable{Version: t.Version, EffectiveFrom: t.EffectiveFrom, Bands: append([]TaxBand(nil), t.Bands...)}
	}
	return out
}

// TableFor returns the table that applies to period ("YYYY-MM", 2000-01 to 2100-12).
func TableFor(period string) (TaxTable, error) {
	if _, _, err := parsePeriod(period); err != nil {
		return TaxTable{}, err
	}
	return tableFor(period), nil
}

// tableFor assumes a valid period: "YYYY-MM" strings compare like the months they name.
func tableFor(period string) TaxTable {
	t := taxTables[0]
	for _, c := range taxTables[1:] {
		if period >= c.EffectiveFrom {
			t = c
		}
	}
	return t
}

// Tax is the PAYE on a month's taxable income, computed band by band: the exact tax (santim ×
// basis points, an integer) is summed over the bands and divided by 10,000 once, rounded by the
// money package's rule (nearest santim, half to even). So one taxable income has one rounding,
// however many bands it crosses. taxable must be 0 to money.MaxAmountSantim.
func (t TaxTable) Tax(taxable int64) (int64, error) {
	if taxable < 0 || taxable > money.MaxAmountSantim {
		return 0, fmt.Errorf("paycalc: taxable income %d out of bounds", taxable)
	}
	var exact, lower int64 // exact: santim × basis points; at most 1e12 × 10,000, far inside int64
	for _, b := range t.Bands {
		upper := b.UpToSantim
		if upper == 0 || upper > taxable {
			upper = taxable
		}
		if upper > lower {
			exact += (upper - lower) * b.RateBasisPoints
		}
		if b.UpToSantim == 0 || b.UpToSantim >= taxable {
			break
		}
		lower = b.UpToSantim
	}
	return money.MulDiv(exact, 1, money.HundredPercent)
}
