package outbox_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func TestTransferSettledTypeIsTheDomainsLowerCase(t *testing.T) {
	t.Parallel()
	for domain, want := range map[string]string{"EWA": "ewa.bank_transfer_settled.v1", "LOAN": "loan.bank_transfer_settled.v1",
		"PAYROLL": "payroll.bank_transfer_settled.v1", "SAVINGS": "savings.bank_transfer_settled.v1"} {
		require.Equal(t, want, outbox.TransferSettledType(domain))
		require.NoError(t, outbox.ValidType(want))
	}
}

func TestWriteTransferSettledWritesOnePayloadShape(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: "tenant-a", Actor: "user-1"})
	one := outbox.TransferSettled{Domain: "LOAN", Kind: "remittance", SubjectID: "loan_1:2", AmountSantim: 12_345, TransferID: "tr_1",
		PartnerReference: "ref-1", Keys: map[string]any{"loanId": "loan_1", "index": 2}}
	entries := []outbox.TransferSettled{
		{Domain: "PAYROLL", Kind: "entry", SubjectID: "pe_1", AmountSantim: 100, TransferID: "tr_2", Keys: map[string]any{"entryId": "pe_1"}},
		{Domain: "PAYROLL", Kind: "entry", SubjectID: "pe_2", AmountSantim: 200, TransferID: "tr_3", PartnerReference: "ref-3"},
	}
	require.NoError(t, tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
		if err := outbox.WriteTransferSettled(ctx, tx, one); err != nil {
			return err
		}
		b := &pgx.Batch{}
		if err := outbox.QueueTransferSettled(ctx, b, outbox.TransferSettled{Domain: "EWA", Kind: "disbursement", SubjectID: "ewa_1",
			AmountSantim: 1}); err != nil {
			return err
		}
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		return outbox.WriteTransfersSettled(ctx, tx, entries)
	}))
	var got []string
	require.NoError(t, tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT type || ' ' || payload::text FROM app.outbox ORDER BY id`)
		if err != nil {
			return err
		}
		got, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	}))
	require.Len(t, got, 4)
	for i, want := range []struct{ typ, payload string }{
		{"loan.bank_transfer_settled.v1", `{"domain":"LOAN","kind":"remittance","subjectId":"loan_1:2","amountSantim":12345,"transferId":"tr_1",
			"partnerReference":"ref-1","loanId":"loan_1","index":2}`},
		{"ewa.bank_transfer_settled.v1", `{"domain":"EWA","kind":"disbursement","subjectId":"ewa_1","amountSantim":1,"transferId":""}`},
		{"payroll.bank_transfer_settled.v1", `{"domain":"PAYROLL","kind":"entry","subjectId":"pe_1","amountSantim":100,"transferId":"tr_2",
			"entryId":"pe_1"}`},
		{"payroll.bank_transfer_settled.v1", `{"domain":"PAYROLL","kind":"entry","subjectId":"pe_2","amountSantim":200,"transferId":"tr_3",
			"partnerReference":"ref-3"}`},
	} {
		typ, payload, _ := strings.Cut(got[i], " ")
		require.Equal(t, want.typ, typ)
		require.JSONEq(t, want.payload, payload)
	}
}

func TestWriteTransferSettledRefusesWhatIsNotASettledTransfer(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: "tenant-a", Actor: "user-1"})
	good := outbox.TransferSettled{Domain: "EWA", Kind: "disbursement", SubjectID: "ewa_1", AmountSantim: 1}
	for name, mod := range map[string]func(*outbox.TransferSettled){
		"unknown domain":    func(s *outbox.TransferSettled) { s.Domain = "CARDS" },
		"lower-case domain": func(s *outbox.TransferSettled) { s.Domain = "ewa" },
		"no kind":           func(s *outbox.TransferSettled) { s.Kind = "" },
		"upper-case kind":   func(s *outbox.TransferSettled) { s.Kind = "Disbursement" },
		"no subject":        func(s *outbox.TransferSettled) { s.SubjectID = "" },
		"zero amount":       func(s *outbox.TransferSettled) { s.AmountSantim = 0 },
		"negative amount":   func(s *outbox.TransferSettled) { s.AmountSantim = -1 },
		"a key of its own":  func(s *outbox.TransferSettled) { s.Keys = map[string]any{"amountSantim": 2} },
		"a reference key":   func(s *outbox.TransferSettled) { s.Keys = map[string]any{"partnerReference": "r"} },
	} {
		s := good
		mod(&s)
		require.NoError(t, tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
			require.ErrorIs(t, outbox.WriteTransferSettled(ctx, tx, s), outbox.ErrInvalidPayload, name)
			require.ErrorIs(t, outbox.QueueTransferSettled(ctx, &pgx.Batch{}, s), outbox.ErrInvalidPayload, name)
			require.ErrorIs(t, outbox.WriteTransfersSettled(ctx, tx, []outbox.TransferSettled{good, s}), outbox.ErrInvalidPayload, name)
			return nil
		}))
	}
	require.NoError(t, tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
		other := good
		other.Domain = "LOAN"
		require.ErrorIs(t, outbox.WriteTransfersSettled(ctx, tx, []outbox.TransferSettled{good, other}), outbox.ErrInvalidPayload,
			"one statement writes one type")
		return nil
	}))
	require.Equal(t, 0, countEvents(t, d, "tenant-a"), "nothing refused is written")
}
