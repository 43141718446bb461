package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/wagerail/wagerail/internal/platform/db"
)

// Statuses of the transfer register besides the partner's own (PENDING, SETTLED, FAILED).
const (
	// TransferInitiated: recorded, and the partner's answer is not known: not yet, or never (a
	// timeout; GetTransferStatus resolves it).
	TransferInitiated TransferStatus = "INITIATED"
	// TransferRejected: the partner refused this request (a 422 rejection, or a 4xx refusal of
	// the request itself) and moved nothing; FailureCode is its code. It is final for the
	// reference: the same request again is answered with this rejection by the gateway and never
	// sent to the partner again (whose cause may have gone by then, so that it would pay a
	// transfer its sender has already written off as failed); another request naming it is
	// ErrReferenceReused. A new attempt is a new reference. A partner's reference conflict is no
	// rejection and never recorded as one (refusedRequest).
	TransferRejected TransferStatus = "REJECTED"
)

// TransferRecord is one outbound transfer in the gateway's register (gateway.transfers).
type TransferRecord struct {
	Partner        string
	Reference      string
	TenantID       string
	Domain         string
	AmountSantim   int64
	Currency       string
	FromAccount    string
	ToAccount      string
	BatchReference string // "" unless the transfer is an item of a bulk disbursement
	// Status is INITIATED, REJECTED, PENDING, SETTLED or FAILED.
	Status            TransferStatus
	PartnerTransferID string // the partner's id, once it accepted the transfer
	FailureCode       string // the partner's code when FAILED or REJECTED
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

// sameBody: the fields a reference is bound to for good.
func (r TransferRecord) sameBody(o TransferRecord) bool {
	return r.Partner == o.Partner && r.Reference == o.Reference && r.TenantID == o.TenantID && r.Domain == o.Domain &&
		r.AmountSantim == o.AmountSantim && r.Currency == o.Currency && r.FromAccount == o.FromAccount &&
		r.ToAccount == o.ToAccount && r.BatchReference == o.BatchReference
}

const transferColumns = `partner, reference, tenant_id, domain, amount_santim, currency, from_account, to_account,
	coalesce(batch_reference, ''), status, coalesce(partner_transfer_id, ''), coalesce(failure_code, ''), created_at, updated_at`

func scanTransfer(row pgx.Row) (TransferRecord, error) {
	var r TransferRecord
	var st string
	err := row.Scan(&r.Partner, &r.Reference, &r.TenantID, &r.Domain, &r.AmountSantim, &r.Currency, &r.FromAccount,
		&r.ToAccount, &r.BatchReference, &st, &r.PartnerTransferID, &r.FailureCode, &r.CreatedAt, &r.UpdatedAt)
	r.Status = TransferStatus(st)
	return r, err
}

// FindTransfer reads the transfer partner knows by reference, inside q, a transaction the caller
// opened. Row-level security decides what it sees: a tenant transaction (db.InTenantTx) sees that
// tenant's transfers; the bank-callback handler, which must learn the tenant from the transfer,
// calls it inside a cross-tenant transaction of the platform role (internal/platform/crosstenant.Tx), the
// one role whose policy on gateway.transfers can see every tenant. It only reads.
//
// Errors: ErrTransferNotFound when no row (that q may see) has the reference.
func FindTransfer(ctx context.Context, q pgx.Tx, partner, reference string) (TransferRecord, error) {
	r, err := scanTransfer(q.QueryRow(ctx, `SELECT `+transferColumns+` FROM gateway.transfers WHERE partner = $1 AND reference = $2`,
		partner, reference))
	if errors.Is(err, pgx.ErrNoRows) {
		return TransferRecord{}, &Error{Reason: ReasonTransferNotFound, Message: "no transfer of partner " + partner + " has that reference"}
	}
	if err != nil {
		return TransferRecord{}, fmt.Errorf("gateway.find_transfer: %w", err)
	}
	return r, nil
}

// RecordTransfers writes transfers of one tenant to the register before they are sent, all or
// none. A reference already recorded with the same body is left as it is (a retry, or a caller
// racing itself); one recorded with another body, or for another tenant, is ErrReferenceReused
// and nothing is written. So is a reference the partner refused (REJECTED) unless the request is
// the refused one again: the same transfer, or the same batch with exactly the items it was
// refused with (every one REJECTED, none missing, none added); what the gateway answers that
// repeat, without sending it, is the recorded rejection (recordedRejection).
func (s *Store) RecordTransfers(ctx context.Context, tenantID string, recs []TransferRecord) error {
	_, err := s.recordTransfers(ctx, tenantID, recs)
	return err
}

// recordTransfers is RecordTransfers, and returns the register's row of every transfer as it
// stands once recorded (in partner and reference order).
func (s *Store) recordTransfers(ctx context.Context, tenantID string, recs []TransferRecord) ([]TransferRecord, error) {
	// One order for every writer: two batches sharing references then wait for each other
	// instead of deadlocking.
	recs = slices.Clone(recs)
	slices.SortFunc(recs, func(a, b TransferRecord) int {
		return strings.Compare(a.Partner+"\x00"+a.Reference, b.Partner+"\x00"+b.Reference)
	})
	n := len(recs)
	partners, refs, domains, ccys, froms, tos, batches := make([]string, n), make([]string, n), make([]string, n),
		make([]string, n), make([]string, n), make([]string, n), make([]*string, n)
	amounts := make([]int64, n)
	for i, r := range recs {
		if r.TenantID != tenantID {
			return nil, fmt.Errorf("gateway.record_transfers: transfer %s is of tenant %q, not %q", r.Reference, r.TenantID, tenantID)
		}
		partners[i], refs[i], domains[i], ccys[i], froms[i], tos[i] = r.Partner, r.Reference, r.Domain, r.Currency, r.FromAccount, r.ToAccount
		amounts[i] = r.AmountSantim
		if r.BatchReference != "" {
			batches[i] = &recs[i].BatchReference
		}
	}
	var registered []TransferRecord
	err := db.InTenantTx(ctx, s.pool, tenantID, func(tx pgx.Tx) error {
		// The insert and the read of every reference in one round trip; the transaction stays
		// open until the read is checked, so a refused batch writes nothing.
		var stored []TransferRecord
		b := &pgx.Batch{}
		b.Queue(`
			INSERT INTO gateway.transfers (partner, reference, tenant_id, domain, amount_santim, currency, from_account, to_account, batch_reference)
			SELECT p, r, $1, d, a, c, f, t, b
			FROM unnest($2::text[], $3::text[], $4::text[], $5::numeric[], $6::text[], $7::text[], $8::text[], $9::text[])
			     WITH ORDINALITY AS v(p, r, d, a, c, f, t, b, i)
			ORDER BY i
			ON CONFLICT (partner, reference) DO NOTHING`,
			tenantID, partners, refs, domains, amounts, ccys, froms, tos, batches)
		// Every reference now has a row; the ones this tenant cannot see belong to another. One
		// scan narrowed by the batch's partners and references, the pairs matched below: as a
		// join on (partner, reference), statistics that lag a burst of inserts (a payroll's
		// 10,000 transfers) made the planner walk every transfer of the tenant per reference
		// (3 s for a 500-item batch).
		b.Queue(`SELECT `+transferColumns+`
			FROM gateway.transfers t WHERE t.partner = ANY($1::text[]) AND t.reference = ANY($2::text[])`,
			slices.Compact(slices.Sorted(slices.Values(partners))), refs).Query(func(rows pgx.Rows) error {
			var err error
			stored, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (TransferRecord, error) { return scanTransfer(r) })
			return err
		})
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		byRef := make(map[[2]string]TransferRecord, len(stored))
		for _, r := range stored {
			byRef[[2]string{r.Partner, r.Reference}] = r
		}
		registered = make([]TransferRecord, len(recs))
		rejected := 0
		for i, want := range recs {
			got, ok := byRef[[2]string{want.Partner, want.Reference}]
			if !ok || !got.sameBody(want) {
				return fmt.Errorf("%w: %s at %s", ErrReferenceReused, want.Reference, want.Partner)
			}
			registered[i] = got
			if got.Status == TransferRejected {
				rejected++
			}
		}
		if rejected == 0 {
			return nil
		}
		// A refused reference leaves again in no other request: the partner wrote nothing for
		// it, so it would take it as new and pay a transfer that was answered as refused.
		if rejected < len(recs) {
			return fmt.Errorf("%w: a transfer of the request was refused by the partner in another request", ErrReferenceReused)
		}
		return sameRefusedBatches(ctx, tx, recs)
	})
	if err != nil {
		return nil, fmt.Errorf("gateway.record_transfers: %w", err)
	}
	return registered, nil
}

