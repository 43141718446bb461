package outbox

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/money"
)

// TransferSettled is one bank transfer the partner confirmed SETTLED, as the spec's
// <domain>.bank_transfer_settled.v1 ("emitted by: settlement confirmation") reports it: one event
// per settled transfer, whatever the domain, in one payload shape, so a consumer of settlements
// (a statement matcher, a finance export) reads every domain's the same way.
//
// It is written by the record step that records the settlement, in that step's transaction, and
// only on the path where the step changed the record (PENDING → SETTLED, DISBURSING → PAID, …):
// the event commits with the change, and a step run again (activities run at least once) writes
// nothing twice. A FAILED transfer, or money that moved without a transfer (a payroll entry of
// net 0), has none.
//
// The payload's keys: domain, kind, subjectId, amountSantim, transferId, partnerReference (when
// known), and the domain's own ids (Keys) beside them, so a consumer of a domain's other events
// finds its record under the key it already knows (equb's contributionId, payroll's entryId).
type TransferSettled struct {
	// Domain is the money flow, upper case, as the partner transfer carries it (money.ValidDomain:
	// EWA, LOAN, PAYROLL, …). The event's type is TransferSettledType(Domain).
	Domain string
	// Kind is what the transfer was in the domain, lower case: disbursement, remittance, entry,
	// contribution, payout, …
	Kind string
	// SubjectID is the id of the record the transfer settled (the request, loan, entry, …), under
	// the payload's stable key subjectId.
	SubjectID string
	// AmountSantim is what the transfer moved (integer santim, more than 0).
	AmountSantim int64
	// TransferID is the partner's transfer id ("" when the settlement carried none).
	TransferID string
	// PartnerReference is our reference of the transfer at the partner, "" when the record step
	// does not know it (the key is then left out).
	PartnerReference string
	// Keys are the domain's own ids of the subject and what it belongs to ("loanId", "runId", …),
	// added to the payload as they are. A key may not be one of the shape's own.
	Keys map[string]any
}

// transferSettledEvent is the event name every domain's settlement event shares.
const transferSettledEvent = "bank_transfer_settled"

// TransferSettledType is the event type of domain's settled transfers:
// strings.ToLower(domain) + ".bank_transfer_settled.v1" (ewa.bank_transfer_settled.v1). Each
// domain declares it as a constant beside its other events; that constant must equal this.
func TransferSettledType(domain string) string {
	return strings.ToLower(domain) + "." + transferSettledEvent + ".v1"
}

// Type is s's event type (TransferSettledType of its domain).
func (s TransferSettled) Type() string { return TransferSettledType(s.Domain) }

// payload checks s and gives its event payload. A bad s is the caller's bug, refused before
// anything is written: ErrInvalidPayload.
func (s TransferSettled) payload() (map[string]any, error) {
	switch {
	case !money.ValidDomain(s.Domain):
		return nil, fmt.Errorf("%w: transfer settled: domain %q is not one of %s", ErrInvalidPayload, s.Domain, money.DomainList())
	case s.Kind == "" || strings.ToLower(s.Kind) != s.Kind:
		return nil, fmt.Errorf("%w: transfer settled: kind %q must be lower case and not empty", ErrInvalidPayload, s.Kind)
	case s.SubjectID == "":
		return nil, fmt.Errorf("%w: transfer settled: no subject id", ErrInvalidPayload)
	case s.AmountSantim <= 0:
		return nil, fmt.Errorf("%w: transfer settled: amount %d santim is not positive", ErrInvalidPayload, s.AmountSantim)
	}
	p := map[string]any{"domain": s.Domain, "kind": s.Kind, "subjectId": s.SubjectID, "amountSantim": s.AmountSantim,
		"transferId": s.TransferID}
	if s.PartnerReference != "" {
		p["partnerReference"] = s.PartnerReference
	}
	for k, v := range s.Keys {
		if _, own := p[k]; own || k == "partnerReference" {
			return nil, fmt.Errorf("%w: transfer settled: key %q is the shape's own", ErrInvalidPayload, k)
		}
		p[k] = v
	}
	return p, nil
}

// WriteTransferSettled records s's <domain>.bank_transfer_settled.v1 in tx, the record step's
// transaction (as Write).
//
// Errors: those of Write; ErrInvalidPayload for an s that is not a settled transfer (an unknown
// domain, no kind or subject, an amount that is not positive, a key of the shape's own).
func WriteTransferSettled(ctx context.Context, tx db.Writer, s TransferSettled) error {
	p, err := s.payload()
	if err != nil {
		return err
	}
	_, err = Write(ctx, tx, s.Type(), p)
	return err
}

// QueueTransferSettled is WriteTransferSettled as one statement of the caller's batch (as
// Queue), for a record step that sends its audit row and events in one round trip.
//
// Errors: those of WriteTransferSettled, before anything is queued.
func QueueTransferSettled(ctx context.Context, b *pgx.Batch, s TransferSettled) error {
	p, err := s.payload()
	if err != nil {
		return err
	}
	return Queue(ctx, b, s.Type(), p, nil)
}

// WriteTransfersSettled records one <domain>.bank_transfer_settled.v1 per element of ss in one
// statement (WriteManyIn): a record step that settles a batch of transfers (a payroll run's 500
// entries) writes their events in one round trip. Every element must be of one domain; every one
// is checked before anything is written, and one bad element writes none.
//
// Errors: those of WriteTransferSettled; ErrInvalidPayload for elements of more than one domain.
func WriteTransfersSettled(ctx context.Context, tx db.Writer, ss []TransferSettled) error {
	if len(ss) == 0 {
		return nil
	}
	payloads := make([]any, len(ss))
	for i, s := range ss {
		if s.Domain != ss[0].Domain {
			return fmt.Errorf("%w: transfers settled of domains %s and %s in one write", ErrInvalidPayload, ss[0].Domain, s.Domain)
		}
		p, err := s.payload()
		if err != nil {
			return err
		}
		payloads[i] = p
	}
	return WriteManyIn(ctx, tx, ss[0].Type(), payloads)
}
