package lending

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// TestRemittanceFeedCursor: a page's cursor reads back as itself; what the pattern matches is a
// cursor, anything else is a field error on "cursor"; the court-order states are the loan
// remittance's, so the feed's one list of states holds both.
func TestRemittanceFeedCursor(t *testing.T) {
	at := time.Date(2026, 11, 3, 10, 0, 0, 123_456_000, time.UTC)
	for _, c := range []RemittanceFeedCursor{
		{At: at, Kind: RemittanceKindLoan, Seq: 42},
		{At: at, Kind: RemittanceKindCourtOrder, Seq: 1},
		{At: time.UnixMicro(0).UTC(), Kind: RemittanceKindLoan, Seq: 999_999_999_999_999_999},
		{At: at, Kind: RemittanceKindBnpl, Seq: 7},
	} {
		s := c.String()
		require.LessOrEqual(t, len(s), MaxRemittanceFeedCursor, s)
		got, err := ParseRemittanceFeedCursor(s)
		require.NoError(t, err, s)
		require.Equal(t, c, got, s)
	}
	require.Equal(t, "1793700000123456.L42", RemittanceFeedCursor{At: at, Kind: RemittanceKindLoan, Seq: 42}.String())
	require.Equal(t, "1793700000123456.B42", RemittanceFeedCursor{At: at, Kind: RemittanceKindBnpl, Seq: 42}.String())
	top, err := ParseRemittanceFeedCursor("")
	require.NoError(t, err)
	require.Equal(t, RemittanceFeedCursor{}, top)
	for _, v := range []string{"12", "1.X2", "1.L0", "01.L2", "1.L02", "-1.L2", "1.L2 ", " 1.L2", "1.L2\x00", "1.l2", "1.LC2", "1..L2", "1.b2", "1.B0", "1.BL2",
		strings.Repeat("9", 17) + ".L1", "1.L" + strings.Repeat("9", 19), "9999999999999999.C" + strings.Repeat("9", 18) + "0"} {
		_, err := ParseRemittanceFeedCursor(v)
		var fe *field.Error
		require.ErrorAs(t, err, &fe, "%q", v)
		require.Equal(t, "cursor", fe.Field, "%q", v)
	}
	// The bounds themselves are cursors.
	_, err = ParseRemittanceFeedCursor("9999999999999999.C" + strings.Repeat("9", 18))
	require.NoError(t, err)

	require.Equal(t, []string{RemitRemitting, RemitRemitted, RemitFailed},
		[]string{payroll.CourtRemitRemitting, payroll.CourtRemitRemitted, payroll.CourtRemitFailed})
}

// TestRemittanceFeedSQL: each placeholder is numbered once, in the order of its argument, for
// every shape of filter and cursor.
func TestRemittanceFeedSQL(t *testing.T) {
	at := time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
	for _, f := range []RemittanceFeedFilter{{}, {Kind: RemittanceKindLoan}, {Kind: RemittanceKindCourtOrder, Status: RemitFailed},
		{BusinessID: "org_1", From: at, To: at.Add(time.Hour)}} {
		bills, err := f.bills("org_1")
		require.NoError(t, err)
		for _, f := range []RemittanceFeedFilter{f, bills} {
			for _, c := range []RemittanceFeedCursor{{}, {At: at, Kind: RemittanceKindLoan, Seq: 3}, {At: at, Kind: RemittanceKindCourtOrder, Seq: 3},
				{At: at, Kind: RemittanceKindBnpl, Seq: 3}} {
				sql, args := remittanceFeedSQL(f, c, 10)
				for i := range args {
					require.Contains(t, sql, "$"+strconv.Itoa(i+1))
				}
				require.NotContains(t, sql, "$"+strconv.Itoa(len(args)+1))
			}
			sql, args := remittanceTotalsSQL(f)
			for i := range args {
				require.Contains(t, sql, "$"+strconv.Itoa(i+1))
			}
			require.NotContains(t, sql, "$"+strconv.Itoa(len(args)+1))
		}
	}
}