// sameRefusedBatches checks that the batches of recs, whose every transfer the register holds as
// REJECTED, are the batches that were refused: the register holds no other item of any of them
// (a batch is refused whole, so its items were recorded and refused together). A subset of a
// refused batch under its reference is another request, and ErrReferenceReused.
func sameRefusedBatches(ctx context.Context, tx pgx.Tx, recs []TransferRecord) error {
	items := map[[2]string]int{}
	for _, r := range recs {
		if r.BatchReference != "" {
			items[[2]string{r.Partner, r.BatchReference}]++
		}
	}
	for k, n := range items {
		var held int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM gateway.transfers WHERE partner = $1 AND batch_reference = $2`,
			k[0], k[1]).Scan(&held); err != nil {
			return err
		}
		if held != n {
			return fmt.Errorf("%w: batch %s at %s was refused by the partner with other items", ErrReferenceReused, k[1], k[0])
		}
	}
	return nil
}

// TransferUpdate is what a partner's answer says about one recorded transfer.
type TransferUpdate struct {
	Partner, Reference string
	Status             TransferStatus
	PartnerTransferID  string
	FailureCode        string
}

// UpdateTransfers moves recorded transfers of one tenant to the status their partner reported.
// A status that does not follow the recorded one (gateway.transfer_status_follows: an answer
// older than one already applied) and a reference the register does not hold are skipped; it
// reports how many rows changed.
func (s *Store) UpdateTransfers(ctx context.Context, tenantID string, ups []TransferUpdate) (int, error) {
	ups = slices.Clone(ups)
	slices.SortFunc(ups, func(a, b TransferUpdate) int {
		return strings.Compare(a.Partner+"\x00"+a.Reference, b.Partner+"\x00"+b.Reference)
	})
	n := len(ups)
	partners, refs, statuses, ids, codes := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	for i, u := range ups {
		partners[i], refs[i], statuses[i], ids[i], codes[i] = u.Partner, u.Reference, string(u.Status), u.PartnerTransferID, u.FailureCode
	}
	var changed int64
	// One round trip, one implicit transaction.
	err := db.InTenantBatch(ctx, s.pool, tenantID, func(b *pgx.Batch) {
		b.Queue(`
			-- Rows are locked in id order, so concurrent updates of overlapping transfers wait for
			-- each other instead of deadlocking; a row another update has just moved is checked
			-- again and skipped when nothing is left to do. The rows are found by their partners
			-- and references as a restriction (= ANY) before the pairs are matched, the locked
			-- rows are read once (MATERIALIZED) and the update is narrowed to their ids (t.id =
			-- ANY): joined only against the list, and with statistics that lag a burst of inserts
			-- (a payroll's 10,000 transfers in a minute), the planner walked every transfer of
			-- the tenant against every locked row (0.5 to 1 s for a 500-item callback batch; a
			-- one-transfer answer read all the tenant's transfers, twice).
			WITH x AS MATERIALIZED (
			    SELECT c.id, v.s, v.pid, v.code
			    FROM gateway.transfers c
			    JOIN unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS v(p, r, s, pid, code)
			      ON c.partner = v.p AND c.reference = v.r
			    WHERE c.partner = ANY($1::text[]) AND c.reference = ANY($2::text[])
			      AND gateway.transfer_status_follows(c.status, v.s)
			      AND (c.status <> v.s OR (c.partner_transfer_id IS NULL AND v.pid <> ''))
			    ORDER BY c.id
			    FOR UPDATE OF c
			)
			UPDATE gateway.transfers t SET status = x.s,
			    partner_transfer_id = coalesce(NULLIF(x.pid, ''), t.partner_transfer_id),
			    failure_code = CASE WHEN x.s IN ('FAILED', 'REJECTED') THEN coalesce(NULLIF(x.code, ''), t.failure_code) END,
			    updated_at = now()
			FROM x
			WHERE t.id = ANY(ARRAY(SELECT id FROM x)) AND t.id = x.id`,
			partners, refs, statuses, ids, codes).Exec(func(tag pgconn.CommandTag) error {
			changed = tag.RowsAffected()
			return nil
		})
	})
	if err != nil {
		return 0, fmt.Errorf("gateway.update_transfers: %w", err)
	}
	return int(changed), nil
}

// RecordSettlement records a partner callback's final answer (SETTLED or FAILED) about one
// transfer of tenantID, as the bank-callback path learns it (internal/bankwebhook calls it for
// every receipt of a callback it matched to the transfer). Like every answer, it applies once
// and only forward: a repeat, or an answer older than the one recorded, changes nothing.
func (s *Store) RecordSettlement(ctx context.Context, tenantID, partner, reference, status, partnerTransferID, failureCode string) error {
	st := TransferStatus(status)
	if st != TransferSettled && st != TransferFailed {
		return fmt.Errorf("gateway.record_settlement: status %q is not a settlement (SETTLED or FAILED)", status)
	}
	_, err := s.UpdateTransfers(ctx, tenantID, []TransferUpdate{{Partner: partner, Reference: reference, Status: st,
		PartnerTransferID: partnerTransferID, FailureCode: failureCode}})
	return err
}
