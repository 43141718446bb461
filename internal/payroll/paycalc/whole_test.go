package paycalc

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/field"
)

// A product mandate (equb contribution, BNPL instalment, savings auto-save) is taken whole
// within the protected room or not at all, and never carried forward: the room it leaves is the
// next source's, and the net-pay floor and the share cap hold as for every protected deduction.
func TestProductMandatesAreTakenWholeOrNotAtAll(t *testing.T) {
	t.Parallel()
	base := emp("2026-11", 1_000_000)
	free, err := Calculate(base)
	require.NoError(t, err)
	room := free.RecoverableSantim
	require.Positive(t, room)

	for _, kind := range []DeductionKind{KindEqubContribution, KindBnplInstallment, KindSavingsAutosave} {
		// Exactly the room: taken whole, nothing left, nothing carried.
		e, err := Calculate(with(base, func(in *Input) {
			in.Mandates = []Mandate{{Reference: "mdt_p", Kind: kind, Method: Fixed, Amount: room}}
		}))
		require.NoError(t, err)
		require.Equal(t, []DeductionLine{{Kind: kind, Reference: "mdt_p", AmountSantim: room}}, e.Deductions[2:])
		require.Equal(t, room, e.ProtectedSantim)
		require.Zero(t, e.RecoverableSantim)
		require.Empty(t, e.CarriedForward)
		require.Equal(t, free.NetSantim-room, e.NetSantim)

		// One santim more than the room: not taken at all, not carried; the room is still there
		// for a later source (a union-dues mandate of another priority order is before it; a
		// catalog deduction after it takes what it can).
		e, err = Calculate(with(base, func(in *Input) {
			in.Mandates = []Mandate{{Reference: "mdt_p", Kind: kind, Method: Fixed, Amount: room + 1}}
			in.Deductions = []CatalogDeduction{{Reference: "insurance", Method: Fixed, Amount: 1_000}}
		}))
		require.NoError(t, err)
		require.Equal(t, []DeductionLine{{Kind: KindCatalog, Reference: "insurance", AmountSantim: 1_000}}, e.Deductions[2:])
		require.Empty(t, e.CarriedForward, "a product mandate is never carried forward")
		require.Equal(t, room-1_000, e.RecoverableSantim)
		require.Equal(t, free.NetSantim-1_000, e.NetSantim)
	}

	// In the mandates' place: after a court order, a loan instalment and an EWA recovery; a court
	// order that leaves too little room means the contribution is skipped whole.
	e, err := Calculate(with(base, func(in *Input) {
		in.Mandates = []Mandate{
			{Reference: "mdt_eq", Kind: KindEqubContribution, Method: Fixed, Amount: 50_000},
			{Reference: "mdt_co", Kind: KindCourtOrder, Method: Fixed, Amount: free.NetSantim - base.Policy.MinNetSantim - 10_000},
		}
	}))
	require.NoError(t, err)
	require.Len(t, e.Deductions, 3)
	require.Equal(t, KindCourtOrder, e.Deductions[2].Kind)
	require.Empty(t, e.CarriedForward)
	require.GreaterOrEqual(t, e.NetSantim, base.Policy.MinNetSantim)

	e, err = Calculate(with(base, func(in *Input) {
		in.Mandates = []Mandate{{Reference: "mdt_eq", Kind: KindEqubContribution, Method: Fixed, Amount: 50_000}}
		in.EWA = []EWARecovery{{Reference: "ewa_1", OutstandingSantim: 10_000}}
	}))
	require.NoError(t, err)
	require.Equal(t, []DeductionLine{{Kind: KindEWARecovery, Reference: "ewa_1", AmountSantim: 10_000},
		{Kind: KindEqubContribution, Reference: "mdt_eq", AmountSantim: 50_000}}, e.Deductions[2:])
}

// A product mandate is a fixed amount: a share of gross is refused.
func TestProductMandateMustBeFixed(t *testing.T) {
	t.Parallel()
	_, err := Calculate(with(emp("2026-11", 1_000_000), func(in *Input) {
		in.Mandates = []Mandate{{Reference: "mdt_p", Kind: KindSavingsAutosave, Method: Percent, Amount: 100}}
	}))
	var fe *field.Error
	require.True(t, errors.As(err, &fe), "%v", err)
	require.Equal(t, "mandates[0].method", fe.Field)
}
